/** The builders' shared argument and environment reading. */
import { describe, expect, it } from 'vitest';
import { adapterArgs, parsePositiveInt, parseSize } from './build-args.ts';
import { errorOf } from './test-helpers/build.ts';

const FLAGS = ['model', 'size', 'n', 'url', 'mode', 'list'] as const;

describe('adapterArgs', () => {
  it('a flag wins over the environment; the first non-empty variable is the fallback; empty variables are unset', () => {
    const a = adapterArgs('demo', ['--model', 'flag'], FLAGS, { A: 'env-a', B: 'env-b', E: '' });
    expect(a.get('model', 'A')).toEqual({ value: 'flag', from: '--model' });
    expect(a.get('size', 'E', 'B', 'A')).toEqual({ value: 'env-b', from: 'B' });
    expect(a.get('n', 'E')).toBeUndefined();
    expect(a.env('E', 'A')).toEqual({ value: 'env-a', from: 'A' });
    expect(adapterArgs('demo', undefined, FLAGS, {}).values).toEqual({});
  });

  it('parses sizes, whole numbers, URLs, choices and lists', () => {
    const a = adapterArgs('demo', ['--size', '1024x640', '--n=12', '--url', 'https://x.example/v1', '--mode', 'b', '--list', ' a, ,b '], FLAGS, {});
    expect(a.size('size')).toEqual({ width: 1024, height: 640 });
    expect(a.positiveInt('n')).toBe(12);
    expect(a.url('url')).toBe('https://x.example/v1');
    expect(a.oneOf(['a', 'b'], 'mode')).toBe('b');
    expect(a.list('list')).toEqual(['a', 'b']);
    expect(a.size('model')).toBeUndefined();
    expect(parseSize('0x10')).toBeNull();
    expect(parseSize('10x')).toBeNull();
    expect(parsePositiveInt('1e3')).toBeNull();
    expect(parsePositiveInt('0')).toBeNull();
    expect(parsePositiveInt('2.5')).toBeNull();
  });

  it('bad arguments are CLI_ERR_BAD_ARGS naming the adapter and the flag (or variable)', () => {
    const cases: Array<[string[], (a: ReturnType<typeof adapterArgs<(typeof FLAGS)[number]>>) => unknown, string]> = [
      [['--bogus', '1'], () => 0, '--bogus'],
      [['--model'], () => 0, '--model'],
      [['extra'], () => 0, 'extra'],
      [['--model='], (a) => a.string('model'), '--model'],
      [['--size', '10'], (a) => a.size('size'), '--size'],
      [['--n', '-1'], (a) => a.positiveInt('n'), '--n'],
      [['--url', 'ftp://x'], (a) => a.url('url'), '--url'],
      [['--mode', 'c'], (a) => a.oneOf(['a', 'b'], 'mode'), '--mode'],
    ];
    for (const [args, read, argument] of cases) {
      const e = errorOf(() => read(adapterArgs('demo', args, FLAGS, {})));
      expect(e?.code, args.join(' ')).toBe('CLI_ERR_BAD_ARGS');
      expect(e?.details?.argument, args.join(' ')).toBe(argument);
      expect(e?.message).toMatch(/^demo agent: /);
    }
    const e = errorOf(() => adapterArgs('demo', [], FLAGS, { SIZE: 'huge' }).size('size', 'SIZE'));
    expect(e?.details).toEqual({ argument: 'SIZE', value: 'huge' });
    expect(errorOf(() => adapterArgs('demo', ['--bogus'], FLAGS, {}))?.message).toContain('--model, --size');
  });

  it('missing() names the variables and the flag', () => {
    const a = adapterArgs('demo', [], FLAGS, {});
    const e = a.missing('model', 'model', ['DEMO_MODEL'], 'the model name');
    expect(e.code).toBe('CLI_ERR_BAD_ARGS');
    expect(e.message).toBe('demo agent: no model: set DEMO_MODEL or pass `-- --model …` (the model name).');
    expect(e.details).toEqual({ argument: '--model', field: 'model', env: ['DEMO_MODEL'], flag: '--model' });
    const k = a.missing('API key', null, ['DEMO_KEY'], 'keys come from the environment only');
    expect(k.message).toBe('demo agent: no API key: set DEMO_KEY (keys come from the environment only).');
    expect(k.details).toEqual({ argument: 'DEMO_KEY', field: 'API key', env: ['DEMO_KEY'] });
  });
});
