/**
 * The trace viewer (`vncua serve`): time to the first frame opening a 300-step run, and the median seek on a
 * 30-minute 1280x800 recording, through the HTTP API of a real server on 127.0.0.1 (what the page does).
 *
 * The recording: a REAL short one (`vncua eval`, replay agent, basic-suite click-button at 1280x800, recorded
 * by the proxy), EXTENDED to 30 minutes by appending synthetic FramebufferUpdates to its server stream (a raw
 * 160x100 rectangle of new pixels every 500 ms at a moving place, 3,600 updates; raw rectangles carry no
 * decoder state, so the real stream's decoding goes on exactly) and a pointer event per update to its client
 * stream. Its trace: 300 steps spread over the 30 minutes. Each open is timed on a fresh `vncua serve` child
 * process. Usage: npx tsx bench/viewer.ts [--minutes M] [--seeks N] [--opens N] [--work DIR (keep the run there, reused)]
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyframeIndex } from '../viewer/keyframes.ts';
import { makeLongRun } from './lib/long-run.ts';
import { median, ms, quantile, table } from './stats.ts';

const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const MINUTES = opt('minutes', 30);
/** `--work DIR`: build the long run in DIR and keep it; a later run with the same DIR reuses it (the cache is removed first). */
const WORK = (() => {
  const i = args.indexOf('--work');
  return i >= 0 ? args[i + 1]! : null;
})();
const SEEKS = opt('seeks', 200);
const STEPS = 300;
/** Opens per figure (each on a fresh server process). */
const OPENS = opt('opens', 3);
const UPDATE_MS = 500;
const repo = new URL('..', import.meta.url).pathname;

/** A `vncua serve ROOT` child process (bin/vncua.js, as a person runs it), once it printed its URL. */
async function serveChild(root: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(repo, 'bin/vncua.js'), 'serve', root], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`vncua serve printed no URL within 60 s:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d;
      const m = /vncua serve: (http\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => reject(new Error(`vncua serve exited (${code}):\n${out}`)));
  });
  return {
    url,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Bytes of a run's viewer cache (frames.bin + index.json). */
async function cacheSize(runDir: string): Promise<number> {
  return (await stat(join(runDir, '.vncua-viewer', 'frames.bin'))).size + (await stat(join(runDir, '.vncua-viewer', 'index.json'))).size;
}

async function main(): Promise<void> {
  const work = WORK ?? (await mkdtemp(join(tmpdir(), 'vncua-bench-viewer-')));
  if (WORK) await mkdir(WORK, { recursive: true });
  try {
    const { run, real, realStart, realEnd, endAt, updates: n, recBytes } = await makeLongRun(work, { minutes: MINUTES, steps: STEPS, updateMs: UPDATE_MS, keep: WORK !== null });
    const root = join(work, 'long');
    const dir = 'replay/1280_800/long-run';
    const q = `dir=${encodeURIComponent(dir)}`;
    const cacheDir = join(run, '.vncua-viewer');
    /** Open the run as the page does: api/run, then the frame at the instant the link names (`at`: a step index). */
    const openRun = async (url: string, at: number) => {
      const t0 = performance.now();
      const d = (await (await fetch(`${url}api/run?${q}`)).json()) as { entries: Array<{ started_at: number }> };
      const r = await fetch(`${url}api/frame?${q}&t=${d.entries[at]!.started_at}`);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`first frame: HTTP ${r.status}`);
      return performance.now() - t0;
    };
    /** Each open on a fresh `vncua serve` process (as a person runs it), the cache removed first unless `cached`. */
    const opens = async (at: number, cached: boolean) => {
      const out: number[] = [];
      for (let k = 0; k < OPENS; k++) {
        if (!cached) await rm(cacheDir, { recursive: true, force: true });
        const s = await serveChild(root);
        try {
          out.push(await openRun(s.url, at));
        } finally {
          await s.stop();
        }
      }
      return out;
    };
    const coldFirst = await opens(0, false);
    const coldLast = await opens(STEPS - 1, false);
    // The build: a fresh server, the run opened, seeks at random instants while it indexes, then until complete.
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    await rm(cacheDir, { recursive: true, force: true });
    const s1 = await serveChild(root);
    const tBuild = performance.now();
    await openRun(s1.url, 0);
    const during: number[] = [];
    for (let k = 0; k < 20; k++) {
      const a = performance.now();
      await (await fetch(`${s1.url}api/frame?${q}&t=${realStart + rnd() * (endAt - realStart)}`)).arrayBuffer();
      during.push(performance.now() - a);
    }
    for (;;) {
      const ix = (await (await fetch(`${s1.url}api/index?${q}`)).json()) as { complete: boolean };
      if (ix.complete) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const buildWait = performance.now() - tBuild;
    await s1.stop();
    const warm = await opens(0, true);
    const warmLast = await opens(STEPS - 1, true);
    const s2 = await serveChild(root);
    await openRun(s2.url, 0);
    // Seeks at random instants (a fixed LCG), raw RGB as the page fetches it, and PNG (the server-side image alternative).
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
    await s2.stop();
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
    const cacheBytes = await cacheSize(run);
    // The same on the real run alone (its pixels are a real page's, not synthetic gradients).
    const realIdx = await KeyframeIndex.open(real);
    await realIdx.whenComplete();
    await realIdx.close();
    const realCache = await cacheSize(real);
    const realStream = (await stat(join(real, 'recording', 'server.rfb.bin'))).size;
    await rm(join(real, '.vncua-viewer'), { recursive: true, force: true });
    const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
    const kib = (b: number) => `${(b / 2 ** 10).toFixed(1)} KiB`;
    const m = (xs: number[]) => `${ms(median(xs))} ms (${xs.map((x) => ms(x)).join(', ')})`;

    process.stdout.write(
      `Recording: a real ${((realEnd - realStart) / 1000).toFixed(1)} s click-button run at 1280x800 (vncua eval, replay agent) extended to ${MINUTES} min with ${n} synthetic raw updates (160x100 gradients at a moving place, every ${UPDATE_MS} ms) and ${STEPS} steps; server stream ${mib(recBytes)}. Index: ${keyframes} keyframes + ${records - keyframes} deltas. Each open is on a fresh \`vncua serve\` process (a child, as a person runs it; timed from its printed URL), median of ${OPENS}; seeks over HTTP on 127.0.0.1, ${SEEKS} at random instants.\n\n`,
    );
    process.stdout.write(
      table(
        ['measure', 'value', 'target'],
        [
          ['open the 300-step run (api/run + the frame at its first step), index not cached', m(coldFirst), '≤ 1 s'],
          ['open a link to its last step (30 min in), index not cached', m(coldLast), '≤ 1 s'],
          ['open the 300-step run, index cached', m(warm), '≤ 1 s'],
          ['open a link to its last step, index cached', m(warmLast), ''],
          ['seek while the index is being built (20 random instants): median', `${ms(median(during))} ms`, ''],
          ['index build, whole recording (once, in the background; then cached)', `${ms(buildWait)} ms`, ''],
          ['seek, raw RGB over HTTP (what the page does): median', `${ms(median(raw))} ms`, '≤ 150 ms'],
          ['seek, raw RGB over HTTP: p95', `${ms(quantile(raw, 0.95))} ms`, ''],
          ['seek, PNG over HTTP (sharp, level 1): median', `${ms(median(png))} ms`, ''],
          ['seek in process (index only, no HTTP): median', `${ms(median(inproc))} ms`, ''],
          ['playback step at 8x (33 ms of wall time apart): median', `${ms(median(play))} ms`, ''],
          [
            'index cache (frames.bin + index.json) / server stream, the 30-minute run',
            `${mib(cacheBytes)} / ${mib(recBytes)} (${((100 * cacheBytes) / recBytes).toFixed(1)} %)`,
            'well below 100 %',
          ],
          ['index cache / server stream, the real run alone', `${kib(realCache)} / ${kib(realStream)} (${((100 * realCache) / realStream).toFixed(1)} %)`, ''],
        ],
      ),
    );
    const pass = median(coldFirst) <= 1000 && median(warm) <= 1000 && median(raw) <= 150 && cacheBytes < recBytes / 2;
    process.stdout.write(`\n- Targets: ${pass ? 'PASS' : 'FAIL'}.\n`);
    process.stdout.write(
      "- The synthetic updates are gradients, which the index stores with PNG's Sub filter before deflate (a few hundred bytes each, against 48 KiB raw in the stream); the real run's row is the size on real pixels.\n",
    );
  } finally {
    if (!WORK) await rm(work, { recursive: true, force: true });
  }
}

await main();
