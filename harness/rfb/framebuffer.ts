/**
 * An RGBA framebuffer that implements PixelSink. Synchronous operations apply at
 * once; compressed images (JPEG/PNG) decode asynchronously through sharp, and any
 * operation that arrives while one is pending is queued behind it, so protocol
 * order is always preserved.
 */
import sharp from 'sharp';
import { VncuaError } from '../errors.ts';
import type { CursorShape, PixelSink } from './sink.ts';

type Op = () => void;

/** Live RGBA framebuffer (alpha always 255). Shared by the live client and the post-processor. */
export class Framebuffer implements PixelSink {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. Replaced on resize. */
  data: Uint8Array;
  /**
   * The same pixels as width * height * 3 bytes, RGB, kept in step by every operation: what screenshots
   * encode (a PNG encoder takes RGB directly; stripping alpha at screenshot time costs ~1 ms at 1280x800).
   * Replaced on resize.
   */
  rgb: Uint8Array;
  private u32: Uint32Array;
  /** Latest cursor shape from the server, if any. */
  cursorShape: CursorShape | null = null;
  /** Incremented on every change; lets callers detect "something was drawn". */
  version = 0;
  /** Called with a decode error from an async image (the stream itself stays usable). */
  onError: ((e: VncuaError) => void) | undefined;

  private queue: Array<{ ready: Promise<Op> }> = [];
  private draining: Promise<void> | null = null;

  constructor(width: number, height: number) {
    this.width = width;
    this.height = height;
    this.data = new Uint8Array(width * height * 4);
    this.u32 = new Uint32Array(this.data.buffer, this.data.byteOffset, width * height);
    this.u32.fill(0xff000000);
    this.rgb = new Uint8Array(width * height * 3);
  }

  /** True while an async image decode (or ops queued behind it) is pending. */
  get busy(): boolean {
    return this.queue.length > 0;
  }

  /** Resolves once every queued operation has been applied. */
  async whenIdle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private enqueue(ready: Promise<Op>): void {
    this.queue.push({ ready });
    if (!this.draining) this.draining = this.drain();
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const head = this.queue[0]!;
        let op: Op | null = null;
        try {
          op = await head.ready;
        } catch (e) {
          const err = e instanceof VncuaError ? e : new VncuaError('RFB_ERR_DECODE', `image decode failed: ${(e as Error).message}`, { cause: e });
          this.onError?.(err);
        }
        this.queue.shift();
        if (op) op();
      }
    } finally {
      this.draining = null;
    }
  }

  /** Run `op` now, or after pending async work if any. */
  private run(op: Op): void {
    if (this.queue.length === 0) op();
    else this.enqueue(Promise.resolve(op));
  }

  fill(x: number, y: number, w: number, h: number, rgba: number): void {
    this.run(() => this.fillNow(x, y, w, h, rgba));
  }

  private fillNow(x: number, y: number, w: number, h: number, rgba: number): void {
    const W = this.width;
    const u32 = this.u32;
    if (w === W) {
      u32.fill(rgba, y * W, (y + h) * W);
    } else {
      for (let row = y; row < y + h; row++) u32.fill(rgba, row * W + x, row * W + x + w);
    }
    if (w > 0 && h > 0) {
      // RGB plane: write the first row's pattern, double it along the row, then copy the row down.
      const rgb = this.rgb;
      const rowBytes = W * 3;
      const start = y * rowBytes + x * 3;
      const len = w * 3;
      rgb[start] = rgba & 255;
      rgb[start + 1] = (rgba >>> 8) & 255;
      rgb[start + 2] = (rgba >>> 16) & 255;
      for (let done = 3; done < len; done *= 2) rgb.copyWithin(start + done, start, start + Math.min(done, len - done));
      for (let row = 1; row < h; row++) rgb.copyWithin(start + row * rowBytes, start, start + len);
    }
    this.version++;
  }

  blit(x: number, y: number, w: number, h: number, src: Uint8Array, offset: number, stride: number, bpp: 3 | 4): void {
    if (this.queue.length === 0) this.blitNow(x, y, w, h, src, offset, stride, bpp);
    else {
      const copy = src.slice(offset, offset + stride * (h - 1) + w * bpp);
      this.enqueue(Promise.resolve(() => this.blitNow(x, y, w, h, copy, 0, stride, bpp)));
    }
  }

  private blitNow(x: number, y: number, w: number, h: number, src: Uint8Array, offset: number, stride: number, bpp: 3 | 4): void {
    const d = this.data;
    const rgb = this.rgb;
    const rowBytes = this.width * 4;
    const rgbRowBytes = this.width * 3;
    for (let row = 0; row < h; row++) {
      let s = offset + row * stride;
      let o = (y + row) * rowBytes + x * 4;
      let p = (y + row) * rgbRowBytes + x * 3;
      if (bpp === 4) {
        d.set(src.subarray(s, s + w * 4), o);
        for (let i = 0; i < w; i++, o += 4, p += 3) {
          d[o + 3] = 255;
          rgb[p] = d[o]!;
          rgb[p + 1] = d[o + 1]!;
          rgb[p + 2] = d[o + 2]!;
        }
      } else {
        rgb.set(src.subarray(s, s + w * 3), p);
        for (let i = 0; i < w; i++, s += 3, o += 4) {
          d[o] = src[s]!;
          d[o + 1] = src[s + 1]!;
          d[o + 2] = src[s + 2]!;
          d[o + 3] = 255;
        }
      }
    }
    this.version++;
  }

  copyRect(srcX: number, srcY: number, x: number, y: number, w: number, h: number): void {
    this.run(() => this.copyNow(srcX, srcY, x, y, w, h));
  }

  private copyNow(srcX: number, srcY: number, x: number, y: number, w: number, h: number): void {
    copyBlock(this.data, this.width * 4, 4, srcX, srcY, x, y, w, h);
    copyBlock(this.rgb, this.width * 3, 3, srcX, srcY, x, y, w, h);
    this.version++;
  }

  image(x: number, y: number, w: number, h: number, format: 'jpeg' | 'png', data: Uint8Array): void {
    const input = Buffer.from(data); // copy: `data` is transient
    const ready = sharp(input)
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
      .then(({ data: px, info }): Op => {
        if (info.width !== w || info.height !== h) {
          throw new VncuaError('RFB_ERR_DECODE', `${format.toUpperCase()} image is ${info.width}x${info.height} but its rectangle is ${w}x${h}`);
        }
        return () => this.blitNow(x, y, w, h, px, 0, w * 4, 4);
      });
    // Avoid an unhandled rejection before drain() awaits it.
    ready.catch(() => {});
    this.enqueue(ready);
  }

  resize(width: number, height: number): void {
    this.run(() => this.resizeNow(width, height));
  }

  private resizeNow(width: number, height: number): void {
    if (width === this.width && height === this.height) return;
    const next = new Uint8Array(width * height * 4);
    const nextU32 = new Uint32Array(next.buffer, 0, width * height);
    nextU32.fill(0xff000000);
    const nextRgb = new Uint8Array(width * height * 3);
    const cw = Math.min(width, this.width);
    const ch = Math.min(height, this.height);
    for (let row = 0; row < ch; row++) {
      next.set(this.data.subarray(row * this.width * 4, row * this.width * 4 + cw * 4), row * width * 4);
      nextRgb.set(this.rgb.subarray(row * this.width * 3, row * this.width * 3 + cw * 3), row * width * 3);
    }
    this.width = width;
    this.height = height;
    this.data = next;
    this.rgb = nextRgb;
    this.u32 = nextU32;
    this.version++;
  }

  cursor(shape: CursorShape | null): void {
    this.run(() => {
      this.cursorShape = shape;
    });
  }

  /** RGBA of one pixel, for tests and probes. */
  pixel(x: number, y: number): [number, number, number, number] {
    const o = (y * this.width + x) * 4;
    const d = this.data;
    return [d[o]!, d[o + 1]!, d[o + 2]!, d[o + 3]!];
  }
}

/** Copy a w*h block within one image of `bpp` bytes per pixel, rows `rowBytes` apart; overlapping rows are read before written. */
function copyBlock(d: Uint8Array, rowBytes: number, bpp: number, srcX: number, srcY: number, x: number, y: number, w: number, h: number): void {
  // copyWithin handles overlap within a row; the row order handles overlap between rows.
  if (srcY < y) {
    for (let row = h - 1; row >= 0; row--) {
      const s = (srcY + row) * rowBytes + srcX * bpp;
      d.copyWithin((y + row) * rowBytes + x * bpp, s, s + w * bpp);
    }
  } else {
    for (let row = 0; row < h; row++) {
      const s = (srcY + row) * rowBytes + srcX * bpp;
      d.copyWithin((y + row) * rowBytes + x * bpp, s, s + w * bpp);
    }
  }
}
