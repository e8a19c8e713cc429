/**
 * A long recorded run for the viewer benches (bench/viewer.ts, bench/live-view.ts): a REAL short one (`vncua
 * eval`, replay agent, basic-suite click-button at 1280x800, recorded by the proxy), EXTENDED to `minutes` by
 * appending synthetic FramebufferUpdates to its server stream (a raw 160x100 rectangle of new pixels every
 * `updateMs` at a moving place; raw rectangles carry no decoder state, so the real stream's decoding goes on
 * exactly) and a pointer event per update to its client stream; its trace: `steps` steps spread over it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writePointerEvent } from '../../harness/rfb/client-messages.ts';
import { framebufferUpdate, rawRect } from '../../harness/rfb/test-helpers/server-stream.ts';
import { parseTimeIndex, writeTimeRecord } from '../../recorder/proxy/index.ts';

const repo = new URL('../..', import.meta.url).pathname;

/** The run made under `work`: ROOT `work`/long, the run at `dir` in it; the real run it was made from under `work`/eval. */
export interface LongRun {
  work: string;
  /** The results root holding the long run. */
  root: string;
  /** The run's directory relative to `root`, as the viewer names it. */
  dir: string;
  /** Its absolute directory. */
  run: string;
  /** The real run it was made from. */
  real: string;
  realStart: number;
  realEnd: number;
  endAt: number;
  /** Synthetic updates appended. */
  updates: number;
  /** Size of the server stream, bytes. */
  recBytes: number;
}

async function appendStream(dir: string, name: 'server' | 'client', chunks: Array<{ t: number; bytes: Uint8Array }>): Promise<void> {
  const data = new Uint8Array(await readFile(join(dir, `${name}.rfb.bin`)));
  const times = new Uint8Array(await readFile(join(dir, `${name}.time.bin`)));
  const recs = parseTimeIndex(times).records;
  let end = recs.length ? recs[recs.length - 1]!.end : 0;
  const total = chunks.reduce((n, c) => n + c.bytes.length, 0);
  const outData = new Uint8Array(end + total);
  outData.set(data.subarray(0, end));
  const outTimes = new Uint8Array(recs.length * 16 + chunks.length * 16);
  outTimes.set(times.subarray(0, recs.length * 16));
  let p = recs.length * 16;
  for (const c of chunks) {
    outData.set(c.bytes, end);
    end += c.bytes.length;
    writeTimeRecord(outTimes, p, c.t, end);
    p += 16;
  }
  await writeFile(join(dir, `${name}.rfb.bin`), outData);
  await writeFile(join(dir, `${name}.time.bin`), outTimes);
}

/**
 * Make the long run under `work` (see the header). With `keep`, what is made is noted in `work`/long-run.json and
 * a later call with the same `work` reuses it (its viewer cache removed first).
 */
export async function makeLongRun(work: string, opts: { minutes: number; steps: number; updateMs: number; keep?: boolean }): Promise<LongRun> {
  const root = join(work, 'long');
  const dir = 'replay/1280_800/long-run';
  const run = join(root, dir);
  const rec = join(run, 'recording');
  const made = join(work, 'long-run.json');
  const out = join(work, 'eval');
  const real = join(out, 'replay', '1280_800', 'click-button');
  if (opts.keep && existsSync(made)) {
    await rm(join(run, '.vncua-viewer'), { recursive: true, force: true });
    return { ...(JSON.parse(await readFile(made, 'utf8')) as LongRun), real };
  }
  const ev = spawnSync(
    process.execPath,
    [join(repo, 'bin/vncua.js'), 'eval', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--only', 'click-button', '--out', out, '--no-score'],
    { cwd: repo, encoding: 'utf8' },
  );
  if (ev.status !== 0) throw new Error(`vncua eval failed:\n${ev.stderr}${ev.stdout}`);
  await cp(real, run, { recursive: true });
  const serverRecs = parseTimeIndex(new Uint8Array(await readFile(join(rec, 'server.time.bin')))).records;
  const realEnd = serverRecs[serverRecs.length - 1]!.t;
  const realStart = serverRecs[0]!.t;
  const n = Math.floor((opts.minutes * 60_000) / opts.updateMs);
  const server: Array<{ t: number; bytes: Uint8Array }> = [];
  const client: Array<{ t: number; bytes: Uint8Array }> = [];
  for (let k = 1; k <= n; k++) {
    const t = realEnd + k * opts.updateMs;
    const x = (k * 97) % (1280 - 160);
    const y = (k * 53) % (800 - 100);
    server.push({ t, bytes: framebufferUpdate([rawRect(x, y, 160, 100, (px, py) => [(px * 3 + k) & 255, (py * 5 + k * 7) & 255, (k * 13) & 255])]) });
    client.push({ t: t - 1, bytes: writePointerEvent(x + 10, y + 10, 0) });
  }
  await appendStream(rec, 'server', server);
  await appendStream(rec, 'client', client);
  const manifest = JSON.parse(await readFile(join(rec, 'recording.json'), 'utf8')) as { connections: Array<{ closed_at: number | null }> };
  const endAt = realEnd + n * opts.updateMs + 1000;
  for (const c of manifest.connections) c.closed_at = endAt;
  await writeFile(join(rec, 'recording.json'), JSON.stringify(manifest));
  // The steps spread over the recording (copies of the real run's first entry, re-timed).
  const real0 = (JSON.parse(await readFile(join(real, 'execution.json'), 'utf8')) as Array<Record<string, unknown>>)[0]!;
  const span = endAt - realStart;
  const entries = Array.from({ length: opts.steps }, (_, i) => {
    const s = realStart + 500 + (i * (span - 1000)) / opts.steps;
    return { ...real0, index: i, task_marked_complete: i === opts.steps - 1, started_at: s, ended_at: s + 20, duration_ms: 20 };
  });
  await writeFile(join(run, 'execution.json'), JSON.stringify(entries));
  const long: LongRun = { work, root, dir, run, real, realStart, realEnd, endAt, updates: n, recBytes: (await stat(join(rec, 'server.rfb.bin'))).size };
  if (opts.keep) await writeFile(made, JSON.stringify(long));
  return long;
}
