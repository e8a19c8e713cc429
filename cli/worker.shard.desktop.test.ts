/**
 * `vncua worker --shard-from-env` as a Kubernetes Indexed Job's pod runs it: JOB_COMPLETION_INDEX 1 of
 * JOB_COMPLETIONS 2 is shard 2/2 of the suite, run by `vncua eval` without Redis (real desktops); the
 * variables missing or malformed: one QUEUE_ERR_SHARD_ENV line, exit 2, nothing run.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeLine, runVncua } from './test-helpers/child.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-shard-env-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const args = (out: string) => ['--shard-from-env', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--only', 'click-button,double-click-file', '--out', out];

describe('vncua worker --shard-from-env', () => {
  it('index 1 of 2 runs shard 2/2 of the suite, without a queue', async () => {
    const out = join(dir, 'shard');
    const r = await runVncua('worker', args(out), { env: { JOB_COMPLETION_INDEX: '1', JOB_COMPLETIONS: '2' }, deadlineMs: 180_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toContain('vncua worker: shard 2/2 (JOB_COMPLETION_INDEX=1, JOB_COMPLETIONS=2)');
    expect(readdirSync(join(out, 'replay', '1280_800'))).toEqual(['double-click-file']);
    expect(existsSync(join(out, 'scores.json'))).toBe(true);
  }, 300_000);

  it('QUEUE_ERR_SHARD_ENV when the variables are missing or malformed', async () => {
    for (const env of [
      { JOB_COMPLETION_INDEX: '', JOB_COMPLETIONS: '' },
      { JOB_COMPLETION_INDEX: '2', JOB_COMPLETIONS: '2' },
      { JOB_COMPLETION_INDEX: 'one', JOB_COMPLETIONS: '2' },
    ]) {
      const out = join(dir, 'bad');
      const r = await runVncua('worker', args(out), { env });
      expect(r.code, JSON.stringify(env)).toBe(2);
      expect(codeLine(r, 'worker')).toBe('QUEUE_ERR_SHARD_ENV');
      expect(existsSync(out)).toBe(false);
    }
  }, 300_000);
});
