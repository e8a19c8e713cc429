/**
 * Test helpers for the session video: synthetic frames (a moving square), ffprobe, frame
 * extraction to PNG, and fake ffmpeg scripts (no libx264; always failing).
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import type { VideoFrame } from './index.ts';

const run = promisify(execFile);

/** Background and square colours of the synthetic frames. */
export const BG: [number, number, number] = [40, 40, 40];
export const SQUARE: [number, number, number] = [0, 200, 0];
/** Side of the square. */
export const SIDE = 30;

/** A solid frame with a square at (sx, sy). */
export function squareFrame(t: number, width: number, height: number, sx: number, sy: number): VideoFrame {
  const { rgb } = solidFrame(t, width, height, BG);
  for (let y = sy; y < Math.min(height, sy + SIDE); y++) for (let x = sx; x < Math.min(width, sx + SIDE); x++) rgb.set(SQUARE, (y * width + x) * 3);
  return { t, rgb, width, height };
}

/** A solid-colour frame. */
export function solidFrame(t: number, width: number, height: number, c: [number, number, number]): VideoFrame {
  const rgb = new Uint8Array(width * height * 3);
  const row = width * 3;
  for (let x = 0; x < width; x++) rgb.set(c, x * 3);
  for (let y = 1; y < height; y++) rgb.copyWithin(y * row, 0, row);
  return { t, rgb, width, height };
}

/** The absolute path of a program on PATH, or null. */
export async function which(name: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir) continue;
    try {
      const p = join(dir, name);
      await access(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/** What ffprobe says about a video's first stream. */
export interface ProbeInfo {
  codec: string;
  width: number;
  height: number;
  pixFmt: string;
  frames: number;
  duration: number;
  formatName: string;
}

/** Runs ffprobe (counting frames by decoding them). */
export async function ffprobe(file: string): Promise<ProbeInfo> {
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-count_frames',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=codec_name,width,height,pix_fmt,nb_read_frames:format=duration,format_name',
    '-of',
    'json',
    file,
  ]);
  const j = JSON.parse(stdout) as { streams: Array<Record<string, string | number>>; format: Record<string, string> };
  const s = j.streams[0]!;
  return {
    codec: String(s.codec_name),
    width: Number(s.width),
    height: Number(s.height),
    pixFmt: String(s.pix_fmt),
    frames: Number(s.nb_read_frames),
    duration: Number(j.format.duration),
    formatName: String(j.format.format_name),
  };
}

/** Decodes frame `n` (0-based) of a video to a PNG, then to raw RGB. */
export async function decodeFrame(
  file: string,
  n: number,
  pngPath: string,
): Promise<{ data: Buffer; width: number; height: number; pixel: (x: number, y: number) => [number, number, number] }> {
  await run('ffmpeg', ['-hide_banner', '-v', 'error', '-nostdin', '-i', file, '-vf', `select=eq(n\\,${n})`, '-fps_mode', 'passthrough', '-frames:v', '1', '-y', pngPath]);
  const { data, info } = await sharp(pngPath).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    data,
    width: info.width,
    height: info.height,
    pixel: (x, y) => {
      const i = (y * info.width + x) * 3;
      return [data[i]!, data[i + 1]!, data[i + 2]!];
    },
  };
}

/** Centroid x of the square's colour in a decoded frame (null when absent). */
export function squareCentroidX(f: { data: Buffer; width: number; height: number }): number | null {
  let sum = 0;
  let n = 0;
  for (let y = 0; y < f.height; y++) {
    for (let x = 0; x < f.width; x++) {
      const i = (y * f.width + x) * 3;
      if (f.data[i]! < 70 && f.data[i + 1]! > 150 && f.data[i + 2]! < 70) {
        sum += x;
        n++;
      }
    }
  }
  return n > SIDE * SIDE * 0.5 ? sum / n : null;
}

/** True when colours a and b differ by at most `tol` in every channel. */
export function near(a: readonly number[], b: readonly number[], tol: number): boolean {
  return a.every((v, i) => Math.abs(v - b[i]!) <= tol);
}

/** Writes a fake ffmpeg that lists the real encoders minus libx264 and forwards everything else. */
export async function fakeFfmpegWithoutX264(dir: string, realFfmpeg: string): Promise<string> {
  const p = join(dir, 'ffmpeg-no-x264');
  await writeFile(p, `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = "-encoders" ]; then "${realFfmpeg}" "$@" | grep -v libx264; exit 0; fi\ndone\nexec "${realFfmpeg}" "$@"\n`);
  await chmod(p, 0o755);
  return p;
}

/** Writes a fake ffmpeg that lists the real encoders but fails every encode with a message. */
export async function fakeFfmpegFailing(dir: string, realFfmpeg: string): Promise<string> {
  const p = join(dir, 'ffmpeg-failing');
  await writeFile(
    p,
    `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = "-encoders" ]; then exec "${realFfmpeg}" "$@"; fi\ndone\ncat >/dev/null\necho "simulated encoder failure" >&2\nexit 3\n`,
  );
  await chmod(p, 0o755);
  return p;
}

/** PIDs of live processes whose command line mentions `needle`. */
export async function processesMentioning(needle: string): Promise<number[]> {
  const out: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = (await readFile(`/proc/${name}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      if (cmd.includes(needle) && !/\) Z /.test(stat)) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

/**
 * Writes a fake ffmpeg that lists the real encoders but, asked to encode, writes its pid to
 * `<dir>/ffmpeg-hanging.pid`, ignores SIGTERM and its input, and stays up for 30 s.
 */
export async function fakeFfmpegHanging(dir: string, realFfmpeg: string): Promise<{ bin: string; pidFile: string }> {
  const p = join(dir, 'ffmpeg-hanging');
  const pidFile = join(dir, 'ffmpeg-hanging.pid');
  await writeFile(
    p,
    `#!/bin/sh\nfor a in "$@"; do\n  if [ "$a" = "-encoders" ]; then exec "${realFfmpeg}" "$@"; fi\ndone\ntrap '' TERM\necho $$ > "${pidFile}.tmp"\nmv "${pidFile}.tmp" "${pidFile}"\nexec sleep 30\n`,
  );
  await chmod(p, 0o755);
  return { bin: p, pidFile };
}

/** The pid in `pidFile` once it exists (polls every 20 ms, up to `timeoutMs`). */
export async function waitPidFile(pidFile: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return Number((await readFile(pidFile, 'utf8')).trim());
    } catch {
      if (Date.now() > deadline) throw new Error(`${pidFile} did not appear within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
