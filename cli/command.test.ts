/**
 * The option tables every vncua command parses its arguments with (node:util parseArgs, strict) and
 * generates its --help from: --flag=value, repeatable options, `--` passing the rest through untouched,
 * refused flags, and CLI_ERR_BAD_ARGS naming the argument.
 */
import { describe, expect, it } from 'vitest';
import { isVncuaError, VncuaError } from '../harness/errors.ts';
import { parseCommandLine, usageText, type CommandSpec } from './command.ts';
import { parseEvalArgs, parseListen } from './eval.ts';
import { parseRunArgs } from './run.ts';

const SPEC = {
  command: 'try',
  positional: { name: 'DIR', description: 'a directory' },
  options: {
    size: { type: 'string', multiple: true, value: 'WxH', description: 'screen size' },
    out: { type: 'string', value: 'DIR', default: 'runs', description: 'where' },
    name: { type: 'string', value: 'NAME', required: 'a name', description: 'the name' },
    video: { type: 'boolean', description: 'also a video' },
  },
  refused: { secret: () => new VncuaError('DESKTOP_ERR_BAD_PASSWORD', 'no secrets on the command line') },
} as const satisfies CommandSpec;

/** The error parseCommandLine throws: [code, argument, message]. */
function failure(spec: CommandSpec, argv: string[]): [string, unknown, string] | undefined {
  try {
    parseCommandLine(spec, argv);
  } catch (e) {
    if (!isVncuaError(e)) throw e;
    return [e.code, (e.details as { argument?: unknown } | undefined)?.argument, e.message];
  }
  return undefined;
}

describe('parseCommandLine', () => {
  it('--flag value and --flag=value, repeatable options in order, defaults, the positional', () => {
    expect(parseCommandLine(SPEC, ['d', '--name=n', '--size', '1x2', '--size=3x4', '--video'])).toEqual({
      values: { size: ['1x2', '3x4'], out: 'runs', name: 'n', video: true },
      positional: 'd',
      rest: [],
    });
    expect(parseCommandLine(SPEC, ['--name', 'n', 'd', '--out=-dash'])?.values).toEqual({ size: [], out: '-dash', name: 'n', video: false });
  });

  it('-h / --help anywhere before --: undefined', () => {
    expect(parseCommandLine(SPEC, ['--bogus', '-h'])).toBeUndefined();
    expect(parseCommandLine(SPEC, ['--help'])).toBeUndefined();
    expect(failure({ ...SPEC, rest: 'x' }, ['d', '--', '--help'])?.[1]).toBe('--name');
  });

  it('strict: unknown flags, missing values, values of flags that take none, positionals: CLI_ERR_BAD_ARGS naming them', () => {
    const ok = ['d', '--name', 'n'];
    expect(failure(SPEC, [...ok, '--frobnicate=1'])).toEqual(['CLI_ERR_BAD_ARGS', '--frobnicate', 'unknown argument "--frobnicate".']);
    expect(failure(SPEC, [...ok, '-x'])?.slice(0, 2)).toEqual(['CLI_ERR_BAD_ARGS', '-x']);
    expect(failure(SPEC, [...ok, '--out'])).toEqual(['CLI_ERR_BAD_ARGS', '--out', '--out needs a value.']);
    expect(failure(SPEC, [...ok, '--out', '--video'])?.slice(0, 2)).toEqual(['CLI_ERR_BAD_ARGS', '--out']);
    expect(failure(SPEC, [...ok, '--video=yes'])).toEqual(['CLI_ERR_BAD_ARGS', '--video', '--video takes no value.']);
    expect(failure(SPEC, ['d'])).toEqual(['CLI_ERR_BAD_ARGS', '--name', '--name NAME is required (a name).']);
    expect(failure(SPEC, ['--name', 'n'])?.slice(0, 2)).toEqual(['CLI_ERR_BAD_ARGS', 'DIR']);
    expect(failure(SPEC, [...ok, 'e'])?.slice(0, 2)).toEqual(['CLI_ERR_BAD_ARGS', 'e']);
    expect(failure({ ...SPEC, positional: undefined }, ['--name', 'n', 'e'])).toEqual(['CLI_ERR_BAD_ARGS', 'e', 'unknown argument "e".']);
  });

  it('refused flags come first, with their own error, and never repeat the value', () => {
    for (const argv of [['--secret=hunter2'], ['--secret', 'hunter2', '--help'], ['--bogus', '--secret']]) {
      const f = failure(SPEC, argv);
      expect(f?.[0]).toBe('DESKTOP_ERR_BAD_PASSWORD');
      expect(f?.[2]).not.toContain('hunter2');
    }
  });

  it('the arguments after -- go through untouched (flags, --help, a refused flag), only when the spec takes them', () => {
    const spec = { ...SPEC, rest: 'for the agent' };
    expect(parseCommandLine(spec, ['d', '--name', 'n', '--', '--model', 'X', '--help', '--secret=s', 'd'])?.rest).toEqual(['--model', 'X', '--help', '--secret=s', 'd']);
    expect(parseCommandLine(spec, ['d', '--name', 'n'])?.rest).toEqual([]);
    // Without a rest, -- only ends the options: what follows is positional.
    expect(parseCommandLine(SPEC, ['--name', 'n', '--', '-d'])?.positional).toBe('-d');
  });
});

describe('usageText: the --help comes from the same table', () => {
  it('a synopsis and one line per option, with placeholders, repeatable marks and defaults', () => {
    const text = usageText({ ...SPEC, rest: 'for the agent', notes: 'exit code: 0\n' });
    expect(text.split('\n')[0]).toBe('usage: vncua try DIR [--size WxH ...] [--out DIR] --name NAME [--video] [-- ARGS...]');
    expect(text).toMatch(/^ {2}--size WxH \.\.\. +screen size$/m);
    expect(text).toMatch(/^ {2}--out DIR +where \(default runs\)$/m);
    expect(text).toMatch(/^ {2}-- ARGS\.\.\. +for the agent$/m);
    expect(text).toContain('--flag VALUE or --flag=VALUE');
    expect(text.endsWith('exit code: 0\n')).toBe(true);
    expect(text).not.toContain('secret');
  });
});

describe('the commands on it', () => {
  it('eval: --flag=value, repeated --resolution and --only, the adapter options after -- untouched', () => {
    const o = parseEvalArgs([
      '--tasks=t.json',
      '--agent=chat',
      '--resolution=1280x800',
      '--resolution',
      '800x600',
      '--only=a,b',
      '--only',
      'c',
      '--workers=2',
      '--',
      '--model',
      'X',
      '--base-url=http://h/v1',
    ]);
    expect(o).toMatchObject({
      tasks: 't.json',
      agent: 'chat',
      resolutions: [
        { width: 1280, height: 800 },
        { width: 800, height: 600 },
      ],
      only: ['a', 'b', 'c'],
      workers: 2,
      args: ['--model', 'X', '--base-url=http://h/v1'],
    });
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--score', '--no-score'])).toThrow(/contradict/);
    expect(parseEvalArgs(['--tasks=t', '--agent=a', '--pool', '2'])).toMatchObject({ pool: 2 });
    expect(parseEvalArgs(['--tasks=t', '--agent=a'])).not.toHaveProperty('pool');
    expect(parseEvalArgs(['--tasks=t', '--agent=a', '--no-live'])).toMatchObject({ live: false });
    expect(parseEvalArgs(['--tasks=t', '--agent=a'])).not.toHaveProperty('live');
    expect(parseRunArgs(['--agent=scripted', '--no-live'], {})).toMatchObject({ live: false });
    expect(parseRunArgs(['--agent=scripted'], {})).not.toHaveProperty('live');
    expect(parseEvalArgs(['--tasks=t', '--agent=a', '--max-cost', '0.25', '--max-suite-cost=3', '--needs-human=ask'])).toMatchObject({
      maxCostUsd: 0.25,
      maxSuiteCostUsd: 3,
      needsHuman: 'ask',
    });
    expect(parseRunArgs(['--agent=scripted', '--max-cost=.5', '--needs-human', 'end'], {})).toMatchObject({ maxCostUsd: 0.5, needsHuman: 'end' });
    for (const bad of ['0', '-1', 'abc', '1e3', '']) {
      expect(() => parseRunArgs(['--agent=scripted', `--max-cost=${bad}`], {})).toThrow(
        expect.objectContaining({ code: 'CLI_ERR_BAD_ARGS', message: expect.stringContaining('--max-cost') }),
      );
    }
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--max-suite-cost=free'])).toThrow(/--max-suite-cost: expected a positive amount of USD/);
    expect(() => parseRunArgs(['--agent=scripted', '--needs-human=wait'], {})).toThrow(/--needs-human must be end or ask/);
    expect(() => parseRunArgs(['--agent=scripted', '--max-suite-cost=1'], {})).toThrow(expect.objectContaining({ code: 'CLI_ERR_BAD_ARGS' }));
    // --rate-limit: the rules, normalised; a bad one is QUEUE_ERR_BAD_RATE_LIMIT (bad input, exit 2).
    expect(parseEvalArgs(['--tasks=t', '--agent=a', '--rate-limit', '60/min, 2/s:gpt-5'])).toMatchObject({ rateLimits: ['60/min', '2/s:gpt-5'] });
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--rate-limit', '60/day'])).toThrow(expect.objectContaining({ code: 'QUEUE_ERR_BAD_RATE_LIMIT' }));
    // --results-listen: HOST:PORT, only with --queue.
    expect(parseEvalArgs(['--tasks=t', '--agent=a', '--queue=redis://h:6379/0', '--results-listen', '0.0.0.0:7070'])).toMatchObject({
      resultsListen: { host: '0.0.0.0', port: 7070 },
    });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    for (const bad of ['7070', 'h:', 'h:99999', ':80', 'a b:1'])
      expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--queue=redis://h:6379/0', `--results-listen=${bad}`]), bad).toThrow(
        expect.objectContaining({ code: 'CLI_ERR_BAD_ARGS', message: expect.stringContaining('--results-listen') }),
      );
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--results-listen=127.0.0.1:0'])).toThrow(/--results-listen .* needs --queue/);
    // --results-tls-cert/--results-tls-key: both, and only with --results-listen.
    const q = ['--tasks=t', '--agent=a', '--queue=redis://h:6379/0'];
    expect(parseEvalArgs([...q, '--results-listen=127.0.0.1:0', '--results-tls-cert=c.pem', '--results-tls-key=k.pem'])).toMatchObject({
      resultsTls: { cert: 'c.pem', key: 'k.pem' },
    });
    expect(() => parseEvalArgs([...q, '--results-listen=127.0.0.1:0', '--results-tls-cert=c.pem'])).toThrow(/give both --results-tls-cert FILE and --results-tls-key FILE/);
    expect(() => parseEvalArgs([...q, '--results-tls-cert=c.pem', '--results-tls-key=k.pem'])).toThrow(/need --results-listen/);
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--pool=-1'])).toThrow(/--pool/);
    expect(() => parseEvalArgs(['--tasks=t', '--agent=a', '--provider=remote', '--endpoints=e.json', '--pool=2'])).toThrow(/--pool goes with/);
  });

  it('run: --flag=value; --password refused in either form, before anything else', () => {
    expect(parseRunArgs(['--agent=scripted', '--max-steps=3', '--url=http://x/', '--', '--y'], {})).toMatchObject({
      agent: 'scripted',
      maxSteps: 3,
      url: 'http://x/',
      args: ['--y'],
    });
    for (const argv of [['--password=pw-secret', '--agent', 'a'], ['--agent', 'a', '--password', 'pw-secret'], ['--password']]) {
      expect(() => parseRunArgs(argv, {})).toThrow(expect.objectContaining({ code: 'DESKTOP_ERR_BAD_PASSWORD' }));
    }
  });
});
