/**
 * writeVideo with the real ffmpeg/ffprobe: real-speed timeline, markers in the decoded pixels,
 * H.264 MP4 with faststart, WebM fallback without libx264, skip without ffmpeg, cleanup on abort.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../harness/desktop/procs.ts';
import { isVncuaError } from '../../harness/errors.ts';
import { MARKER_COLORS, formatVideoNotice, writeVideo, type VideoFrame, type VideoMarker, type VideoResult } from './index.ts';
import {
  BG,
  SIDE,
  decodeFrame,
  fakeFfmpegFailing,
  fakeFfmpegHanging,
  fakeFfmpegWithoutX264,
  ffprobe,
  near,
  processesMentioning,
  solidFrame,
  squareCentroidX,
  squareFrame,
  waitPidFile,
  which,
} from './test-helpers.ts';

const T0 = 1_760_000_000_000;
const W = 320;
const H = 240;
/** Source frame offsets (ms after T0): every 70 ms up to 1.4 s, a static gap, then every 50 ms from 2.3 s to 3.0 s. */
const OFFSETS = [...Array.from({ length: 21 }, (_, i) => i * 70), ...Array.from({ length: 15 }, (_, i) => 2300 + i * 50)];
const sx = (i: number) => 5 + i * 7;
const SY = 100;

async function* movingSquare(): AsyncGenerator<VideoFrame> {
  for (const [i, off] of OFFSETS.entries()) {
    await Promise.resolve();
    yield squareFrame(T0 + off, W, H, sx(i), SY);
  }
}

const MARKERS: VideoMarker[] = [
  { t: T0 + 1000, x: 200, y: 60, kind: 'click' },
  { t: T0 + 1200, x: 20, y: 20, x2: 150, y2: 40, kind: 'drag' },
  { t: T0 + 2000, x: 80, y: 200, kind: 'double_click' },
  { t: T0 + 2500, x: 280, y: 200, kind: 'right_click' },
];

let ffmpegBin: string | null = null;
let root: string;
beforeAll(async () => {
  ffmpegBin = await which('ffmpeg');
  root = await mkdtemp(join(tmpdir(), 'vncua-video-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true }).catch(() => undefined);
});

async function freshDir(name: string): Promise<string> {
  const d = join(root, name);
  await import('node:fs/promises').then((fs) => fs.mkdir(d, { recursive: true }));
  return d;
}

function written(r: VideoResult) {
  if ('skipped' in r) throw new Error(`video skipped: ${r.reason}`);
  return r;
}

// Concurrent: every test has its own folder and its own ffmpeg; the two that set $VNCUA_FFMPEG run alone.
describe.concurrent('writeVideo with ffmpeg', () => {
  it('encodes H.264 MP4 at real speed: each tick shows the latest frame at or before it, markers drawn for 0.6 s', async () => {
    expect(ffmpegBin, 'ffmpeg must be installed for this test').not.toBeNull();
    const dir = await freshDir('mp4');
    const r = written(await writeVideo({ out: join(dir, 'recording'), width: W, height: H, frames: movingSquare(), markers: MARKERS, fps: 10 }));
    const last = OFFSETS[OFFSETS.length - 1]!;
    const expectedFrames = Math.floor((last * 10) / 1000) + 1;
    expect(r).toEqual({ path: join(dir, 'recording.mp4'), container: 'mp4', codec: 'h264', frames: expectedFrames });
    expect(await readdir(dir)).toEqual(['recording.mp4']);

    const info = await ffprobe(r.path);
    expect(info.codec).toBe('h264');
    expect(info.pixFmt).toBe('yuv420p');
    expect([info.width, info.height]).toEqual([W, H]);
    expect(info.frames).toBe(expectedFrames);
    expect(Math.abs(info.duration - last / 1000)).toBeLessThanOrEqual(0.15);
    // faststart: the index (moov) comes before the media data (mdat).
    const bytes = await readFile(r.path);
    expect(bytes.indexOf('moov')).toBeGreaterThan(0);
    expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat'));

    // Timeline: frame k shows the last source frame whose time is <= k * 100 ms (the static gap repeats it).
    for (const k of [0, 1, 5, 14, 15, 20, 22, 23, 30]) {
      const tick = k * 100;
      let src = 0;
      OFFSETS.forEach((off, i) => {
        if (off <= tick) src = i;
      });
      const f = await decodeFrame(r.path, k, join(root, `mp4-${k}.png`));
      expect(squareCentroidX(f), `frame ${k}`).not.toBeNull();
      expect(Math.abs(squareCentroidX(f)! - (sx(src) + (SIDE - 1) / 2)), `frame ${k} shows source frame ${src}`).toBeLessThanOrEqual(2);
    }

    // Markers: present from their time for 0.6 s, absent before and after.
    const click = MARKERS[0]!;
    const f9 = await decodeFrame(r.path, 9, join(root, 'm9.png'));
    const f12 = await decodeFrame(r.path, 12, join(root, 'm12.png'));
    const f16 = await decodeFrame(r.path, 16, join(root, 'm16.png'));
    expect(near(f9.pixel(click.x, click.y), BG, 30), `before the click: ${f9.pixel(click.x, click.y)}`).toBe(true);
    expect(near(f12.pixel(click.x, click.y), MARKER_COLORS.click, 60), `during the click: ${f12.pixel(click.x, click.y)}`).toBe(true);
    expect(near(f16.pixel(click.x, click.y), BG, 30), `after 0.6 s: ${f16.pixel(click.x, click.y)}`).toBe(true);
    // The drag's end dot, the double click and the right click (another colour).
    const f11 = await decodeFrame(r.path, 11, join(root, 'm11.png'));
    expect(near(f11.pixel(150, 40), BG, 30), `before the drag: ${f11.pixel(150, 40)}`).toBe(true);
    const f13 = await decodeFrame(r.path, 13, join(root, 'm13.png'));
    expect(near(f13.pixel(150, 40), MARKER_COLORS.drag, 60), `drag end: ${f13.pixel(150, 40)}`).toBe(true);
    const f21 = await decodeFrame(r.path, 21, join(root, 'm21.png'));
    expect(near(f21.pixel(80, 200), MARKER_COLORS.double_click, 60), `double click: ${f21.pixel(80, 200)}`).toBe(true);
    const f26 = await decodeFrame(r.path, 26, join(root, 'm26.png'));
    expect(near(f26.pixel(280, 200), MARKER_COLORS.right_click, 60), `right click: ${f26.pixel(280, 200)}`).toBe(true);
    expect(near(f26.pixel(200, 60), BG, 30)).toBe(true);
  });

  it('pads odd sizes to even, scales frames of another size to fit, and lasts until endAt', async () => {
    const dir = await freshDir('odd');
    const frames = [solidFrame(T0, 161, 121, [40, 40, 40]), solidFrame(T0 + 500, 80, 60, [20, 40, 220])];
    const r = written(await writeVideo({ out: join(dir, 'rec.mp4'), width: 161, height: 121, frames, fps: 10, endAt: T0 + 1500 }));
    expect(r.path).toBe(join(dir, 'rec.mp4'));
    expect(r.frames).toBe(16);
    const info = await ffprobe(r.path);
    expect([info.width, info.height]).toEqual([162, 122]);
    expect(info.frames).toBe(16);
    const f4 = await decodeFrame(r.path, 4, join(root, 'odd4.png'));
    const f6 = await decodeFrame(r.path, 6, join(root, 'odd6.png'));
    const f15 = await decodeFrame(r.path, 15, join(root, 'odd15.png'));
    expect(near(f4.pixel(80, 60), [40, 40, 40], 20)).toBe(true);
    expect(near(f6.pixel(80, 60), [20, 40, 220], 30), `scaled frame: ${f6.pixel(80, 60)}`).toBe(true);
    expect(near(f6.pixel(150, 110), [20, 40, 220], 30), `scaled to fill: ${f6.pixel(150, 110)}`).toBe(true);
    expect(near(f15.pixel(80, 60), [20, 40, 220], 30)).toBe(true);
  });

  it.sequential('falls back to WebM when ffmpeg lacks libx264 (option and $VNCUA_FFMPEG)', async () => {
    const dir = await freshDir('webm');
    const fake = await fakeFfmpegWithoutX264(root, ffmpegBin!);
    const frames = () => [0, 200, 400, 600].map((o, i) => squareFrame(T0 + o, 96, 64, 4 + i * 10, 10));
    const r = written(await writeVideo({ out: join(dir, 'recording.mp4'), width: 96, height: 64, frames: frames(), fps: 10, ffmpegPath: fake }));
    expect(r.container).toBe('webm');
    expect(r.path).toBe(join(dir, 'recording.webm'));
    expect(r.codec).toBe('vp9');
    const info = await ffprobe(r.path);
    expect(info.codec).toBe('vp9');
    expect(info.formatName).toContain('webm');
    expect(info.frames).toBe(7);
    expect(await readdir(dir)).toEqual(['recording.webm']);

    const saved = process.env.VNCUA_FFMPEG;
    process.env.VNCUA_FFMPEG = fake;
    try {
      const r2 = written(await writeVideo({ out: join(dir, 'env'), width: 96, height: 64, frames: frames(), fps: 5 }));
      expect(r2.container).toBe('webm');
      expect((await ffprobe(r2.path)).frames).toBe(4);
    } finally {
      if (saved === undefined) delete process.env.VNCUA_FFMPEG;
      else process.env.VNCUA_FFMPEG = saved;
    }
  });

  it('reports an ffmpeg failure as VIDEO_ERR_FFMPEG_FAILED with its stderr and leaves no file', async () => {
    const dir = await freshDir('fail');
    const fake = await fakeFfmpegFailing(root, ffmpegBin!);
    const err = await writeVideo({
      out: join(dir, 'recording'),
      width: 64,
      height: 48,
      frames: [solidFrame(T0, 64, 48, BG), solidFrame(T0 + 300, 64, 48, BG)],
      ffmpegPath: fake,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isVncuaError(err, 'VIDEO_ERR_FFMPEG_FAILED')).toBe(true);
    expect(String((err as { details: { stderr: string } }).details.stderr)).toContain('simulated encoder failure');
    expect(await readdir(dir)).toEqual([]);
  });

  it('kills ffmpeg and removes the partial file when aborted or timed out', async () => {
    for (const how of ['abort', 'timeout'] as const) {
      const dir = await freshDir(`abort-${how}`);
      const ac = new AbortController();
      let hung!: () => void;
      const hanging = new Promise<void>((r) => (hung = r));
      async function* stall(): AsyncGenerator<VideoFrame> {
        yield solidFrame(T0, 64, 48, BG);
        hung(); // ffmpeg is running now
        await new Promise(() => undefined);
      }
      const p = writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: stall(), ...(how === 'abort' ? { signal: ac.signal } : { timeoutMs: 1500 }) }).then(
        () => null,
        (e: unknown) => e,
      );
      await hanging;
      expect((await processesMentioning(dir)).length, 'ffmpeg runs while encoding').toBe(1);
      if (how === 'abort') ac.abort();
      const err = await p;
      expect(isVncuaError(err, how === 'abort' ? 'VIDEO_ERR_ABORTED' : 'VIDEO_ERR_TIMEOUT'), String(err)).toBe(true);
      expect(await processesMentioning(dir)).toEqual([]);
      expect(await readdir(dir)).toEqual([]);
    }
  });

  it('an ffmpeg that ignores SIGTERM after an abort is SIGKILLed 2 s later (VIDEO_ERR_ABORTED)', async () => {
    const dir = await freshDir('sigterm-ignored');
    const fake = await fakeFfmpegHanging(dir, ffmpegBin!);
    const ac = new AbortController();
    const p = writeVideo({ out: join(dir, 'out', 'recording'), width: 64, height: 48, frames: [solidFrame(T0, 64, 48, BG)], ffmpegPath: fake.bin, signal: ac.signal }).then(
      () => null,
      (e: unknown) => e,
    );
    const pid = await waitPidFile(fake.pidFile);
    await new Promise((r) => setTimeout(r, 200)); // writeVideo now waits for ffmpeg to finish
    const t0 = performance.now();
    ac.abort();
    const err = await p;
    const ms = performance.now() - t0;
    expect(isVncuaError(err, 'VIDEO_ERR_ABORTED'), String(err)).toBe(true);
    expect(ms).toBeGreaterThanOrEqual(1900);
    expect(ms).toBeLessThan(6000);
    expect(isAlive(pid)).toBe(false);
    expect(await readdir(join(dir, 'out'))).toEqual([]);
  });

  it('ffmpeg is killed when this process exits while it runs', async () => {
    const dir = await freshDir('parent-exit');
    const fake = await fakeFfmpegHanging(dir, ffmpegBin!);
    const fixture = fileURLToPath(new URL('./exit-child.fixture.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', fixture, fake.bin, fake.pidFile, join(dir, 'out')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    expect(code).toBe(0);
    const pid = Number(out.trim());
    expect(pid).toBeGreaterThan(0);
    const deadline = Date.now() + 2000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(isAlive(pid)).toBe(false);
  });

  it('rejects a frame of the wrong byte length with VIDEO_ERR_BAD_ARGUMENT, and skips when there are no frames', async () => {
    const dir = await freshDir('bad');
    const bad = { t: T0, rgb: new Uint8Array(10), width: 64, height: 48 };
    const err = await writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: [solidFrame(T0, 64, 48, BG), bad] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isVncuaError(err, 'VIDEO_ERR_BAD_ARGUMENT')).toBe(true);
    expect((err as { details: { frame: number } }).details.frame).toBe(1);
    expect(await readdir(dir)).toEqual([]);
    const none = await writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: [] });
    expect(none).toMatchObject({ skipped: true, kind: 'no_frames' });
    const badFps = await writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: [], fps: 0 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isVncuaError(badFps, 'VIDEO_ERR_BAD_ARGUMENT')).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('writeVideo without ffmpeg', () => {
  it('returns { skipped, reason } (no throw, no file) and formats the one-line notice', async () => {
    const dir = await freshDir('missing');
    let pulled = 0;
    function* frames(): Generator<VideoFrame> {
      pulled++;
      yield solidFrame(T0, 64, 48, BG);
    }
    const r = await writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: frames(), ffmpegPath: join(dir, 'no-such-ffmpeg') });
    expect(r).toMatchObject({ skipped: true, kind: 'ffmpeg_missing' });
    expect(formatVideoNotice(r)).toBe('video: ffmpeg not found; install ffmpeg (apt-get install ffmpeg) to get recording.mp4 — the run itself is unaffected');
    expect(pulled).toBe(0);
    expect(await readdir(dir)).toEqual([]);

    // Not on PATH (and no $VNCUA_FFMPEG).
    const savedPath = process.env.PATH;
    const savedEnv = process.env.VNCUA_FFMPEG;
    process.env.PATH = dir;
    delete process.env.VNCUA_FFMPEG;
    try {
      const r2 = await writeVideo({ out: join(dir, 'recording'), width: 64, height: 48, frames: frames() });
      expect(r2).toMatchObject({ skipped: true, kind: 'ffmpeg_missing' });
      expect((r2 as { reason: string }).reason).toContain('ffmpeg');
    } finally {
      process.env.PATH = savedPath;
      if (savedEnv !== undefined) process.env.VNCUA_FFMPEG = savedEnv;
    }
    expect(await readdir(dir)).toEqual([]);
  });
});
