/**
 * The viewer's seek index of one recording: every screen change the Replayer (recorder/replay, the
 * decoders `vncua process` uses) produces, stored in a form that needs no decoder state to apply:
 *
 *   - a KEYFRAME: the whole screen (RGB, deflated), at the first frame, on a size or connection
 *     change, and again once `KEYFRAME_MS` of recording time or `KEYFRAME_BYTES` of changed pixels
 *     have passed since the last one (only when something changed: a still screen costs nothing);
 *   - a DELTA: the 64x64 tiles an update changed, with their new pixels (deflated).
 *
 * The frame at T = the last keyframe at or before T + the deltas after it up to T, then the cursor
 * drawn at the pointer position as of T (what Replayer.frameAt(T, { cursor: true }) draws): a seek
 * never replays the RFB stream. The RFB decoders keep zlib state across rectangles (ZRLE, Tight), so
 * the stream itself cannot be resumed from a snapshot; the decoded tiles can.
 *
 * The index is built once per recording, forward, as a background walk (a seek waits only until the
 * walk has passed its instant), and cached beside the recording in `<run>/.vncua-viewer/`
 * (`index.json` + `frames.bin`), stamped with the recording files' sizes and mtimes: a recording
 * that changed (a run still being written) is indexed again. Nothing else under the run is written.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { blendCursor } from '../harness/rfb/screenshot.ts';
import type { CursorShape } from '../harness/rfb/sink.ts';
import { readRecording } from '../recorder/replay/reader.ts';
import { Replayer, resolveRecordingDir } from '../recorder/replay/replayer.ts';

/** The viewer's cache directory inside a run directory (the only thing the viewer writes under ROOT). */
export const CACHE_DIR = '.vncua-viewer';
const INDEX_FILE = 'index.json';
const FRAMES_FILE = 'frames.bin';
const FORMAT_VERSION = 1;
const TILE = 64;
/** A keyframe at least this often (recording time) while the screen changes. */
export const KEYFRAME_MS = 30_000;
/** ... or once the changed pixels since the last keyframe reach this many bytes (twice a 1280x800 screen). */
const KEYFRAME_BYTES = 2 * 1280 * 800 * 3;

/** One screen change: a keyframe or a delta, where its bytes are in frames.bin, and the cursor shown from then on. */
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

interface Stored {
  version: number;
  stamp: string;
  records: IndexRecord[];
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
  private fd: number | null = null;
  private mem: Buffer[] | null = null;
  private memLen = 0;
  /** The build's progress: every record with t <= frontier is in. */
  private frontier = -Infinity;
  private waiters: Array<() => void> = [];
  private buildError: Error | null = null;
  private building: Promise<void> | null = null;
  /** Last reconstructed frame (no cursor), to move forward from. */
  private cur: { i: number; rgb: Uint8Array; w: number; h: number } | null = null;
  private closed = false;
  private keyframeMs = KEYFRAME_MS;

  private constructor(cacheDir: string | null) {
    this.cachePath = cacheDir;
  }

  /**
   * The index of `runDir`'s recording: read from the cache when its stamp matches, else built in the
   * background (frameAt() waits only as far as it needs). `cache: false` keeps it in memory.
   */
  static async open(runDir: string, options: { cache?: boolean; keyframeMs?: number } = {}): Promise<KeyframeIndex> {
    const recDir = await resolveRecordingDir(runDir);
    const cacheDir = options.cache === false ? null : join(runDir, CACHE_DIR);
    const idx = new KeyframeIndex(cacheDir);
    const stamp = await recordingStamp(recDir);
    if (cacheDir && (await idx.tryLoad(cacheDir, stamp))) return idx;
    idx.keyframeMs = options.keyframeMs ?? KEYFRAME_MS;
    idx.building = idx.build(recDir, stamp).catch((e: unknown) => {
      idx.buildError = e as Error;
      idx.frontier = Infinity;
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
      this.fd = openSync(join(cacheDir, FRAMES_FILE), 'r');
    } catch {
      return false;
    }
    this.records.push(...stored.records);
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
        const delta = sameGeometry ? diffTiles(prev!.rgb, f.rgb, f.width, f.height) : null;
        const due = delta !== null && (u - lastKeyAt >= this.keyframeMs || bytesSinceKey + delta.pixelBytes >= KEYFRAME_BYTES);
        if (!sameGeometry || due) {
          const where = this.append(deflateRawSync(f.rgb, { level: 1 }));
          this.records.push({ t: u, key: true, conn: f.connection, w: f.width, h: f.height, ...where, cursor });
          lastKeyAt = u;
          bytesSinceKey = 0;
          prev = { rgb: f.rgb.slice(), w: f.width, h: f.height, conn: f.connection };
        } else if (delta || cursor !== this.records[this.records.length - 1]?.cursor) {
          const where = delta ? this.append(deflateRawSync(delta.bytes, { level: 1 })) : { off: 0, len: 0 };
          this.records.push({ t: u, key: false, conn: f.connection, w: f.width, h: f.height, ...where, cursor });
          if (delta) {
            bytesSinceKey += delta.pixelBytes;
            prev!.rgb.set(f.rgb);
          }
        }
      }
      this.frontier = u;
      // Let seeks in while a long recording is indexed.
      if (performance.now() - lastYield > 20) {
        this.wake();
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
    this.wake();
    if (this.cachePath && tmpFrames) {
      try {
        const stored: Stored = {
          version: FORMAT_VERSION,
          stamp,
          records: this.records,
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
    return inflateRawSync(raw);
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
   * null before the first frame. The returned buffer is the caller's.
   */
  async frameAt(t: number, options: { cursor?: boolean } = {}): Promise<ViewerFrame | null> {
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
      if (r.len > 0) applyTiles(cur.rgb, cur.w, this.read(r));
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
    await this.building?.catch(() => {});
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
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

/**
 * The 64x64 tiles that differ: a u32 count, then per tile x, y, w, h (u16 each), then the tiles' rows
 * of RGB in the same order. Null when nothing differs.
 */
export function diffTiles(prev: Uint8Array, next: Uint8Array, width: number, height: number): { bytes: Uint8Array; pixelBytes: number } | null {
  const tiles: Array<[number, number, number, number]> = [];
  for (let ty = 0; ty < height; ty += TILE) {
    const th = Math.min(TILE, height - ty);
    for (let tx = 0; tx < width; tx += TILE) {
      const tw = Math.min(TILE, width - tx);
      let differs = false;
      for (let y = ty; y < ty + th && !differs; y++) {
        const a = (y * width + tx) * 3;
        const b = a + tw * 3;
        if (Buffer.compare(Buffer.from(prev.buffer, prev.byteOffset + a, b - a), Buffer.from(next.buffer, next.byteOffset + a, b - a)) !== 0) differs = true;
      }
      if (differs) tiles.push([tx, ty, tw, th]);
    }
  }
  if (tiles.length === 0) return null;
  const pixelBytes = tiles.reduce((s, [, , w, h]) => s + w * h * 3, 0);
  const out = new Uint8Array(4 + tiles.length * 8 + pixelBytes);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, tiles.length);
  let p = 4;
  for (const [x, y, w, h] of tiles) {
    dv.setUint16(p, x);
    dv.setUint16(p + 2, y);
    dv.setUint16(p + 4, w);
    dv.setUint16(p + 6, h);
    p += 8;
  }
  for (const [x, y, w, h] of tiles) {
    for (let r = y; r < y + h; r++) {
      const a = (r * width + x) * 3;
      out.set(next.subarray(a, a + w * 3), p);
      p += w * 3;
    }
  }
  return { bytes: out, pixelBytes };
}

/** Apply diffTiles()'s output to `rgb` (width `width`). */
export function applyTiles(rgb: Uint8Array, width: number, bytes: Uint8Array): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(0);
  let p = 4 + n * 8;
  for (let i = 0; i < n; i++) {
    const q = 4 + i * 8;
    const x = dv.getUint16(q);
    const y = dv.getUint16(q + 2);
    const w = dv.getUint16(q + 4);
    const h = dv.getUint16(q + 6);
    for (let r = y; r < y + h; r++) {
      rgb.set(bytes.subarray(p, p + w * 3), (r * width + x) * 3);
      p += w * 3;
    }
  }
}

/** True when `runDir` has a viewer cache (for tests and `vncua serve`'s notes). */
export async function hasCache(runDir: string): Promise<boolean> {
  return (await stat(join(runDir, CACHE_DIR, INDEX_FILE)).catch(() => null)) !== null;
}
