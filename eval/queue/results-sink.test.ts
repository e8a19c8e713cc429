/**
 * The shared results sink on a real filesystem: staging under `<out>/.vncua-queue/staging/`, commit by
 * rename (replacing a leftover, refusing a finished run with QUEUE_ERR_ALREADY_FINISHED, one winner of
 * two racing commits), discard, the sweep of dead attempts. (That `<out>/.vncua-queue/` is never a run
 * for score, process and serve: viewer/queue-dir.test.ts.)
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import type { RunResult } from '../../harness/trace/schema.ts';
import { TraceWriter } from '../../harness/trace/writer.ts';
import { checkRel, sharedSink, stagingRoot, sweepStaging } from './results-sink.ts';

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'vncua-sink-'));
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

describe('sharedSink', () => {
  it('stages under .vncua-queue/staging/<job>/<token>/ and commits by rename', async () => {
    const sink = sharedSink(out);
    const dir = await sink.staging('s1.ok-1@1280x800#1', '1-w1-abc');
    expect(dir).toBe(join(stagingRoot(out), 's1.ok-1@1280x800#1', '1-w1-abc'));
    expect(await readdir(dir)).toEqual([]);
    await writeRun(dir, finished);
    await sink.commit(dir, REL);
    expect(JSON.parse(await readFile(join(out, REL, 'result.json'), 'utf8')).status).toBe('finished');
    expect(existsSync(dir)).toBe(false);
    expect(await readdir(stagingRoot(out))).toEqual([]); // the job's directory went with its last attempt
  });

  it('replaces a leftover (an infra_error run, a partial), refuses a finished run', async () => {
    const sink = sharedSink(out);
    await writeRun(join(out, REL), { status: 'infra_error', steps: 0, durationMs: 1, error: { code: 'PAGE_ERR_UNREACHABLE', message: 'x' } });
    const a = await sink.staging('j', 't1');
    await writeRun(a, finished);
    await sink.commit(a, REL);
    expect(JSON.parse(await readFile(join(out, REL, 'result.json'), 'utf8')).status).toBe('finished');

    const b = await sink.staging('j', 't2');
    await writeRun(b, { status: 'finished', steps: 9, durationMs: 99 });
    const e = await sink.commit(b, REL).catch((x: unknown) => x);
    expect(isVncuaError(e, 'QUEUE_ERR_ALREADY_FINISHED')).toBe(true);
    expect(JSON.parse(await readFile(join(out, REL, 'result.json'), 'utf8')).steps).toBe(2); // the first one kept
    await sink.discard(b);
    expect(existsSync(b)).toBe(false);
  });

  it('two racing commits of one run: exactly one lands', async () => {
    const sink = sharedSink(out);
    const dirs = await Promise.all(['t1', 't2', 't3'].map((t) => sink.staging('j', t)));
    for (const [i, d] of dirs.entries()) await writeRun(d, { status: 'finished', steps: i + 1, durationMs: 1 });
    const results = await Promise.allSettled(dirs.map((d) => sink.commit(d, REL)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(isVncuaError(r.reason, 'QUEUE_ERR_ALREADY_FINISHED')).toBe(true);
  });

  it('refuses job ids, tokens and run paths that would leave their place', async () => {
    const sink = sharedSink(out);
    for (const [job, token] of [
      ['../x', 't'],
      ['j', '..'],
      ['j', 'a/b'],
    ])
      await expect(sink.staging(job!, token!)).rejects.toMatchObject({ code: 'EVAL_ERR_BAD_OPTIONS' });
    for (const rel of ['../a', '/abs', '.vncua-queue/x', 'a/../../b']) expect(() => checkRel(rel), rel).toThrow();
  });

  it('sweeps the staging dirs of the jobs it is told are dead', async () => {
    const sink = sharedSink(out);
    const dead = await sink.staging('dead-job', 't');
    const live = await sink.staging('live-job', 't');
    await writeRun(dead, null);
    await writeRun(live, null);
    const removed = await sweepStaging(out, (job) => job !== 'live-job');
    expect(removed).toEqual([join(stagingRoot(out), 'dead-job')]);
    expect(existsSync(live)).toBe(true);
  });
});
