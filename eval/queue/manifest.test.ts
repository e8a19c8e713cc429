/**
 * The queue's pure parts: queue URLs (QUEUE_ERR_BAD_URL, the password never shown), job ids, suite ids
 * (same command, same id; any change that changes results, another id) and the manifest checks a
 * worker makes (QUEUE_ERR_VERSION, QUEUE_ERR_MISMATCH).
 */
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { QUEUE_FORMAT, VNCUA_VERSION, type SuiteManifest, checkManifest, parseManifest, runJobId, suiteIdOf } from './manifest.ts';
import { stallSettings } from './worker.ts';
import { parseQueueUrl, redactUrl } from './url.ts';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return isVncuaError(e) ? e.code : `not coded: ${String(e)}`;
  }
  return undefined;
};

describe('parseQueueUrl', () => {
  it('reads host, port, database and credentials', () => {
    expect(parseQueueUrl('redis://127.0.0.1:6379/0')).toEqual({ host: '127.0.0.1', port: 6379, db: 0, tls: false, display: 'redis://127.0.0.1:6379/0' });
    expect(parseQueueUrl('redis://:s3cr%40t@queue.lan:7000/3')).toEqual({
      host: 'queue.lan',
      port: 7000,
      db: 3,
      password: 's3cr@t',
      tls: false,
      display: 'redis://:***@queue.lan:7000/3',
    });
    expect(parseQueueUrl('rediss://bob:pw@[::1]:6380')).toMatchObject({
      host: '::1',
      port: 6380,
      db: 0,
      username: 'bob',
      password: 'pw',
      tls: true,
      display: 'rediss://bob:***@[::1]:6380/0',
    });
  });

  it('QUEUE_ERR_BAD_URL for anything else, never repeating the password', () => {
    for (const bad of [
      'localhost:6379',
      'http://127.0.0.1:6379/0',
      'redis://127.0.0.1/0',
      'redis://:6379/0',
      'redis://127.0.0.1:6379/x',
      'redis://127.0.0.1:6379/0?a=1',
      'redis://127.0.0.1:99999/0',
      '',
    ])
      expect(
        code(() => parseQueueUrl(bad)),
        bad,
      ).toBe('QUEUE_ERR_BAD_URL');
    try {
      parseQueueUrl('http://:hunter2@127.0.0.1:6379/0');
    } catch (e) {
      expect((e as Error).message).not.toContain('hunter2');
    }
    expect(redactUrl('redis://:hunter2@h:1/0')).toBe('redis://:***@h:1/0');
  });
});

const identity = () => ({
  tasks: { file: '/s/tasks.json', sha256: 'a'.repeat(64) },
  agent: { spec: 'replay', name: 'replay', sha256: null },
  options: { resolutions: ['1280x800'], repeat: 1, maxSteps: 50, retries: 2, args: [] as string[] },
  out: '/runs/eval',
});

describe('suite and job ids', () => {
  it('the same command gives the same suite id, whatever the key order', () => {
    const a = identity();
    const b = { out: a.out, options: { args: [], retries: 2, maxSteps: 50, repeat: 1, resolutions: ['1280x800'] }, agent: a.agent, tasks: a.tasks };
    expect(suiteIdOf(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(suiteIdOf(b)).toBe(suiteIdOf(a));
  });

  it('anything that changes results changes it: task file content, agent, options, selection, results root', () => {
    const base = suiteIdOf(identity());
    const changed = [
      { ...identity(), tasks: { ...identity().tasks, sha256: 'b'.repeat(64) } },
      { ...identity(), tasks: { ...identity().tasks, only: ['click-*'] } },
      { ...identity(), agent: { spec: 'a.ts', name: 'a', module: '/a.ts', sha256: 'c'.repeat(64) } },
      { ...identity(), options: { ...identity().options, repeat: 3 } },
      { ...identity(), options: { ...identity().options, resolutions: ['1920x1080'] } },
      { ...identity(), options: { ...identity().options, shard: '1/2' } },
      { ...identity(), options: { ...identity().options, judges: [{ type: 'url' as const, glob: '*/done' }] } },
      { ...identity(), options: { ...identity().options, maxCostUsd: 0.5 } },
      { ...identity(), options: { ...identity().options, needsHuman: 'ask' as const } },
      { ...identity(), options: { ...identity().options, secretsFile: '/secrets/run.env' } },
      { ...identity(), out: '/runs/other' },
    ];
    const ids = changed.map(suiteIdOf);
    expect(new Set([base, ...ids]).size).toBe(changed.length + 1);
  });

  it('job ids: one per run, no colon (BullMQ keys)', () => {
    const id = runJobId('0123456789abcdef', 'click-button', { width: 1280, height: 800 }, 2);
    expect(id).toBe('0123456789abcdef.click-button@1280x800#2');
    expect(id).not.toContain(':');
  });

  it('stall settings: a dead worker is noticed within the stall timeout', () => {
    const s = stallSettings(30_000);
    // Worst case: the lock expires L after the last renewal, and real checks are up to 2 I apart (a check is skipped
    // while another worker's check key lives); the first check after the last renewal must come before the expiry.
    expect(2 * s.stalledInterval).toBeLessThan(s.lockDuration);
    expect(s.lockDuration + 2 * s.stalledInterval).toBeLessThanOrEqual(0.9 * 30_000);
    expect(stallSettings(10_000)).toEqual({ lockDuration: 5000, stalledInterval: 2000 });
  });
});

describe('manifest checks', () => {
  const manifest = (over: Partial<SuiteManifest> = {}): SuiteManifest => ({
    format: QUEUE_FORMAT,
    vncua: VNCUA_VERSION,
    suiteId: '0123456789abcdef',
    createdAt: 1,
    ...identity(),
    agent: { spec: 'agent.ts', name: 'agent', module: '/x/agent.ts', sha256: 'd'.repeat(64) },
    results: { marker: '/runs/eval/.vncua-queue/0123456789abcdef.json' },
    ...over,
  });
  const local = { tasksSha256: 'a'.repeat(64), agentSha256: 'd'.repeat(64) };

  it('round trip through Redis text, and the same copies pass', () => {
    const m = manifest();
    expect(parseManifest(JSON.stringify(m), m.suiteId)).toEqual(m);
    expect(() => checkManifest(m, local, { tasks: '/s/tasks.json', agent: '/x/agent.ts' })).not.toThrow();
  });

  it('the run options that change results travel: judges, the run cost cap, needsHuman, the secrets file path', () => {
    const m = manifest({ options: { ...identity().options, judges: [{ type: 'url', glob: '*/done' }], maxCostUsd: 0.25, needsHuman: 'end', secretsFile: '/secrets/run.env' } });
    expect(parseManifest(JSON.stringify(m), m.suiteId).options).toMatchObject({
      judges: [{ type: 'url', glob: '*/done' }],
      maxCostUsd: 0.25,
      needsHuman: 'end',
      secretsFile: '/secrets/run.env',
    });
    // A bad judge spec in Redis is not run silently wrong: the manifest is refused.
    expect(code(() => parseManifest(JSON.stringify({ ...m, options: { ...m.options, judges: [{ type: 'nope' }] } }), m.suiteId))).toBe('QUEUE_ERR_VERSION');
  });

  it('QUEUE_ERR_VERSION: another queue format or vncua version, or an unreadable manifest', () => {
    expect(code(() => parseManifest(JSON.stringify({ ...manifest(), format: QUEUE_FORMAT + 1 }), 'x'))).toBe('QUEUE_ERR_VERSION');
    expect(code(() => parseManifest('{"format":1}', 'x'))).toBe('QUEUE_ERR_VERSION');
    expect(code(() => parseManifest('not json', 'x'))).toBe('QUEUE_ERR_VERSION');
    expect(code(() => checkManifest(manifest({ vncua: '0.0.0-elsewhere' }), local, { tasks: 't' }))).toBe('QUEUE_ERR_VERSION');
  });

  it('QUEUE_ERR_MISMATCH: the task file or agent module differs by content', () => {
    expect(code(() => checkManifest(manifest(), { ...local, tasksSha256: 'e'.repeat(64) }, { tasks: 't' }))).toBe('QUEUE_ERR_MISMATCH');
    expect(code(() => checkManifest(manifest(), { ...local, agentSha256: 'f'.repeat(64) }, { tasks: 't' }))).toBe('QUEUE_ERR_MISMATCH');
    expect(code(() => checkManifest(manifest(), { ...local, agentSha256: null }, { tasks: 't' }))).toBe('QUEUE_ERR_MISMATCH');
  });
});
