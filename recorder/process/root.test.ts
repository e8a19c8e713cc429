import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { findRuns } from './find.ts';
import { processRoot, type RunOutcome } from './root.ts';
import { writeUitaskRun, writeVncuaRun } from './test-helpers/runs.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'vncua-root-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Three good runs at different depths and one whose trace is corrupt. */
async function layout(): Promise<{ good: string[]; bad: string }> {
  const good = [
    await writeVncuaRun(join(root, 'agent', '1280_800', 'task-a')),
    await writeVncuaRun(join(root, 'agent', '1280_800', 'task-b'), { partial: true }),
    await writeUitaskRun(join(root, 'uitask', 'combo-box-tasks--1')),
  ];
  const bad = await writeVncuaRun(join(root, 'agent', '1280_800', 'task-bad'));
  await writeFile(join(bad, 'execution.json'), '[{"index": 0, "action": "mouse_cl');
  // Not runs: a trace without recording/, and a recording/ without a trace.
  await mkdir(join(root, 'no-recording'), { recursive: true });
  await writeFile(join(root, 'no-recording', 'execution.json'), '[]');
  await mkdir(join(root, 'no-trace', 'recording'), { recursive: true });
  return { good, bad };
}

describe('processRoot', () => {
  it('finds every run directory (trace + recording/) under the root', async () => {
    const { good, bad } = await layout();
    expect(await findRuns(root)).toEqual([...good, bad].sort());
  });

  it('uses N worker processes and keeps going past a bad run', async () => {
    const { good, bad } = await layout();
    const seen: RunOutcome[] = [];
    const r = await processRoot(root, { jobs: 2, onOutcome: (o) => seen.push(o) });
    expect(seen).toHaveLength(4);
    expect(r.failed).toBe(1);
    const failed = r.runs.find((o) => !o.ok)!;
    expect(failed.runDir).toBe(bad);
    expect(!failed.ok && failed.error.code).toBe('TRACE_ERR_INVALID');
    const ok = r.runs.filter((o) => o.ok);
    expect(ok.map((o) => o.runDir).sort()).toEqual([...good].sort());
    const pids = new Set(ok.map((o) => (o.ok ? o.result.pid : 0)));
    expect(pids.has(process.pid)).toBe(false);
    expect(pids.size).toBeGreaterThanOrEqual(1);
    expect(pids.size).toBeLessThanOrEqual(2);
    for (const dir of good) {
      const j = JSON.parse(await readFile(join(dir, 'action_screenshots.json'), 'utf8'));
      expect(j.actions).toHaveLength(4);
    }
    // A second pass skips what is done (in this process, jobs 1).
    const again = await processRoot(root, { jobs: 1 });
    expect(again.runs.filter((o) => o.ok && o.result.status === 'skipped')).toHaveLength(3);
    expect(again.failed).toBe(1);
  });

  it('throws PROCESS_ERR_NO_RUNS when nothing is there', async () => {
    await expect(processRoot(root)).rejects.toSatisfy((e) => isVncuaError(e, 'PROCESS_ERR_NO_RUNS'));
    await expect(processRoot(join(root, 'missing'))).rejects.toSatisfy((e) => isVncuaError(e, 'RECORDING_ERR_NOT_FOUND'));
  });
});
