/**
 * `<out>/.vncua-queue/` (the job queue's staging dirs and marker files, eval/queue/) is never a run:
 * `vncua score` (eval/score.ts), `vncua process` (recorder/process/find.ts) and `vncua serve`
 * (viewer/runs.ts) see only the committed runs, not a killed worker's half-written attempt nor a
 * finished one not committed yet.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stagingRoot } from '../eval/queue/results-sink.ts';
import { findRunDirs, writeScores } from '../eval/score.ts';
import type { RunResult } from '../harness/trace/schema.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { findRuns } from '../recorder/process/find.ts';
import { RunCatalog } from './runs.ts';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'vncua-queue-dir-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

/** A run written by the real TraceWriter into `dir` (a click with the success check held, then finish), with a recording/ dir. */
async function writeRun(dir: string, result: RunResult | null): Promise<void> {
  const w = new TraceWriter(dir);
  await w.open();
  await w.append({
    action: 'mouse_click',
    params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' },
    task_marked_complete: true,
    started_at: 1,
    ended_at: 2,
  } as never);
  await w.append({ action: 'finish', params: {}, task_marked_complete: true, started_at: 3, ended_at: 4 } as never);
  await w.finalize();
  if (result) await w.writeResult(result);
  await mkdir(join(dir, 'recording'), { recursive: true });
  await writeFile(join(dir, 'task.json'), JSON.stringify({ id: 'ok-1', agent: 'a', resolution: '1280x800', attempt: 1 }));
}
const finished: RunResult = { status: 'finished', steps: 2, durationMs: 10 };
const REL = 'a/1280_800/ok-1';

describe('<out>/.vncua-queue/ is never a run', () => {
  it('score, process and serve see only the committed runs', async () => {
    await writeRun(join(out, REL), finished);
    // A dead worker's half-written attempt, and a finished one not committed yet.
    await writeRun(join(stagingRoot(out), 'j1', 't'), null);
    await writeRun(join(stagingRoot(out), 'j2', 't'), { status: 'finished', steps: 1, durationMs: 1 });
    await writeFile(join(out, '.vncua-queue', '0123456789abcdef.json'), '{}');
    const real = [join(out, REL)];
    expect(await findRunDirs(out)).toEqual(real);
    expect(await findRuns(out)).toEqual(real);
    const { report } = await writeScores(out);
    expect(report.by_agent).toMatchObject([{ agent: 'a', runs: 1 }]);
    expect(report.invalid).toEqual([]);
    const list = await new RunCatalog(out).list({});
    expect(list.total).toBe(1);
    expect(list.runs.map((r) => r.dir)).toEqual([REL]);
  });
});
