/** The builders' shared argument and environment reading. */
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../harness/test-helpers/files.ts';
import { adapterArgs, parsePositiveInt, parseSize } from './build-args.ts';
import { errorOf } from './test-helpers/build.ts';

const FLAGS = ['model', 'size', 'n', 'url', 'mode', 'list', 'prices'] as const;

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

  describe('prices(): a JSON file of prices per model', () => {
    let tmp: Awaited<ReturnType<typeof tempOutputDir>>;
    const file = async (name: string, text: string) => {
      const p = join(tmp.dir, name);
      await writeFile(p, text);
      return p;
    };
    beforeAll(async () => {
      tmp = await tempOutputDir('vncua-prices-');
    });
    afterAll(async () => {
      await tmp.remove();
    });

    it('reads the file given by the flag (relative to the working directory) or the variable', async () => {
      const good = await file('good.json', JSON.stringify({ 'my-vlm': { input: 0.2, output: 0.8 }, 'gpt-4o': { input: 1, output: 2, cachedInput: 0.5 } }));
      expect(adapterArgs('demo', ['--prices', relative(process.cwd(), good)], FLAGS, {}).prices('prices', 'P')).toEqual({
        'my-vlm': { input: 0.2, output: 0.8 },
        'gpt-4o': { input: 1, output: 2, cachedInput: 0.5 },
      });
      expect(adapterArgs('demo', [], FLAGS, { P: good }).prices('prices', 'P')).toMatchObject({ 'my-vlm': { input: 0.2 } });
      expect(adapterArgs('demo', [], FLAGS, {}).prices('prices', 'P')).toBeUndefined();
    });

    it('a missing file, a file that is not JSON or holds bad prices is CLI_ERR_BAD_ARGS naming --prices (or the variable) and what is wrong', async () => {
      const cases: Array<[string, RegExp]> = [
        [join(tmp.dir, 'none.json'), /^demo agent: --prices cannot be read \(ENOENT: .*none\.json\); give a JSON file of prices per model\.$/],
        [await file('text.json', 'input: 3'), /^demo agent: --prices is not JSON \(.*\); give \{ "MODEL": \{ "input": N, "output": N \} \} in USD per 1M tokens\.$/],
        [
          await file('neg.json', '{"m": {"input": -3, "output": 1}}'),
          /^demo agent: --prices holds bad prices: \["m"\]\.input must be a number >= 0 \(USD per 1M tokens\), not -3\.$/,
        ],
        [await file('list.json', '[]'), /--prices holds bad prices: must be an object of model names/],
        [await file('key.json', '{"m": {"input": 1, "output": 1, "cache_read": 1}}'), /unknown key "cache_read"/],
        [tmp.dir, /--prices cannot be read \(EISDIR/],
      ];
      for (const [path, message] of cases) {
        const e = errorOf(() => adapterArgs('demo', ['--prices', path], FLAGS, {}).prices('prices'));
        expect(e?.code, path).toBe('CLI_ERR_BAD_ARGS');
        expect(e?.details, path).toEqual({ argument: '--prices', value: path });
        expect(e?.message, path).toMatch(message);
      }
      const env = errorOf(() => adapterArgs('demo', [], FLAGS, { VNCUA_PRICES: join(tmp.dir, 'none.json') }).prices('prices', 'VNCUA_PRICES'));
      expect(env?.details).toMatchObject({ argument: 'VNCUA_PRICES' });
    });
  });
});
