/**
 * One recorded direction of one connection: `<dir>.rfb.bin` (the bytes) and `<dir>.time.bin`
 * (16-byte time records). Chunks go to the kernel as they come, data strictly before the time
 * record that points at it, so a `kill -9` leaves a consistent prefix on disk.
 *
 * Two write modes:
 * - `sync` (default): each chunk and its record are written (pwrite into the page cache) right after
 *   the chunk was forwarded, before the next event is handled: a `kill -9` loses at most the chunk
 *   being handled. Costs the event loop ~25 µs per 64 KiB chunk here, after the forward, so not on
 *   that chunk's way.
 * - `async`: chunks (which the socket handed over and nobody reuses) are written by libuv's thread
 *   pool with `writev`; chunks that arrive meanwhile are coalesced into the next `writev`, and their
 *   time records into one write after it. The event loop pays ~2 µs per chunk, and a slow disk does
 *   not stall the relay; but chunks not yet written are lost to a `kill -9` (measured: ~2 MB under a
 *   flood of full frames), and the writes share the thread pool with sharp's PNG encodes. Past
 *   `maxPendingBytes` the relay pauses its reader until the disk catches up.
 */
import fs from 'node:fs';
import { promisify } from 'node:util';
import { TIME_RECORD_BYTES, writeTimeRecord } from './format.ts';

const writev = promisify(fs.writev);
const write = promisify(fs.write);
const close = promisify(fs.close);

/** How chunks reach the disk (see the module comment). */
export type WriteMode = 'async' | 'sync';

/** Most chunks put in one writev (libuv splits larger ones at IOV_MAX anyway). */
const MAX_BATCH_CHUNKS = 512;

/** Writes one direction's .rfb.bin and .time.bin. */
export class StreamFile {
  /** Bytes appended so far (the length the next record will carry). */
  total = 0;
  /** The first write error, after which nothing more is written. */
  error: Error | null = null;
  private dataPos = 0;
  private timePos = 0;
  private chunks: Uint8Array[] = [];
  private times: number[] = [];
  private pendingBytes = 0;
  private busy = false;
  private closed: Promise<void> | null = null;
  private idleWaiters: Array<() => void> = [];

  private constructor(
    private readonly fdData: number,
    private readonly fdTime: number,
    private readonly mode: WriteMode,
    private readonly maxPendingBytes: number,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Create (truncate) both files; throws the fs error. */
  static open(dataPath: string, timePath: string, opts: { mode: WriteMode; maxPendingBytes: number; onError: (e: Error) => void }): StreamFile {
    const fdData = fs.openSync(dataPath, 'w');
    let fdTime: number;
    try {
      fdTime = fs.openSync(timePath, 'w');
    } catch (e) {
      fs.closeSync(fdData);
      throw e;
    }
    return new StreamFile(fdData, fdTime, opts.mode, opts.maxPendingBytes, opts.onError);
  }

  /** True while more than maxPendingBytes wait for the disk (the relay should pause its reader until whenDrained()). */
  get congested(): boolean {
    return this.pendingBytes > this.maxPendingBytes;
  }

  /** Record `chunk`, received at `t` (epoch ms, as `now()` returned it). */
  append(chunk: Uint8Array, t: number): void {
    if (this.error || this.closed) return;
    this.total += chunk.byteLength;
    if (this.mode === 'sync') {
      try {
        writeAllSync(this.fdData, chunk, this.dataPos);
        this.dataPos += chunk.byteLength;
        const rec = Buffer.allocUnsafe(TIME_RECORD_BYTES);
        writeTimeRecord(rec, 0, t, this.total);
        writeAllSync(this.fdTime, rec, this.timePos);
        this.timePos += TIME_RECORD_BYTES;
      } catch (e) {
        this.fail(e);
      }
      return;
    }
    this.chunks.push(chunk);
    this.times.push(t, this.total);
    this.pendingBytes += chunk.byteLength;
    if (!this.busy) void this.drain();
  }

  /** Resolves once everything appended so far is written (or failed). */
  whenDrained(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Write what is pending, then close both files; idempotent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      await this.whenDrained();
      await Promise.allSettled([close(this.fdData), close(this.fdTime)]);
    })();
    return this.closed;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.chunks.length > 0 && !this.error) {
        const n = Math.min(this.chunks.length, MAX_BATCH_CHUNKS);
        const chunks = this.chunks.splice(0, n);
        const times = this.times.splice(0, 2 * n);
        let bytes = 0;
        for (const c of chunks) bytes += c.byteLength;
        const recs = Buffer.allocUnsafe(n * TIME_RECORD_BYTES);
        for (let i = 0; i < n; i++) writeTimeRecord(recs, i * TIME_RECORD_BYTES, times[2 * i]!, times[2 * i + 1]!);
        try {
          await writeAllv(this.fdData, chunks, this.dataPos);
          this.dataPos += bytes;
          await writeAllv(this.fdTime, [recs], this.timePos);
          this.timePos += recs.byteLength;
          this.pendingBytes -= bytes;
        } catch (e) {
          this.fail(e);
        }
      }
    } finally {
      this.busy = false;
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private fail(e: unknown): void {
    if (this.error) return;
    this.error = e instanceof Error ? e : new Error(String(e));
    this.chunks = [];
    this.times = [];
    this.pendingBytes = 0;
    this.onError(this.error);
  }
}

/** pwrite until all of `buf` is written (a regular file only writes short on errors like ENOSPC, which then throw). */
function writeAllSync(fd: number, buf: Uint8Array, pos: number): void {
  let off = 0;
  while (off < buf.byteLength) {
    const n = fs.writeSync(fd, buf, off, buf.byteLength - off, pos + off);
    if (n <= 0) throw new Error('write returned 0 bytes');
    off += n;
  }
}

/** pwritev `bufs` at `pos` in the thread pool, retrying the rest after a short write. */
async function writeAllv(fd: number, bufs: Uint8Array[], pos: number): Promise<void> {
  let rest = bufs;
  let at = pos;
  for (;;) {
    let want = 0;
    for (const b of rest) want += b.byteLength;
    if (want === 0) return;
    const { bytesWritten } = rest.length === 1 ? await write(fd, rest[0]!, 0, rest[0]!.byteLength, at) : await writev(fd, rest as NodeJS.ArrayBufferView[], at);
    if (bytesWritten <= 0) throw new Error('write returned 0 bytes');
    if (bytesWritten === want) return;
    at += bytesWritten;
    let skip = bytesWritten;
    const next: Uint8Array[] = [];
    for (const b of rest) {
      if (skip >= b.byteLength) {
        skip -= b.byteLength;
        continue;
      }
      next.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
    rest = next;
  }
}
