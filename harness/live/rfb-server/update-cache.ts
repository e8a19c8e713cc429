/**
 * The last FramebufferUpdate built, shared by the sessions of one endpoint: watchers that wait for the
 * same change (the usual case: each asks again as soon as it has drawn the last update) get the same
 * bytes, built once. An update is the same when it is built from the same framebuffer at the same
 * version, for the same rectangles, in the same pixel format. Updates with a cursor shape are not
 * kept (the shape has no version). Pure data: no I/O.
 */
import type { PixelSource, UpdateRect } from './messages.ts';
import type { PixelWriter } from './pixel-format.ts';

/** See the file comment. */
export class UpdateCache {
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
  private key: string | null = null;
  private bytes: Uint8Array | null = null;
  /** Updates served from the cache, and built. */
  hits = 0;
  misses = 0;

  /** The bytes of this update: `build()`'s, or the same bytes again when the last update built was this one. */
  get(rects: readonly UpdateRect[], src: PixelSource, pixels: PixelWriter, build: () => Uint8Array): Uint8Array {
    const key = this.keyOf(rects, src, pixels);
    if (key !== null && key === this.key && this.bytes) {
      this.hits++;
      return this.bytes;
    }
    this.misses++;
    const bytes = build();
    this.key = key;
    this.bytes = key === null ? null : bytes;
    return bytes;
  }

  private keyOf(rects: readonly UpdateRect[], src: PixelSource, pixels: PixelWriter): string | null {
    if (src.version === undefined || rects.some((r) => r.kind === 'cursor')) return null;
    let id = this.ids.get(src);
    if (id === undefined) this.ids.set(src, (id = this.nextId++));
    const f = pixels.format;
    const parts: Array<string | number> = [
      id,
      src.version,
      src.width,
      src.height,
      f.bitsPerPixel,
      f.bigEndian ? 1 : 0,
      f.redMax,
      f.greenMax,
      f.blueMax,
      f.redShift,
      f.greenShift,
      f.blueShift,
    ];
    for (const r of rects) parts.push(r.kind === 'desktopSize' ? `d${r.width}x${r.height}` : r.kind === 'cursor' ? 'c' : `${r.kind[0]}${r.x},${r.y},${r.w},${r.h}`);
    return parts.join(':');
  }
}
