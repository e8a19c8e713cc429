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

/**
 * Hears what a Framebuffer's drawing operations change, once each is applied (a live endpoint's
 * watchers use it to send only what changed). Observers run inside decoding: keep them cheap and never throw.
 */
export interface FramebufferObserver {
  /** Pixels inside the rectangle (x, y, w, h) changed (called once per drawing operation). */
  damage(x: number, y: number, w: number, h: number): void;
  /** The size changed: the whole picture counts as changed (no damage() call comes with it). */
  resize(width: number, height: number): void;
  /** The cursor shape changed (null: an invisible cursor). */
  cursor?(shape: CursorShape | null): void;
}

/** Live RGBA framebuffer (alpha always 255). Shared by the live client and the post-processor. */
export class Framebuffer implements PixelSink {
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. Replaced on resize. */
  data: Uint8Array;
  private u32: Uint32Array;
  /** The RGB plane rgbPlane() returns: the RGBA pixels less alpha, brought up to date lazily. */
  private rgb: Uint8Array;
  /** Rows [rgbDirtyTop, rgbDirtyBottom) changed since the RGB plane was last brought up to date. */
  private rgbDirtyTop = Infinity;
  private rgbDirtyBottom = 0;
  /** Latest cursor shape from the server, if any. */
  cursorShape: CursorShape | null = null;
  /** Incremented on every change; lets callers detect "something was drawn". */
  version = 0;
  /** Called with a decode error from an async image (the stream itself stays usable). */
  onError: ((e: VncuaError) => void) | undefined;

  /** Observers (copy-on-write, so one may unsubscribe while being called); null when there is none, so drawing pays one check. */
  private observers: readonly FramebufferObserver[] | null = null;

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

  /**
   * The screen as width * height * 3 bytes of RGB (what screenshots encode: a PNG encoder takes RGB
   * directly, while stripping alpha costs ~1 ms at 1280x800). Only rows changed since the last call are
   * converted, so decoding pays nothing for it and a screenshot pays in proportion to what changed.
   * The plane stays valid until the next drawing operation.
   */
  rgbPlane(): Uint8Array {
    const top = this.rgbDirtyTop;
    const bottom = Math.min(this.rgbDirtyBottom, this.height);
    if (top < bottom) rgbaToRgb(this.u32, this.rgb, top * this.width, bottom * this.width);
    this.rgbDirtyTop = Infinity;
    this.rgbDirtyBottom = 0;
    return this.rgb;
  }

  /** Note that the rectangle (x, y, w, h) changed. */
  private dirty(x: number, y: number, w: number, h: number): void {
    if (y < this.rgbDirtyTop) this.rgbDirtyTop = y;
    if (y + h > this.rgbDirtyBottom) this.rgbDirtyBottom = y + h;
    this.version++;
    if (this.observers !== null) for (const o of this.observers) o.damage(x, y, w, h);
  }

  /**
   * Tell `observer` about every change from now on (damage, resize, cursor); returns the function that
   * stops it. Costs drawing nothing while no observer is registered.
   */
  observe(observer: FramebufferObserver): () => void {
    this.observers = [...(this.observers ?? []), observer];
    return () => {
      const rest = (this.observers ?? []).filter((o) => o !== observer);
      this.observers = rest.length > 0 ? rest : null;
    };
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
    this.dirty(x, y, w, h);
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
    const rowBytes = this.width * 4;
    for (let row = 0; row < h; row++) {
      let s = offset + row * stride;
      let o = (y + row) * rowBytes + x * 4;
      if (bpp === 4) {
        d.set(src.subarray(s, s + w * 4), o);
        for (let i = 0; i < w; i++, o += 4) d[o + 3] = 255;
      } else {
        for (let i = 0; i < w; i++, s += 3, o += 4) {
          d[o] = src[s]!;
          d[o + 1] = src[s + 1]!;
          d[o + 2] = src[s + 2]!;
          d[o + 3] = 255;
        }
      }
    }
    this.dirty(x, y, w, h);
  }

  copyRect(srcX: number, srcY: number, x: number, y: number, w: number, h: number): void {
    this.run(() => this.copyNow(srcX, srcY, x, y, w, h));
  }

  private copyNow(srcX: number, srcY: number, x: number, y: number, w: number, h: number): void {
    const d = this.data;
    const rowBytes = this.width * 4;
    // copyWithin handles overlap within a row; choose row order so overlapping rows are read before written.
    if (srcY < y) {
      for (let row = h - 1; row >= 0; row--) {
        const s = (srcY + row) * rowBytes + srcX * 4;
        d.copyWithin((y + row) * rowBytes + x * 4, s, s + w * 4);
      }
    } else {
      for (let row = 0; row < h; row++) {
        const s = (srcY + row) * rowBytes + srcX * 4;
        d.copyWithin((y + row) * rowBytes + x * 4, s, s + w * 4);
      }
    }
    this.dirty(x, y, w, h);
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
    const cw = Math.min(width, this.width);
    const ch = Math.min(height, this.height);
    for (let row = 0; row < ch; row++) {
      next.set(this.data.subarray(row * this.width * 4, row * this.width * 4 + cw * 4), row * width * 4);
    }
    this.width = width;
    this.height = height;
    this.data = next;
    this.u32 = nextU32;
    this.rgb = new Uint8Array(width * height * 3);
    this.rgbDirtyTop = 0;
    this.rgbDirtyBottom = height;
    this.version++;
    if (this.observers !== null) for (const o of this.observers) o.resize(width, height);
  }

  cursor(shape: CursorShape | null): void {
    this.run(() => {
      this.cursorShape = shape;
      if (this.observers !== null) for (const o of this.observers) o.cursor?.(shape);
    });
  }

  /** RGBA of one pixel, for tests and probes. */
  pixel(x: number, y: number): [number, number, number, number] {
    const o = (y * this.width + x) * 4;
    const d = this.data;
    return [d[o]!, d[o + 1]!, d[o + 2]!, d[o + 3]!];
  }
}

/**
 * Convert pixels [from, to) of a little-endian RGBA uint32 image into packed RGB (3 bytes a pixel).
 * Four pixels at a time: four 32-bit loads and three 32-bit stores instead of twelve byte stores.
 */
function rgbaToRgb(src: Uint32Array, rgb: Uint8Array, from: number, to: number): void {
  let i = from;
  let o = i * 3;
  const one = () => {
    const v = src[i++]!;
    rgb[o++] = v & 255;
    rgb[o++] = (v >>> 8) & 255;
    rgb[o++] = (v >>> 16) & 255;
  };
  while (i < to && (i & 3) !== 0) one();
  if (rgb.byteOffset % 4 === 0) {
    const out = new Uint32Array(rgb.buffer, rgb.byteOffset, rgb.length >>> 2);
    for (let w = o >>> 2; i + 4 <= to; i += 4, w += 3) {
      const a = src[i]!;
      const b = src[i + 1]!;
      const c = src[i + 2]!;
      const d = src[i + 3]!;
      out[w] = (a & 0xffffff) | (b << 24); // R0 G0 B0 R1
      out[w + 1] = ((b >>> 8) & 0xffff) | (c << 16); // G1 B1 R2 G2
      out[w + 2] = ((c >>> 16) & 0xff) | (d << 8); // B2 R3 G3 B3
    }
    o = i * 3;
  }
  while (i < to) one();
}
