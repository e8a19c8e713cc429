/**
 * The viewer's seek index of one recording: every screen change the Replayer (recorder/replay, the
 * decoders `vncua process` uses) produces, stored in a form that needs no decoder state to apply:
 *
 *   - a KEYFRAME: the whole screen, at the first frame, on a size or connection change, and again
 *     once `KEYFRAME_MS` of recording time or `KEYFRAME_BYTES` of changed pixels have passed since
 *     the last one (only when something changed: a still screen costs nothing);
 *   - a DELTA: the tight rectangles an update changed, with their new pixels.
 *
 * Both are compressed (viewer/frame-codec.ts: deflate level 1, with PNG's Sub filter when it is
 * smaller). The frame at T = the last keyframe at or before T + the deltas after it up to T, then the
 * cursor drawn at the pointer position as of T (what Replayer.frameAt(T, { cursor: true }) draws): a
 * seek never replays the RFB stream. The RFB decoders keep zlib state across rectangles (ZRLE,
 * Tight), so the stream itself cannot be resumed from a snapshot; the decoded pixels can.
 *
 * The index is built once per recording, forward, as a background walk on the server's thread that
 * yields to I/O every few milliseconds. An instant the walk has not reached yet is not waited for: it
 * is decoded directly from the recording (a second Replayer going straight to it, the walk paused
 * meanwhile), so the first frame of a run shows as soon as the recording is read. The index is cached
 * beside the recording in `<run>/.vncua-viewer/` (`index.json` + `frames.bin`), stamped with the
 * recording files' sizes and mtimes: a recording that changed (a run still being written) is indexed
 * again. Nothing else under the run is written.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { blendCursor } from '../harness/rfb/screenshot.ts';
import type { CursorShape } from '../harness/rfb/sink.ts';
import { readRecording, type Recording } from '../recorder/replay/reader.ts';
import { Replayer, resolveRecordingDir } from '../recorder/replay/replayer.ts';
import { applyRects, decodeBlob, diffRects, encodeBlob } from './frame-codec.ts';

/** The viewer's cache directory inside a run directory (the only thing the viewer writes under ROOT). */
export const CACHE_DIR = '.vncua-viewer';
const INDEX_FILE = 'index.json';
const FRAMES_FILE = 'frames.bin';
const FORMAT_VERSION = 2;
/** A keyframe at least this often (recording time) while the screen changes. */
export const KEYFRAME_MS = 30_000;
/** ... or once the changed pixels since the last keyframe reach this many bytes (twice a 1280x800 screen). */
const KEYFRAME_BYTES = 2 * 1280 * 800 * 3;
/** The build yields to other work (requests, socket writes) at least this often. */
const YIELD_MS = 4;

/** One screen change: a keyframe or a delta, where its blob is in frames.bin (len 0: none, the cursor alone changed), and the cursor shown from then on. */
export interface IndexRecord {
  t: number;
  key: boolean;
  conn: number;
  w: number;
  h: number;
  off: number;
  len: number;
  /** Index into `shapes`, or -1 when no cursor shape is known. */
  cursor: number;
}

/** What is known about the recording as a whole. */
export interface IndexSummary {
  /** When the first frame with pixels completed (null: the recording holds none). */
  firstFrameAt: number | null;
  /** Up to when the recording says what is on screen (Replayer.dataEnd). */
  dataEnd: number | null;
  /** Where the usable server data stops early ('damage' or 'undecodable'), by connection. */
  known: Array<{ conn: number; until: number; reason: 'damage' | 'undecodable' }>;
  /** The Replayer's warnings (damage, truncation, undecodable data), with codes. */
  warnings: Array<{ code: string; message: string }>;
  /** First recorded server byte. */
  startTime: number | null;
}

/** The frame at an instant, as the viewer serves it. */
export interface ViewerFrame {
  t: number;
  rgb: Uint8Array;
  width: number;
  height: number;
  connection: number;
  /** Time of the last screen change shown. */
  updateAt: number;
  /** Set when the frame is older than `t` (as Replayer's Frame.stale). */
  stale: { reason: 'damage' | 'undecodable' | 'end_of_data'; knownUntil: number } | null;
}

/** The recording's extent and damage as the run page shows them (from the cache, or from the recording once read). */
export interface RecordingExtent {
  start: number | null;
  end: number | null;
  warnings: Array<{ code: string; message: string }>;
  /** The earliest instant after which a connection's server data is unusable, and why. */
  damage: { until: number; reason: 'damage' | 'undecodable' } | null;
}

/** A record in index.json: [t, key (1/0), conn, w, h, off, len, cursor]. */
type StoredRecord = [number, number, number, number, number, number, number, number];

interface Stored {
  version: number;
  stamp: string;
  /** frames.bin's size when written (a shorter file is not used). */
  framesBytes: number;
  records: StoredRecord[];
  shapes: Array<{ hotX: number; hotY: number; width: number; height: number; rgba: string }>;
  pointers: Record<string, number[]>;
  summary: IndexSummary;
}

/** A stamp of the recording's files: names, sizes, mtimes. */
async function recordingStamp(recDir: string): Promise<string> {
  const names = (await readdir(recDir)).filter((n) => n === 'recording.json' || n.endsWith('.bin')).sort();
  const h = createHash('sha256');
  h.update(`v${FORMAT_VERSION}`);
  for (const n of names) {
    const s = await stat(join(recDir, n));
    h.update(`|${n}:${s.size}:${s.mtimeMs}`);
  }
  return h.digest('hex').slice(0, 32);
}

/** The extent of a recording as read (before any decoding): RecordingExtent from the reader and a Replayer's bounds. */
export function recordingExtent(recording: Recording): RecordingExtent {
  const r = new Replayer(recording);
  let damage: RecordingExtent['damage'] = null;
  for (const c of recording.connections) {
    const until = c.server?.damagedAfter;
    if (until !== undefined && (damage === null || until < damage.until)) damage = { until, reason: 'damage' };
  }
  return {
    start: Number.isFinite(r.startTime) ? r.startTime : null,
    end: Number.isFinite(r.dataEnd) ? r.dataEnd : null,
    warnings: recording.warnings.map((w) => ({ code: w.code, message: w.message })),
    damage,
  };
}

/** The seek index of one run's recording; open() with a run directory. */
export class KeyframeIndex {
  readonly records: IndexRecord[] = [];
  readonly shapes: CursorShape[] = [];
  /** Pointer positions per connection: flat [t, x, y, t, x, y, ...]. */
  readonly pointers = new Map<number, number[]>();
  summary: IndexSummary = { firstFrameAt: null, dataEnd: null, known: [], warnings: [], startTime: null };
  /** True once every update was indexed. */
  complete = false;
  /** Where the cache lives, or null when it could not be written (the index is then in memory only). */
  cachePath: string | null;
  /** Why the index is not cached, when it is not. */
  cacheProblem: string | null = null;
  /** How the index was obtained: read from the cache, or built now. */
  source: 'cache' | 'built' = 'built';
  /** Build time in ms (0 when read from the cache). */
  buildMs = 0;
  /** Frames answered by decoding the recording directly (instants the build had not reached yet). */
  directFrames = 0;
  private fd: number | null = null;
  private mem: Buffer[] | null = null;
  private memLen = 0;
  /** The build's progress: every record with t <= frontier is in. */
  private frontier = -Infinity;
  private waiters: Array<() => void> = [];
  private buildError: Error | null = null;
  private building: Promise<void> | null = null;
  /** The recording while the build runs (then dropped), and when it has been read. */
  private recording: Recording | null = null;
  private recordingRead: Promise<void> = Promise.resolve();
  private onRecordingRead: () => void = () => {};
  private firstExtent: RecordingExtent | null = null;
  /** A second Replayer for instants past the frontier, and the queue of its requests (it is not re-entrant). */
  private direct: Replayer | null = null;
  private directQueue: Promise<unknown> = Promise.resolve();
  private directBusy = 0;
  private directIdle: Array<() => void> = [];
  /** Last reconstructed frame (no cursor), to move forward from. */
  private cur: { i: number; rgb: Uint8Array; w: number; h: number } | null = null;
  private closed = false;
  private keyframeMs = KEYFRAME_MS;

  private constructor(cacheDir: string | null) {
    this.cachePath = cacheDir;
  }

  /**
   * The index of `runDir`'s recording: read from the cache when its stamp matches, else built in the
   * background (frameAt() never waits for it). `cache: false` keeps it in memory.
   */
  static async open(runDir: string, options: { cache?: boolean; keyframeMs?: number } = {}): Promise<KeyframeIndex> {
    const recDir = await resolveRecordingDir(runDir);
    const cacheDir = options.cache === false ? null : join(runDir, CACHE_DIR);
    const idx = new KeyframeIndex(cacheDir);
    const stamp = await recordingStamp(recDir);
    if (cacheDir && (await idx.tryLoad(cacheDir, stamp))) return idx;
    idx.keyframeMs = options.keyframeMs ?? KEYFRAME_MS;
    idx.recordingRead = new Promise<void>((r) => {
      idx.onRecordingRead = r;
    });
    idx.building = idx.build(recDir, stamp).catch((e: unknown) => {
      idx.buildError = e as Error;
      idx.frontier = Infinity;
      idx.onRecordingRead();
      idx.wake();
    });
    return idx;
  }

  private async tryLoad(cacheDir: string, stamp: string): Promise<boolean> {
    let stored: Stored;
    try {
      stored = JSON.parse(await readFile(join(cacheDir, INDEX_FILE), 'utf8')) as Stored;
    } catch {
      return false;
    }
    if (stored.version !== FORMAT_VERSION || stored.stamp !== stamp) return false;
    try {
      if ((await stat(join(cacheDir, FRAMES_FILE))).size !== stored.framesBytes) return false;
      this.fd = openSync(join(cacheDir, FRAMES_FILE), 'r');
    } catch {
      return false;
    }
    for (const [t, key, conn, w, h, off, len, cursor] of stored.records) this.records.push({ t, key: key === 1, conn, w, h, off, len, cursor });
    for (const s of stored.shapes) this.shapes.push({ hotX: s.hotX, hotY: s.hotY, width: s.width, height: s.height, rgba: new Uint8Array(Buffer.from(s.rgba, 'base64')) });
    for (const [k, v] of Object.entries(stored.pointers)) this.pointers.set(Number(k), v);
    this.summary = stored.summary;
    this.complete = true;
    this.frontier = Infinity;
    this.source = 'cache';
    return true;
  }

  /** Wait for the build to finish (rejects if it failed). */
  async whenComplete(): Promise<void> {
    await this.building;
    if (this.buildError) throw this.buildError;
  }

  /**
   * The recording's extent and damage: from the index once complete (damage found by decoding
   * included), else from the recording as read (rejects when it cannot be read).
   */
  async extent(): Promise<RecordingExtent> {
    if (!this.complete) await this.recordingRead;
    if (this.complete) {
      const known = this.summary.known.slice().sort((a, b) => a.until - b.until)[0];
      return {
        start: this.summary.startTime,
        end: this.summary.dataEnd,
        warnings: this.summary.warnings,
        damage: known ? { until: known.until, reason: known.reason } : null,
      };
    }
    if (this.firstExtent) return this.firstExtent;
    throw this.buildError ?? new Error('internal: the recording was read but gave no extent');
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async reach(t: number): Promise<void> {
    while (this.frontier < t && !this.complete && !this.buildError) await new Promise<void>((r) => this.waiters.push(r));
    if (this.buildError && this.records.length === 0) throw this.buildError;
  }

  private append(data: Buffer): { off: number; len: number } {
    const off = this.memLen;
    if (this.fd !== null) writeSync(this.fd, data, 0, data.length, off);
    else this.mem!.push(data);
    this.memLen += data.length;
    return { off, len: data.length };
  }

  private async build(recDir: string, stamp: string): Promise<void> {
    const t0 = performance.now();
    const recording = await readRecording(recDir);
    this.recording = recording;
    this.firstExtent = recordingExtent(recording);
    this.onRecordingRead();
    const replayer = new Replayer(recording);
    let tmpFrames: string | null = null;
    if (this.cachePath) {
      try {
        await mkdir(this.cachePath, { recursive: true });
        tmpFrames = join(this.cachePath, `${FRAMES_FILE}.tmp-${process.pid}-${Date.now()}`);
        this.fd = openSync(tmpFrames, 'w+');
      } catch (e) {
        this.cacheProblem = `the cache ${this.cachePath} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); the index is kept in memory`;
        this.cachePath = null;
      }
    }
    if (this.fd === null) this.mem = [];
    // Pointer events per connection (what ConnectionReplayer.pointerAt reads).
    for (const c of recording.connections) {
      const ptr: number[] = [];
      for (const p of replayer.pointerTrack(c.index)) ptr.push(p.t, p.x, p.y);
      this.pointers.set(c.index, ptr);
    }
    const shapeIds = new Map<CursorShape, number>();
    let prev: { rgb: Uint8Array; w: number; h: number; conn: number } | null = null;
    let lastKeyAt = -Infinity;
    let bytesSinceKey = 0;
    let t = -Infinity;
    let first: number | null = null;
    let lastYield = performance.now();
    for (;;) {
      if (this.closed) return;
      // Direct frames first: the walk waits while one is being decoded.
      while (this.directBusy > 0) await new Promise<void>((r) => this.directIdle.push(r));
      const u = await replayer.nextUpdateAfter(t);
      if (u === null) break;
      t = u;
      const f = await replayer.frameAt(u);
      if (f) {
        first ??= u;
        const cur = await replayer.cursorAt(u);
        let cursor = -1;
        if (cur?.shape) {
          let id = shapeIds.get(cur.shape);
          if (id === undefined) {
            id = this.shapes.length;
            this.shapes.push(cur.shape);
            shapeIds.set(cur.shape, id);
          }
          cursor = id;
        }
        const sameGeometry = prev !== null && prev.w === f.width && prev.h === f.height && prev.conn === f.connection;
        const delta = sameGeometry ? diffRects(prev!.rgb, f.rgb, f.width, f.height) : null;
        const due = delta !== null && (u - lastKeyAt >= this.keyframeMs || bytesSinceKey + delta.pixelBytes >= KEYFRAME_BYTES);
        if (!sameGeometry || due) {
          const where = this.append(encodeBlob(f.rgb));
          this.records.push({ t: u, key: true, conn: f.connection, w: f.width, h: f.height, ...where, cursor });
          lastKeyAt = u;
          bytesSinceKey = 0;
          prev = { rgb: f.rgb.slice(), w: f.width, h: f.height, conn: f.connection };
        } else if (delta || cursor !== this.records[this.records.length - 1]?.cursor) {
          const where = delta ? this.append(encodeBlob(delta.bytes)) : { off: 0, len: 0 };
          this.records.push({ t: u, key: false, conn: f.connection, w: f.width, h: f.height, ...where, cursor });
          if (delta) {
            bytesSinceKey += delta.pixelBytes;
            applyRects(prev!.rgb, prev!.w, delta.bytes);
          }
        }
      }
      this.frontier = u;
      this.wake();
      // Let requests in (seeks, other pages, socket writes) every few milliseconds.
      if (performance.now() - lastYield > YIELD_MS) {
        await new Promise<void>((r) => setImmediate(r));
        lastYield = performance.now();
      }
    }
    const known: IndexSummary['known'] = [];
    for (const k of replayer.knownByConnection()) known.push(k);
    // Connections the walk dropped (older ones) keep their damage in the recording's warnings; add stream damage from the reader.
    for (const c of recording.connections) {
      if (c.server?.damagedAfter !== undefined && !known.some((k) => k.conn === c.index)) known.push({ conn: c.index, until: c.server.damagedAfter, reason: 'damage' });
    }
    const dataEnd = replayer.dataEnd;
    const start = replayer.startTime;
    this.summary = {
      firstFrameAt: first,
      dataEnd: Number.isFinite(dataEnd) ? dataEnd : null,
      known,
      warnings: replayer.warnings.map((w) => ({ code: w.code, message: w.message })),
      startTime: Number.isFinite(start) ? start : null,
    };
    this.complete = true;
    this.frontier = Infinity;
    this.buildMs = performance.now() - t0;
    this.recording = null;
    this.direct = null;
    this.wake();
    if (this.cachePath && tmpFrames) {
      try {
        const stored: Stored = {
          version: FORMAT_VERSION,
          stamp,
          framesBytes: this.memLen,
          records: this.records.map((r) => [r.t, r.key ? 1 : 0, r.conn, r.w, r.h, r.off, r.len, r.cursor]),
          shapes: this.shapes.map((s) => ({ hotX: s.hotX, hotY: s.hotY, width: s.width, height: s.height, rgba: Buffer.from(s.rgba).toString('base64') })),
          pointers: Object.fromEntries(this.pointers),
          summary: this.summary,
        };
        await rename(tmpFrames, join(this.cachePath, FRAMES_FILE));
        const tmpIndex = join(this.cachePath, `${INDEX_FILE}.tmp-${process.pid}`);
        await writeFile(tmpIndex, JSON.stringify(stored));
        await rename(tmpIndex, join(this.cachePath, INDEX_FILE));
      } catch (e) {
        this.cacheProblem = `the cache could not be written (${(e as Error).message}); the index is kept for this session only`;
        await rm(tmpFrames, { force: true }).catch(() => {});
      }
    }
  }

  private read(r: IndexRecord): Uint8Array {
    if (r.len === 0) return new Uint8Array(0);
    let raw: Buffer;
    if (this.fd !== null) {
      raw = Buffer.allocUnsafe(r.len);
      readSync(this.fd, raw, 0, r.len, r.off);
    } else {
      raw = locate(this.mem!, r.off, r.len);
    }
    return decodeBlob(raw);
  }

  /** Index of the last record with t <= T (-1 when none). */
  private recordAt(t: number): number {
    const rs = this.records;
    let lo = 0;
    let hi = rs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (rs[mid]!.t <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** The instants of every screen change (keyframes and deltas), for the timeline. */
  changeTimes(): number[] {
    return this.records.map((r) => r.t);
  }

  /**
   * The screen as of `t` with the cursor drawn (Replayer.frameAt(t, { cursor: true })'s pixels), or
   * null before the first frame. The returned buffer is the caller's. An instant the build has not
   * reached yet is decoded directly from the recording.
   */
  async frameAt(t: number, options: { cursor?: boolean } = {}): Promise<ViewerFrame | null> {
    if (!this.complete && this.frontier < t) {
      await this.recordingRead;
      if (!this.complete && this.frontier < t && this.recording) return this.directFrameAt(t, options.cursor ?? true);
    }
    await this.reach(t);
    const i = this.recordAt(t);
    if (i < 0) return null;
    const target = this.records[i]!;
    // From the current frame when it is on the way (same keyframe run, not past t), else from the keyframe.
    let k = i;
    while (k > 0 && !this.records[k]!.key) k--;
    let cur = this.cur;
    if (!cur || cur.i > i || cur.i < k) {
      const kr = this.records[k]!;
      cur = { i: k, rgb: this.read(kr), w: kr.w, h: kr.h };
    }
    for (let j = cur.i + 1; j <= i; j++) {
      const r = this.records[j]!;
      if (r.len > 0) applyRects(cur.rgb, cur.w, this.read(r));
    }
    cur.i = i;
    this.cur = cur;
    const rgb = cur.rgb.slice();
    if (options.cursor ?? true) {
      const shape = target.cursor >= 0 ? this.shapes[target.cursor] : undefined;
      const p = shape ? pointerAt(this.pointers.get(target.conn) ?? [], t) : null;
      if (shape && p) blendCursor(rgb, target.w, target.h, shape, p.x, p.y, 3);
    }
    return { t, rgb, width: target.w, height: target.h, connection: target.conn, updateAt: target.t, stale: this.staleness(target.conn, t) };
  }

  /** The frame at `t` from a Replayer of its own (one request at a time; the build waits meanwhile). */
  private directFrameAt(t: number, cursor: boolean): Promise<ViewerFrame | null> {
    this.directBusy++;
    const job = this.directQueue.then(async () => {
      const recording = this.recording;
      if (!recording) return this.frameAt(t, { cursor }); // the build completed meanwhile
      this.direct ??= new Replayer(recording);
      const f = await this.direct.frameAt(t, { cursor });
      this.directFrames++;
      return f
        ? {
            t,
            rgb: f.rgb.slice(),
            width: f.width,
            height: f.height,
            connection: f.connection,
            updateAt: f.updateAt,
            stale: f.stale ? { reason: f.stale.reason, knownUntil: f.stale.knownUntil } : null,
          }
        : null;
    });
    const done = () => {
      if (--this.directBusy === 0) {
        const w = this.directIdle;
        this.directIdle = [];
        for (const f of w) f();
      }
    };
    this.directQueue = job.then(done, done);
    return job;
  }

  private staleness(conn: number, t: number): ViewerFrame['stale'] {
    const k = this.summary.known.find((x) => x.conn === conn);
    if (k && k.until < t) return { reason: k.reason, knownUntil: k.until };
    const end = this.summary.dataEnd;
    if (this.complete && end !== null && end < t) return { reason: 'end_of_data', knownUntil: end };
    return null;
  }

  /** Stop the build (if running) and close the cache file. */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.directIdle;
    this.directIdle = [];
    for (const f of w) f();
    await this.building?.catch(() => {});
    await this.directQueue.catch(() => {});
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
    this.recording = null;
    this.direct = null;
  }
}

function pointerAt(flat: number[], t: number): { x: number; y: number } | null {
  let lo = 0;
  let hi = flat.length / 3;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (flat[mid * 3]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 ? { x: flat[(lo - 1) * 3 + 1]!, y: flat[(lo - 1) * 3 + 2]! } : null;
}

function locate(chunks: Buffer[], off: number, len: number): Buffer {
  let pos = 0;
  for (const c of chunks) {
    if (off >= pos && off + len <= pos + c.length) return c.subarray(off - pos, off - pos + len);
    pos += c.length;
  }
  throw new Error('internal: record outside the in-memory index');
}

/** True when `runDir` has a viewer cache (for tests and `vncua serve`'s notes). */
export async function hasCache(runDir: string): Promise<boolean> {
  return (await stat(join(runDir, CACHE_DIR, INDEX_FILE)).catch(() => null)) !== null;
}
