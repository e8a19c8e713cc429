/**
 * The trace viewer (`vncua serve`): time to the first frame opening a 300-step run, and the median seek on a
 * 30-minute 1280x800 recording, through the HTTP API of a real server on 127.0.0.1 (what the page does).
 *
 * The recording: a REAL short one (`vncua eval`, replay agent, basic-suite click-button at 1280x800, recorded
 * by the proxy), EXTENDED to 30 minutes by appending synthetic FramebufferUpdates to its server stream (a raw
 * 160x100 rectangle of new pixels every 500 ms at a moving place, 3,600 updates; raw rectangles carry no
 * decoder state, so the real stream's decoding goes on exactly) and a pointer event per update to its client
 * stream. Its trace: 300 steps spread over the 30 minutes. Usage: npx tsx bench/viewer.ts [--minutes M] [--seeks N]
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyframeIndex } from '../viewer/keyframes.ts';
import { makeLongRun } from './lib/long-run.ts';
import { startViewerServer } from '../viewer/server.ts';
import { median, ms, quantile, table } from './stats.ts';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const MINUTES = opt('minutes', 30);
const SEEKS = opt('seeks', 200);
const STEPS = 300;
const UPDATE_MS = 500;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'vncua-bench-viewer-'));
  try {
    const { run, realStart, realEnd, endAt, updates: n, serverBytes: recBytes } = await makeLongRun(join(work, 'long'), { minutes: MINUTES, steps: STEPS, updateMs: UPDATE_MS });
    const root = join(work, 'long');
    const dir = 'replay/1280_800/long-run';
    const q = `dir=${encodeURIComponent(dir)}`;
    /** Open the run as the page does: api/run, then the frame at its first step. */
    const openRun = async (url: string) => {
      const t0 = performance.now();
      const d = (await (await fetch(`${url}api/run?${q}`)).json()) as { entries: Array<{ started_at: number }> };
      const r = await fetch(`${url}api/frame?${q}&t=${d.entries[0]!.started_at}`);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`first frame: HTTP ${r.status}`);
      return performance.now() - t0;
    };
    // Cold: no cache (the index is built as the run opens); warm: a new server reading the cache.
    const s1 = await startViewerServer({ root });
    const cold = await openRun(s1.url);
    const tBuild = performance.now();
    for (;;) {
      const ix = (await (await fetch(`${s1.url}api/index?${q}`)).json()) as { complete: boolean };
      if (ix.complete) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const buildWait = performance.now() - tBuild + cold;
    await s1.close();
    const s2 = await startViewerServer({ root });
    const warm = await openRun(s2.url);
    // Seeks at random instants (a fixed LCG), raw RGB as the page fetches it, and PNG (the server-side image alternative).
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const times = Array.from({ length: SEEKS }, () => realStart + rnd() * (endAt - realStart));
    const raw: number[] = [];
    for (const t of times) {
      const a = performance.now();
      const r = await fetch(`${s2.url}api/frame?${q}&t=${t}`);
      await r.arrayBuffer();
      raw.push(performance.now() - a);
    }
    const png: number[] = [];
    for (const t of times.slice(0, 50)) {
      const a = performance.now();
      await (await fetch(`${s2.url}api/frame.png?${q}&t=${t}`)).arrayBuffer();
      png.push(performance.now() - a);
    }
    // Playback: consecutive instants 33 ms apart (each applies only the deltas since the last).
    const play: number[] = [];
    for (let k = 0; k < 100; k++) {
      const a = performance.now();
      await (await fetch(`${s2.url}api/frame?${q}&t=${realStart + 600_000 + k * 33 * 8}`)).arrayBuffer();
      play.push(performance.now() - a);
    }
    await s2.close();
    // In process, without HTTP: the index alone.
    const idx = await KeyframeIndex.open(run);
    const inproc: number[] = [];
    for (const t of times) {
      const a = performance.now();
      await idx.frameAt(t);
      inproc.push(performance.now() - a);
    }
    const keyframes = idx.records.filter((r) => r.key).length;
    const records = idx.records.length;
    await idx.close();
    const cacheBytes = (await stat(join(run, '.vncua-viewer', 'frames.bin'))).size + (await stat(join(run, '.vncua-viewer', 'index.json'))).size;

    process.stdout.write(
      `Recording: a real ${((realEnd - realStart) / 1000).toFixed(1)} s click-button run at 1280x800 (vncua eval, replay agent) extended to ${MINUTES} min with ${n} synthetic raw updates (160x100, every ${UPDATE_MS} ms) and ${STEPS} steps; server stream ${(recBytes / 2 ** 20).toFixed(1)} MiB. Index: ${keyframes} keyframes + ${records - keyframes} deltas, cache ${(cacheBytes / 2 ** 20).toFixed(1)} MiB. HTTP on 127.0.0.1, ${SEEKS} seeks at random instants.\n\n`,
    );
    process.stdout.write(
      table(
        ['measure', 'value', 'target'],
        [
          ['open the 300-step run: api/run + first frame, index not cached (built in the background)', `${ms(cold)} ms`, '≤ 1 s'],
          ['open the 300-step run: index cached', `${ms(warm)} ms`, '≤ 1 s'],
          ['index build, whole recording (once; then cached)', `${ms(buildWait)} ms`, ''],
          ['seek, raw RGB over HTTP (what the page does): median', `${ms(median(raw))} ms`, '≤ 150 ms'],
          ['seek, raw RGB over HTTP: p95', `${ms(quantile(raw, 0.95))} ms`, ''],
          ['seek, PNG over HTTP (sharp, level 1): median', `${ms(median(png))} ms`, ''],
          ['seek in process (index only, no HTTP): median', `${ms(median(inproc))} ms`, ''],
          ['playback step at 8x (33 ms of wall time apart): median', `${ms(median(play))} ms`, ''],
        ],
      ),
    );
    const pass = cold <= 1000 && warm <= 1000 && median(raw) <= 150;
    process.stdout.write(`\n- Targets: ${pass ? 'PASS' : 'FAIL'}.\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
