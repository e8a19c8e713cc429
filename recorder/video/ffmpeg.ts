/**
 * Finding ffmpeg and picking a codec: the binary is `options.ffmpegPath`, else `$VNCUA_FFMPEG`,
 * else `ffmpeg` on PATH. libx264 → MP4 (H.264, yuv420p, faststart); without it libvpx-vp9 or
 * libvpx → WebM; without any of them there is no video.
 */
import { type ExecFileException, execFile } from 'node:child_process';

/** A codec choice: container, codec name (as ffprobe reports it) and the ffmpeg output arguments. */
export interface CodecChoice {
  container: 'mp4' | 'webm';
  codec: 'h264' | 'vp9' | 'vp8';
  encoder: 'libx264' | 'libvpx-vp9' | 'libvpx';
  /** Output options (before the output path). */
  args: string[];
}

/** The ffmpeg binary to use: the option, else $VNCUA_FFMPEG, else `ffmpeg` (looked up on PATH). */
export function resolveFfmpeg(ffmpegPath?: string): string {
  if (ffmpegPath) return ffmpegPath;
  const env = process.env.VNCUA_FFMPEG;
  return env && env.length > 0 ? env : 'ffmpeg';
}

/** The codecs in order of preference. */
export const CODECS: readonly CodecChoice[] = [
  {
    container: 'mp4',
    codec: 'h264',
    encoder: 'libx264',
    args: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', '-f', 'mp4'],
  },
  {
    container: 'webm',
    codec: 'vp9',
    encoder: 'libvpx-vp9',
    args: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '35', '-pix_fmt', 'yuv420p', '-f', 'webm'],
  },
  {
    container: 'webm',
    codec: 'vp8',
    encoder: 'libvpx',
    args: ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '2M', '-crf', '10', '-pix_fmt', 'yuv420p', '-f', 'webm'],
  },
];

/** Video encoder names listed by `ffmpeg -hide_banner -encoders` output. */
export function parseEncoders(output: string): Set<string> {
  const names = new Set<string>();
  const lines = output.split('\n');
  // The legend (" V..... = Video") ends at the " ------" line; encoders follow.
  const sep = lines.findIndex((l) => /^\s*-{3,}\s*$/.test(l));
  for (const line of lines.slice(sep + 1)) {
    // " V....D libx264              libx264 H.264 / AVC ..."
    const m = /^\s*([VAS][A-Z.]{5})\s+(\S+)/.exec(line);
    if (m && m[1]!.startsWith('V')) names.add(m[2]!);
  }
  return names;
}

/** What probing ffmpeg found. */
export type FfmpegProbe = { found: false; reason: string } | { found: true; encoders: Set<string>; codec: CodecChoice | null };

/** How `<bin> -hide_banner -encoders` ended: its output, and the error execFile gave (none when it exited 0). */
interface EncodersRun {
  stdout: string;
  stderr: string;
  error: ExecFileException | null;
}

/** Runs `<bin> -hide_banner -encoders` (SIGKILLed when `signal` fires or after `timeoutMs`). */
function listEncoders(bin: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<EncodersRun> {
  return new Promise((resolve) => {
    const child = execFile(
      bin,
      ['-hide_banner', '-encoders'],
      { encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 4 * 1024 * 1024, signal },
      (error, stdout, stderr) => resolve({ stdout, stderr, error }),
    );
    child.stdin?.end();
  });
}

/** Runs `<bin> -hide_banner -encoders` and picks the best available codec. */
export async function probeFfmpeg(bin: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<FfmpegProbe> {
  const r = await listEncoders(bin, opts.signal, opts.timeoutMs ?? 15_000);
  const code = r.error?.code;
  if (code === 'ENOENT' || code === 'EACCES') return { found: false, reason: `${bin} ${code === 'ENOENT' ? 'not found' : 'not executable'}` };
  if (r.error?.name === 'AbortError' || r.error?.killed) return { found: false, reason: `${bin} -encoders did not answer` };
  const encoders = parseEncoders(r.stdout);
  if (r.error && encoders.size === 0) return { found: false, reason: `${bin} -encoders failed: ${r.stderr.trim().split('\n').pop() ?? ''}` };
  return { found: true, encoders, codec: CODECS.find((c) => encoders.has(c.encoder)) ?? null };
}
