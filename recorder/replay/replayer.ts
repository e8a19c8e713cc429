/**
 * The Replayer: the screen of a recording as of any instant. The frame at `t` is the state after the last
 * COMPLETE FramebufferUpdate whose bytes all arrived at or before `t` (an update still in flight at `t` is
 * not shown), decoded by the live client's own decoders. Across re-connections (connection k ≥ 1), the
 * frame comes from the newest connection that has completed an update by `t`.
 *
 * Ask for instants in non-decreasing order: each step decodes only the new data. An earlier instant
 * restarts the replay from the beginning (correct, but slow).
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { CursorShape } from '../../harness/rfb/sink.ts';
import { inputEvents, type ClientInputEvent } from '../../harness/rfb/client-stream.ts';
import { ConnectionReplayer, parseClientStream } from './connection.ts';
import { readRecording, type Recording, type RecordingWarning } from './reader.ts';

/** The screen as of an instant. Treat `rgb` as read-only: the same buffer is handed out again while nothing changes. */
export interface Frame {
  /** The instant asked for (epoch ms). */
  t: number;
  /** width * height * 3 bytes, RGB. */
  rgb: Uint8Array;
  width: number;
  height: number;
  /** Equal keys mean identical pixels. */
  key: string;
  /** Which recorded connection it comes from. */
  connection: number;
  /** When the last update shown completed (epoch ms). */
  updateAt: number;
  /** Set when the frame is older than `t`: the recording does not say what the screen was at `t` (see Stale). */
  stale: Stale | null;
}

/** Why a frame is older than its instant. */
export type StaleReason = 'damage' | 'undecodable' | 'end_of_data';

/**
 * A frame older than the instant asked: `knownUntil` is the last instant whose screen it is known to show.
 * 'damage': the recorded server stream is damaged after knownUntil (truncated, times out of order);
 * 'undecodable': its bytes after knownUntil cannot be replayed (rejected by the decoders, or a pixel format
 * vncua cannot decode); 'end_of_data': the recording ends at knownUntil, before the instant asked.
 */
export interface Stale {
  reason: StaleReason;
  knownUntil: number;
}

/** Options of frameAt(). */
export interface FrameOptions {
  /** Draw the cursor shape (Cursor pseudo-encoding) at the last pointer position the client sent (default false). */
  cursor?: boolean;
}

/** `dir` itself when it is a recording, or `dir/recording` when `dir` is a run's output directory. */
export async function resolveRecordingDir(dir: string): Promise<string> {
  try {
    if ((await stat(join(dir, 'recording'))).isDirectory()) return join(dir, 'recording');
  } catch {
    // not a run directory
  }
  return dir;
}

/** Replays a whole recording (all its connections). */
export class Replayer {
  readonly recording: Recording;
  /** The recording's warnings, then those found while replaying. */
  readonly warnings: RecordingWarning[];
  private conns: Array<ConnectionReplayer | null> = [];
  private maxT = -Infinity;
  private last: Frame | null = null;
  private input: ClientInputEvent[] = [];

  /** Read `dir` (a recording, or a run directory holding recording/) and prepare to replay it. */
  static async open(dir: string): Promise<Replayer> {
    return new Replayer(await readRecording(await resolveRecordingDir(dir)));
  }

  constructor(recording: Recording) {
    this.recording = recording;
    this.warnings = [...recording.warnings];
    this.reset();
  }

  private reset(): void {
    const seen = new Set(this.warnings.map((w) => `${w.code}|${w.message}`));
    const warn = (w: RecordingWarning) => {
      const k = `${w.code}|${w.message}`;
      if (seen.has(k)) return;
      seen.add(k);
      this.warnings.push(w);
    };
    this.conns = this.recording.connections.filter((c) => c.server).map((c) => new ConnectionReplayer(c, warn));
    const clientOnly = this.recording.connections.filter((c) => !c.server && c.client).map((c) => inputEvents(parseClientStream(c.client!).messages));
    this.input = [...this.conns.flatMap((c) => c!.input), ...clientOnly.flat()].sort((a, b) => a.t - b.t);
    this.maxT = -Infinity;
    this.last = null;
  }

  /** Time of the first recorded server byte (Infinity when none). */
  get startTime(): number {
    return Math.min(Infinity, ...this.recording.connections.map((c) => (c.server && c.server.times.length > 0 ? c.server.times[0]! : Infinity)));
  }

  /** Time of the last usable recorded server byte (-Infinity when none). */
  get endTime(): number {
    return Math.max(-Infinity, ...this.recording.connections.map((c) => (c.server && c.server.times.length > 0 ? c.server.times[c.server.times.length - 1]! : -Infinity)));
  }

  /**
   * Up to when the recording says what was on screen (epoch ms): the last byte recorded in either direction,
   * or a connection's close time from recording.json when later (a static screen sends nothing).
   */
  get dataEnd(): number {
    let end = -Infinity;
    for (const c of this.recording.connections) {
      for (const s of [c.client, c.server]) if (s && s.times.length > 0) end = Math.max(end, s.times[s.times.length - 1]!);
      if (c.closedAt !== null) end = Math.max(end, c.closedAt);
    }
    return end;
  }

  /** Every pointer and key event the client(s) sent, in time order. */
  inputEvents(): ClientInputEvent[] {
    return [...this.input];
  }

  private async prepare(t: number): Promise<void> {
    if (t < this.maxT) this.reset();
    this.maxT = t;
  }

  /** The connection whose screen is shown at `t` (after bringing it up to `t`), or null before any complete update. */
  private async active(t: number): Promise<{ conn: ConnectionReplayer; i: number } | null> {
    for (let i = this.conns.length - 1; i >= 0; i--) {
      const c = this.conns[i];
      if (!c || c.startTime > t) continue;
      await c.ensure(t);
      if (c.hasPixels) {
        for (let j = 0; j < i; j++) this.conns[j] = null; // older connections are never shown again
        return { conn: c, i };
      }
    }
    return null;
  }

  /** The screen as of `t`, or null when no update had completed by then (or the recording holds none). */
  async frameAt(t: number, options: FrameOptions = {}): Promise<Frame | null> {
    await this.prepare(t);
    const a = await this.active(t);
    if (!a) return null;
    const cursor = options.cursor ?? false;
    const key = a.conn.frameKey(t, cursor);
    if (this.last && key === this.last.key) return { ...this.last, t, stale: this.staleness(a.conn, t) };
    const f = await a.conn.frame(t, cursor);
    if (!f) return null;
    this.last = { t, rgb: f.rgb, width: f.width, height: f.height, key: f.key, connection: a.conn.index, updateAt: f.updateAt, stale: this.staleness(a.conn, t) };
    return this.last;
  }

  /** Is the screen of `conn` (brought up to `t`) older than `t`? */
  private staleness(conn: ConnectionReplayer, t: number): Stale | null {
    const k = conn.known;
    if (k && k.until < t) return { reason: k.reason, knownUntil: k.until };
    const end = this.dataEnd;
    if (end < t) return { reason: 'end_of_data', knownUntil: end };
    return null;
  }

  /**
   * Up to when the screen shown from `t` on is known: the end of the data, or earlier where the connection
   * shown at `t` is damaged or cannot be replayed (as far as decoded so far).
   */
  async knownUntil(t: number): Promise<number> {
    await this.prepare(t);
    const a = await this.active(t);
    const k = a?.conn.known;
    return Math.min(this.dataEnd, k ? k.until : Infinity);
  }

  /** When the first frame with pixels completed (epoch ms), or null if none; does not move this replayer. */
  async firstFrameAt(): Promise<number | null> {
    const scratch = new Replayer(this.recording);
    let t = -Infinity;
    for (;;) {
      const u = await scratch.nextUpdateAfter(t);
      if (u === null) return null;
      if (await scratch.frameAt(u)) return u;
      t = u;
    }
  }

  /** The pointer position and cursor shape as of `t` (what frameAt(t, { cursor: true }) draws), or null before any frame. */
  async cursorAt(t: number): Promise<{ pointer: { x: number; y: number } | null; shape: CursorShape | null } | null> {
    await this.prepare(t);
    const a = await this.active(t);
    return a ? a.conn.cursorAt(t) : null;
  }

  /** The pointer positions connection `index`'s client sent, in time order (what the cursor is drawn at); empty for an unknown or dropped connection. */
  pointerTrack(index: number): ReadonlyArray<{ t: number; x: number; y: number }> {
    return this.conns.find((c) => c?.index === index)?.pointer ?? [];
  }

  /** Per connection still held: up to when its screen is known, when it stops early (as far as decoded so far). */
  knownByConnection(): Array<{ conn: number; until: number; reason: 'damage' | 'undecodable' }> {
    const out: Array<{ conn: number; until: number; reason: 'damage' | 'undecodable' }> = [];
    for (const c of this.conns) {
      const k = c?.known;
      if (c && k) out.push({ conn: c.index, until: k.until, reason: k.reason });
    }
    return out;
  }

  /** Rectangles decoded so far by encoding number, over the connections still held. */
  rectStats(): Map<number, number> {
    const out = new Map<number, number>();
    for (const c of this.conns) if (c) for (const [e, n] of c.rectsByEncoding) out.set(e, (out.get(e) ?? 0) + n);
    return out;
  }

  /** When the screen next changes after `t` (an update completing, or a new connection's first update), or null if never. */
  async nextUpdateAfter(t: number): Promise<number | null> {
    await this.prepare(t);
    const a = await this.active(t);
    let best: number | null = null;
    const consider = (u: number | null) => {
      if (u !== null && (best === null || u < best)) best = u;
    };
    if (a) consider(await a.conn.nextUpdateAfter(t));
    for (let i = a ? a.i + 1 : 0; i < this.conns.length; i++) {
      const c = this.conns[i];
      if (!c) continue;
      consider(await c.nextUpdateAfter(t));
      if (best !== null && c.startTime > best) break;
    }
    return best;
  }
}

/** A frame of a fixed-rate frame sequence. */
export interface VideoFrame {
  t: number;
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** Options of iterateFrames(). */
export interface IterateFramesOptions {
  /** Frames per second of recording time (real speed). */
  fps: number;
  /** Draw the cursor at the pointer position (default false). */
  cursor?: boolean;
  /** First instant (default: when the first frame with pixels completed). */
  from?: number;
  /** Last instant (default: the end of the recorded data, `dataEnd`: a still screen sends nothing until the session closes). */
  to?: number;
}

/**
 * The screen at a fixed rate over the whole recording (`runOrRecordingDir`: a run directory holding
 * recording/, or the recording itself): frames at from, from + 1/fps, ... ≤ to. Unchanged frames share
 * their buffer (treat it as read-only).
 */
export async function* iterateFrames(runOrRecordingDir: string, options: IterateFramesOptions): AsyncIterable<VideoFrame> {
  if (!(options.fps > 0 && Number.isFinite(options.fps))) throw new RangeError(`fps must be a positive number, got ${options.fps}`);
  const replay = await Replayer.open(runOrRecordingDir);
  const from = options.from ?? (await replay.firstFrameAt());
  if (from === null) return;
  const to = options.to ?? replay.dataEnd;
  const step = 1000 / options.fps;
  for (let k = 0; ; k++) {
    const t = from + k * step;
    if (t > to) break;
    const f = await replay.frameAt(t, { cursor: options.cursor ?? false });
    if (f) yield { t, rgb: f.rgb, width: f.width, height: f.height };
  }
}
