/**
 * The session video: frames (RGB24, epoch-ms timestamps) laid on a real-speed timeline at a fixed
 * fps (each tick shows the latest frame at or before it), click markers drawn into the pixels,
 * piped raw to ffmpeg → recording.mp4 (H.264), or recording.webm when ffmpeg lacks libx264.
 * Without ffmpeg the video is skipped (never an error): the run itself is unaffected.
 */
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import sharp from 'sharp';
import { race, scope } from '../../harness/cancel.ts';
import { VncuaError } from '../../harness/errors.ts';
import { MARKER_MS, drawMarker, type VideoMarker } from './draw.ts';
import { probeFfmpeg, resolveFfmpeg } from './ffmpeg.ts';

export { MARKER_COLORS, MARKER_MS, type VideoMarker } from './draw.ts';
export { resolveFfmpeg, parseEncoders } from './ffmpeg.ts';

/** One screen frame: `rgb` holds width*height*3 bytes, `t` is epoch ms (same clock as the trace). */
export interface VideoFrame {
  t: number;
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** Options of `writeVideo`. */
export interface WriteVideoOptions {
  /** Output path without extension, or ending in .mp4 (.webm is used instead when libx264 is missing). */
  out: string;
  /** Video size; frames of another size are scaled to fit and padded. Odd sizes are padded to even. */
  width: number;
  height: number;
  /** Frames in time order. */
  frames: AsyncIterable<VideoFrame> | Iterable<VideoFrame>;
  /** Actions to mark, in screen pixels of the video. */
  markers?: VideoMarker[];
  /** Frames per second of the video (default 10). */
  fps?: number;
  /** Epoch ms the video lasts until (e.g. the run's end); default the last frame's time. */
  endAt?: number;
  /** The ffmpeg binary (default $VNCUA_FFMPEG, else `ffmpeg` on PATH). */
  ffmpegPath?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A written video. */
export interface VideoWritten {
  path: string;
  container: 'mp4' | 'webm';
  codec: string;
  frames: number;
}

/** No video was written, and why (`kind`: ffmpeg missing, no usable encoder, no frames). */
export interface VideoSkipped {
  skipped: true;
  reason: string;
  kind: 'ffmpeg_missing' | 'no_encoder' | 'no_frames';
}

/** The result of `writeVideo`. */
export type VideoResult = VideoWritten | VideoSkipped;

/** The one-line notice to print for a video result. */
export function formatVideoNotice(r: VideoResult): string {
  if ('skipped' in r) {
    if (r.kind === 'ffmpeg_missing') return 'video: ffmpeg not found; install ffmpeg (apt-get install ffmpeg) to get recording.mp4 — the run itself is unaffected';
    return `video: skipped (${r.reason}) — the run itself is unaffected`;
  }
  return `video: wrote ${r.path} (${r.codec}, ${r.frames} frames)`;
}

/** Longest timeline accepted (guards against mixed-up time units). */
const MAX_DURATION_MS = 24 * 3600 * 1000;

function badArg(message: string, details: Record<string, unknown>): VncuaError {
  return new VncuaError('VIDEO_ERR_BAD_ARGUMENT', message, { details });
}

function checkOptions(o: WriteVideoOptions, fps: number): void {
  for (const k of ['width', 'height'] as const) {
    const v = o[k];
    if (!Number.isInteger(v) || v < 2 || v > 16384) throw badArg(`writeVideo: ${k} must be an integer in 2..16384, got ${v}.`, { field: k, value: v });
  }
  if (!Number.isFinite(fps) || fps <= 0 || fps > 120) throw badArg(`writeVideo: fps must be in (0, 120], got ${fps}.`, { field: 'fps', value: fps });
  if (!o.out) throw badArg('writeVideo: out must be a path.', { field: 'out' });
}

/** Copies (or scales) a frame onto a black canvas of the video's (even) size. */
async function toCanvas(f: VideoFrame, w: number, h: number, cw: number, ch: number, index: number): Promise<Uint8Array> {
  if (!Number.isInteger(f.width) || !Number.isInteger(f.height) || f.width <= 0 || f.height <= 0 || f.rgb.length !== f.width * f.height * 3) {
    throw badArg(`writeVideo: frame ${index} has ${f.rgb.length} bytes for ${f.width}x${f.height}; expected width*height*3.`, {
      frame: index,
      width: f.width,
      height: f.height,
      bytes: f.rgb.length,
    });
  }
  if (!Number.isFinite(f.t)) throw badArg(`writeVideo: frame ${index} has no valid time (t = ${f.t}).`, { frame: index, t: f.t });
  let src = f.rgb;
  let sw = f.width;
  let sh = f.height;
  if (sw !== w || sh !== h) {
    const out = await sharp(f.rgb, { raw: { width: sw, height: sh, channels: 3 } })
      .resize(w, h, { fit: 'contain', background: { r: 0, g: 0, b: 0 }, kernel: 'nearest' })
      .removeAlpha()
      .raw()
      .toBuffer();
    src = new Uint8Array(out.buffer, out.byteOffset, out.length);
    sw = w;
    sh = h;
  }
  if (sw === cw && sh === ch) return f.rgb === src ? src.slice() : src;
  const canvas = new Uint8Array(cw * ch * 3);
  for (let y = 0; y < sh; y++) canvas.set(src.subarray(y * sw * 3, (y + 1) * sw * 3), y * cw * 3);
  return canvas;
}

/** Resolves when `stream` can take more data (or rejects once it closed). */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: unknown) => {
      stream.off('drain', ok);
      stream.off('close', closed);
      stream.off('error', done);
      if (err) reject(err);
      else resolve();
    };
    const ok = () => done();
    const closed = () => done(new Error('ffmpeg closed its input'));
    stream.once('drain', ok);
    stream.once('close', closed);
    stream.once('error', done);
  });
}

/** `out` without a .mp4/.webm extension. */
function basePath(out: string): string {
  return out.replace(/\.(mp4|webm)$/i, '');
}

let tmpCounter = 0;

/**
 * Encodes the frames as a real-speed video with click markers. Returns what was written, or
 * `{ skipped, reason }` when ffmpeg (or any usable encoder) is missing or there are no frames.
 */
export async function writeVideo(o: WriteVideoOptions): Promise<VideoResult> {
  const fps = o.fps ?? 10;
  checkOptions(o, fps);
  const frameMs = 1000 / fps;
  const cw = o.width + (o.width & 1);
  const ch = o.height + (o.height & 1);
  const markers = [...(o.markers ?? [])].filter((m) => Number.isFinite(m.t)).sort((a, b) => a.t - b.t);

  // Fires with VIDEO_ERR_ABORTED (the caller's signal) or VIDEO_ERR_TIMEOUT (o.timeoutMs).
  const cancel = scope({
    signal: o.signal,
    timeoutMs: o.timeoutMs,
    mapError: (c) =>
      c.kind === 'timeout'
        ? new VncuaError('VIDEO_ERR_TIMEOUT', `Writing the video took longer than ${c.timeoutMs} ms; ffmpeg was stopped and no file was kept.`, {
            details: { timeoutMs: c.timeoutMs },
          })
        : new VncuaError('VIDEO_ERR_ABORTED', 'Writing the video was cancelled; ffmpeg was stopped and no file was kept.', { cause: c.reason }),
  });
  const signal = cancel.signal;
  const aborted = (): unknown => signal.reason;

  const iterable = o.frames as AsyncIterable<VideoFrame> & Iterable<VideoFrame>;
  const it: AsyncIterator<VideoFrame> | Iterator<VideoFrame> =
    typeof iterable[Symbol.asyncIterator] === 'function' ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();
  let itDone = false;
  let sub: ReturnType<typeof spawnFfmpeg> | undefined;
  let tmp: string | undefined;
  let ok = false;
  try {
    if (signal.aborted) throw aborted();
    const bin = resolveFfmpeg(o.ffmpegPath);
    const probe = await probeFfmpeg(bin, { signal });
    if (signal.aborted) throw aborted();
    if (!probe.found) return { skipped: true, kind: 'ffmpeg_missing', reason: probe.reason };
    const codec = probe.codec;
    if (!codec) return { skipped: true, kind: 'no_encoder', reason: `${bin} has none of the encoders libx264, libvpx-vp9, libvpx` };

    const next = async (): Promise<IteratorResult<VideoFrame>> => {
      const r = await race(Promise.resolve(it.next()), { signal });
      if (r.done) itDone = true;
      return r;
    };
    let nFrame = 0;
    const first = await next();
    if (first.done) return { skipped: true, kind: 'no_frames', reason: 'no frames to encode' };

    const path = `${basePath(o.out)}.${codec.container}`;
    await mkdir(dirname(path), { recursive: true });
    tmp = `${path}.partial-${process.pid}-${++tmpCounter}`;
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostdin',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-s',
      `${cw}x${ch}`,
      '-framerate',
      String(fps),
      '-i',
      'pipe:0',
      '-an',
      ...codec.args,
      '-y',
      tmp,
    ];
    sub = spawnFfmpeg(bin, args, signal);
    const stdin = sub.stdin;
    stdin.on('error', () => undefined); // EPIPE when ffmpeg dies: reported through its exit status

    const t0 = first.value.t;
    let current = await toCanvas(first.value, o.width, o.height, cw, ch, nFrame++);
    let lastT = t0;
    let k = 0; // next tick: t0 + k * frameMs
    let mi = 0; // first marker that may still be visible
    let written = 0;
    const emit = async (tick: number): Promise<void> => {
      while (mi < markers.length && markers[mi]!.t + MARKER_MS <= tick) mi++;
      let buf = current;
      for (let j = mi; j < markers.length && markers[j]!.t <= tick; j++) {
        const m = markers[j]!;
        if (tick >= m.t + MARKER_MS) continue;
        if (buf === current) buf = current.slice();
        drawMarker({ data: buf, width: cw, height: ch }, m, tick - m.t);
      }
      if (!stdin.write(buf)) await race(drained(stdin), { signal });
      written++;
    };
    for (;;) {
      const r = await next();
      if (r.done) break;
      const t = Math.max(lastT, r.value.t);
      if (t - t0 > MAX_DURATION_MS)
        throw badArg(`writeVideo: frame ${nFrame} is ${Math.round((t - t0) / 1000)} s after the first; times must be epoch ms.`, { frame: nFrame, t, t0 });
      // Every tick before this frame shows the previous one.
      while (t0 + k * frameMs < t) await emit(t0 + k++ * frameMs);
      current = await toCanvas(r.value, o.width, o.height, cw, ch, nFrame++);
      lastT = t;
    }
    const end = Math.max(lastT, o.endAt !== undefined && Number.isFinite(o.endAt) && o.endAt - t0 <= MAX_DURATION_MS ? o.endAt : lastT);
    while (t0 + k * frameMs <= end) await emit(t0 + k++ * frameMs);
    stdin.end();
    const res = await sub.exited;
    if (signal.aborted || res.canceled) throw aborted();
    if (res.failed) {
      const tail = res.stderr.trim().split('\n').slice(-5).join(' | ');
      const why = res.error?.message ?? (res.signal ? `killed by ${res.signal}` : `exit code ${res.exitCode}`);
      throw new VncuaError('VIDEO_ERR_FFMPEG_FAILED', `ffmpeg failed to encode ${path} (exit ${res.exitCode ?? res.signal}): ${tail || why}`, {
        details: { path, exitCode: res.exitCode, signal: res.signal, stderr: tail },
      });
    }
    await rename(tmp, path);
    ok = true;
    return { path, container: codec.container, codec: codec.codec, frames: written };
  } catch (e) {
    if (signal.aborted) throw aborted();
    throw e;
  } finally {
    cancel.dispose();
    if (sub && !ok) {
      sub.kill('SIGKILL');
      await sub.exited;
    }
    if (tmp && !ok) await rm(tmp, { force: true }).catch(() => undefined);
    // Let the producer clean up; not awaited: after an abort its pending next() may never settle.
    if (!itDone) Promise.resolve(it.return?.()).catch(() => undefined);
  }
}

/** How ffmpeg ended. */
interface FfmpegExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Not exit status 0 (or it could not be started). */
  failed: boolean;
  /** Stopped because the signal fired. */
  canceled: boolean;
  /** The last MiB of its stderr. */
  stderr: string;
  /** Why it could not be started, if so. */
  error?: Error;
}

/** At most this much of ffmpeg's stderr is kept (its tail). */
const STDERR_MAX = 1024 * 1024;
/** After the signal's SIGTERM, ffmpeg is SIGKILLed if still running this much later. */
const FORCE_KILL_MS = 2000;

/**
 * Starts ffmpeg reading raw frames on stdin: SIGTERM when `signal` fires (SIGKILL 2 s later if it
 * is still running), SIGKILL if this process exits first. `exited` never rejects.
 */
function spawnFfmpeg(bin: string, args: string[], signal: AbortSignal): { stdin: Writable; exited: Promise<FfmpegExit>; kill(sig: NodeJS.Signals): void } {
  const child = spawn(bin, args, { stdio: ['pipe', 'ignore', 'pipe'], signal, killSignal: 'SIGTERM' });
  const kill = (sig: NodeJS.Signals) => {
    try {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    } catch {
      /* already gone */
    }
  };
  const killOnExit = () => kill('SIGKILL');
  process.once('exit', killOnExit);
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => {
    stderr += s;
    if (stderr.length > 2 * STDERR_MAX) stderr = stderr.slice(-STDERR_MAX);
  });
  let canceled = false;
  let error: Error | undefined;
  let forceKill: NodeJS.Timeout | undefined;
  const exited = new Promise<FfmpegExit>((resolve) => {
    child.on('error', (e) => {
      // An AbortError: spawn's `signal` fired and it sent SIGTERM.
      if (e.name === 'AbortError') {
        canceled = true;
        forceKill ??= setTimeout(() => kill('SIGKILL'), FORCE_KILL_MS);
      } else error ??= e;
    });
    // 'close' also comes after a failed start (ENOENT…), once stderr is read to its end.
    child.once('close', (code, sig) => {
      clearTimeout(forceKill);
      process.off('exit', killOnExit);
      const exitCode = error ? null : code;
      resolve({ exitCode, signal: sig, failed: error !== undefined || exitCode !== 0, canceled, stderr: stderr.slice(-STDERR_MAX), error });
    });
  });
  return { stdin: child.stdin!, exited, kill };
}
