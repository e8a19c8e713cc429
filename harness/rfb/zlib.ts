/**
 * Persistent zlib inflate streams, as ZRLE (one stream per connection) and Tight
 * (four streams, reset on demand) require. Synchronous, so the protocol core stays free
 * of I/O and callbacks. Backed by pako: Node's own zlib cannot keep a stream's state
 * across synchronous calls.
 */
import { Inflate, Z_SYNC_FLUSH } from 'pako';
import { VncuaError } from '../errors.ts';

/** One zlib stream whose dictionary persists across chunks until reset(). */
export class InflateStream {
  private inflater: Inflate | null = null;
  private out: Uint8Array[] = [];
  private outLen = 0;
  private limit = Infinity;

  constructor(private readonly name: string) {}

  /**
   * Decompress one complete (sync-flushed) chunk and return its output. If `expected` is given,
   * the output must be exactly that long; `maxOutput` (default `expected`) stops a zip bomb early.
   */
  inflate(data: Uint8Array, expected?: number, maxOutput: number = expected ?? Infinity): Uint8Array {
    if (!this.inflater) {
      const inf = new Inflate({ chunkSize: 64 * 1024 });
      inf.onData = (chunk: Uint8Array) => {
        this.out.push(chunk);
        this.outLen += chunk.length;
        if (this.outLen > this.limit) throw new OutputLimitError();
      };
      this.inflater = inf;
    }
    this.out = [];
    this.outLen = 0;
    this.limit = maxOutput;
    try {
      // pako may keep a reference to the input: hand it a private copy since `data` is usually a transient view.
      this.inflater.push(data.slice(), Z_SYNC_FLUSH);
    } catch (e) {
      this.inflater = null;
      this.out = [];
      if (e instanceof OutputLimitError) {
        throw new VncuaError(
          'RFB_ERR_DECODE',
          `${this.name}: zlib data inflates to more than the ${maxOutput} bytes the rectangle can hold; the stream cannot continue, reconnect`,
        );
      }
      throw new VncuaError('RFB_ERR_DECODE', `${this.name}: corrupt zlib data (${(e as Error).message}); the stream cannot continue, reconnect`, { cause: e });
    }
    if (this.inflater.err) {
      const msg = this.inflater.msg || `zlib error ${this.inflater.err}`;
      this.inflater = null;
      throw new VncuaError('RFB_ERR_DECODE', `${this.name}: corrupt zlib data (${msg}); the stream cannot continue, reconnect`);
    }
    let result: Uint8Array;
    if (this.out.length === 1) result = this.out[0]!;
    else {
      result = new Uint8Array(this.outLen);
      let o = 0;
      for (const c of this.out) {
        result.set(c, o);
        o += c.length;
      }
    }
    this.out = [];
    if (expected !== undefined && result.length !== expected) {
      throw new VncuaError('RFB_ERR_DECODE', `${this.name}: zlib data inflated to ${result.length} bytes, expected ${expected}`);
    }
    return result;
  }

  /** Forget the dictionary: the next chunk starts a new zlib stream. */
  reset(): void {
    this.inflater = null;
  }
}

/** Thrown from pako's onData to abort an inflate that exceeds its output limit. */
class OutputLimitError extends Error {}
