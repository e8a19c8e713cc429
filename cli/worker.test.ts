/** `vncua worker` arguments, and the shard of a Kubernetes Indexed Job's pod from its environment (QUEUE_ERR_SHARD_ENV). */
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { parseWorkerArgs, shardFromEnv } from './worker.ts';

const argError = (argv: string[]): string | undefined => {
  try {
    parseWorkerArgs(argv);
  } catch (e) {
    if (isVncuaError(e, 'CLI_ERR_BAD_ARGS')) return (e.details as { argument?: string }).argument;
    throw e;
  }
  return undefined;
};

describe('vncua worker arguments', () => {
  it('parses every option', () => {
    expect(
      parseWorkerArgs([
        '--queue',
        'redis://127.0.0.1:6379/0',
        '--concurrency',
        '3',
        '--provider',
        'docker',
        '--pool',
        '2',
        '--tasks',
        't.json',
        '--stall-timeout',
        '6',
        '--grace',
        '0.5',
        '--name',
        'w1',
      ]),
    ).toEqual({ queue: 'redis://127.0.0.1:6379/0', concurrency: 3, provider: 'docker', pool: 2, tasks: 't.json', stallTimeoutMs: 6000, graceMs: 500, name: 'w1' });
    expect(parseWorkerArgs(['--queue', 'redis://h:1/0'])).toEqual({ queue: 'redis://h:1/0', concurrency: 1, provider: 'local' });
    expect(parseWorkerArgs(['--help'])).toBeUndefined();
  });

  it('names the bad argument', () => {
    const q = ['--queue', 'redis://h:1/0'];
    expect(argError([])).toBe('--queue');
    expect(argError([...q, '--concurrency', '0'])).toBe('--concurrency');
    expect(argError([...q, '--provider', 'remote'])).toBe('--provider');
    expect(argError([...q, '--stall-timeout', '-1'])).toBe('--stall-timeout');
    expect(argError([...q, '--grace', 'soon'])).toBe('--grace');
  });
});

describe('shardFromEnv', () => {
  it('JOB_COMPLETION_INDEX i of JOB_COMPLETIONS n is shard i+1/n', () => {
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '0', JOB_COMPLETIONS: '4' })).toBe('1/4');
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '3', JOB_COMPLETIONS: '4' })).toBe('4/4');
  });

  it('QUEUE_ERR_SHARD_ENV when missing or malformed', () => {
    for (const env of [
      {},
      { JOB_COMPLETION_INDEX: '0' },
      { JOB_COMPLETIONS: '2' },
      { JOB_COMPLETION_INDEX: '2', JOB_COMPLETIONS: '2' },
      { JOB_COMPLETION_INDEX: 'x', JOB_COMPLETIONS: '2' },
      { JOB_COMPLETION_INDEX: '0', JOB_COMPLETIONS: '0' },
    ]) {
      let code: string | undefined;
      try {
        shardFromEnv(env);
      } catch (e) {
        code = isVncuaError(e) ? e.code : String(e);
      }
      expect(code, JSON.stringify(env)).toBe('QUEUE_ERR_SHARD_ENV');
    }
  });
});
