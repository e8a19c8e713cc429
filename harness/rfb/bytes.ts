/**
 * A small typed byte reader (an append-only queue the protocol core reads from)
 * and writer. Big-endian, as RFC 6143 mandates for every multi-byte field.
 * No I/O here: bytes go in with push(), values come out with read*().
 */
import { VncuaError } from '../errors.ts';

/**
 * Append-only byte queue with a read cursor.
 * Views returned by `readBytes`/`peekBytes` stay valid only until the next `push()`: copy them if you keep them.
 */
export class ByteQueue {
  private buf: Uint8Array = new Uint8Array(0);
  private start = 0;
  private end = 0;
  /** True when `buf` was allocated here (its spare capacity may be written); false for an adopted chunk. */
  private owned = false;
  /** Total bytes consumed since creation (useful for error offsets). */
  consumed = 0;

  /** Append bytes to the queue (amortised: spare capacity of a buffer the queue owns is filled first). */
  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.start === this.end) {
      // Empty: adopt the chunk without copying (the queue never writes into memory it does not own).
      this.buf = chunk;
      this.start = 0;
      this.end = chunk.length;
      this.owned = false;
      return;
    }
    if (this.owned && this.end + chunk.length <= this.buf.length) {
      // Writing past `end` never touches bytes that earlier views may still reference.
      this.buf.set(chunk, this.end);
      this.end += chunk.length;
      return;
    }
    const remaining = this.end - this.start;
    // Grow geometrically so that a large payload arriving in many small chunks is copied O(n) times, not O(n^2).
    const next = new Uint8Array(Math.max(remaining + chunk.length, remaining * 2, 4096));
    next.set(this.buf.subarray(this.start, this.end), 0);
    next.set(chunk, remaining);
    this.buf = next;
    this.start = 0;
    this.end = remaining + chunk.length;
    this.owned = true;
  }

  /** Bytes available to read. */
  get available(): number {
    return this.end - this.start;
  }

  /** True when at least `n` bytes can be read. */
  has(n: number): boolean {
    return this.end - this.start >= n;
  }

  private need(n: number): void {
    if (this.end - this.start < n) {
      throw new VncuaError('RFB_ERR_PROTOCOL', `internal: read of ${n} bytes with only ${this.available} buffered (decoder forgot a has() check)`);
    }
  }

  /** Read an unsigned 8-bit value. */
  u8(): number {
    this.need(1);
    this.consumed += 1;
    return this.buf[this.start++]!;
  }

  /** Read an unsigned big-endian 16-bit value. */
  u16(): number {
    this.need(2);
    const b = this.buf;
    const s = this.start;
    this.start += 2;
    this.consumed += 2;
    return (b[s]! << 8) | b[s + 1]!;
  }

  /** Read an unsigned big-endian 32-bit value. */
  u32(): number {
    this.need(4);
    const b = this.buf;
    const s = this.start;
    this.start += 4;
    this.consumed += 4;
    return ((b[s]! << 24) | (b[s + 1]! << 16) | (b[s + 2]! << 8) | b[s + 3]!) >>> 0;
  }

  /** Read a signed big-endian 32-bit value (encoding numbers). */
  s32(): number {
    return this.u32() | 0;
  }

  /** Peek an unsigned 8-bit value `offset` bytes ahead without consuming. */
  peekU8(offset = 0): number {
    this.need(offset + 1);
    return this.buf[this.start + offset]!;
  }

  /** Peek an unsigned big-endian 16-bit value `offset` bytes ahead without consuming. */
  peekU16(offset = 0): number {
    this.need(offset + 2);
    const s = this.start + offset;
    return (this.buf[s]! << 8) | this.buf[s + 1]!;
  }

  /** Peek an unsigned big-endian 32-bit value `offset` bytes ahead without consuming. */
  peekU32(offset = 0): number {
    this.need(offset + 4);
    const b = this.buf;
    const s = this.start + offset;
    return ((b[s]! << 24) | (b[s + 1]! << 16) | (b[s + 2]! << 8) | b[s + 3]!) >>> 0;
  }

  /** Consume `n` bytes and return a view of them (valid until the next push). */
  readBytes(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.start, this.start + n);
    this.start += n;
    this.consumed += n;
    return v;
  }

  /** View `n` bytes starting `offset` ahead without consuming (valid until the next push). */
  peekBytes(n: number, offset = 0): Uint8Array {
    this.need(offset + n);
    return this.buf.subarray(this.start + offset, this.start + offset + n);
  }

  /** Drop `n` bytes. */
  skip(n: number): void {
    this.need(n);
    this.start += n;
    this.consumed += n;
  }
}

/** Growable big-endian byte writer for client messages and test fixtures. */
export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  private len = 0;

  constructor(initialCapacity = 64) {
    this.buf = new Uint8Array(initialCapacity);
    this.view = new DataView(this.buf.buffer);
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** Append an unsigned 8-bit value. */
  u8(v: number): this {
    this.ensure(1);
    this.view.setUint8(this.len, v);
    this.len += 1;
    return this;
  }

  /** Append an unsigned big-endian 16-bit value. */
  u16(v: number): this {
    this.ensure(2);
    this.view.setUint16(this.len, v);
    this.len += 2;
    return this;
  }

  /** Append an unsigned big-endian 32-bit value. */
  u32(v: number): this {
    this.ensure(4);
    this.view.setUint32(this.len, v >>> 0);
    this.len += 4;
    return this;
  }

  /** Append a signed big-endian 32-bit value. */
  s32(v: number): this {
    this.ensure(4);
    this.view.setInt32(this.len, v | 0);
    this.len += 4;
    return this;
  }

  /** Append raw bytes. */
  bytes(b: ArrayLike<number>): this {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** Append `n` zero bytes (padding). */
  pad(n: number): this {
    this.ensure(n);
    this.buf.fill(0, this.len, this.len + n);
    this.len += n;
    return this;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.len;
  }

  /** A copy of the bytes written so far. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}
