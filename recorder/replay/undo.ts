/**
 * The undo log of one FramebufferUpdate: what each of its rectangles overwrote, saved just before the
 * rectangle was decoded. It lets the replayer show the screen as it was BEFORE an update that has been
 * decoded (in part, or wholly but completed after the instant asked for), without copying the whole
 * framebuffer at every update: the cost is proportional to the area the update touches.
 */
import { ENC, type RectHeader } from '../../harness/rfb/encodings/types.ts';
import type { Framebuffer } from '../../harness/rfb/framebuffer.ts';
import type { CursorShape } from '../../harness/rfb/sink.ts';

/** One saved pre-image. */
export type UndoEntry =
  /** RGBA rows of the area a pixel rectangle covers (clipped to the framebuffer). */
  | { kind: 'pixels'; x: number; y: number; w: number; h: number; rgba: Uint8Array }
  /** The cursor shape before a Cursor pseudo-rectangle. */
  | { kind: 'cursor'; shape: CursorShape | null }
  /** The whole framebuffer before a DesktopSize / ExtendedDesktopSize (the old array is kept, not copied: a resize replaces it). */
  | { kind: 'resize'; rgba: Uint8Array; width: number; height: number };

/** Save what decoding `rect` into `fb` will overwrite. */
export function captureUndo(fb: Framebuffer, rect: RectHeader): UndoEntry | null {
  switch (rect.encoding) {
    case ENC.CURSOR:
      return { kind: 'cursor', shape: fb.cursorShape };
    case ENC.DESKTOP_SIZE:
    case ENC.EXTENDED_DESKTOP_SIZE:
      return { kind: 'resize', rgba: fb.data, width: fb.width, height: fb.height };
    case ENC.LAST_RECT:
      return null;
  }
  const x = Math.min(rect.x, fb.width);
  const y = Math.min(rect.y, fb.height);
  const w = Math.min(rect.width, fb.width - x);
  const h = Math.min(rect.height, fb.height - y);
  if (w <= 0 || h <= 0) return null;
  const rgba = new Uint8Array(w * h * 4);
  const stride = fb.width * 4;
  for (let row = 0; row < h; row++) {
    const o = (y + row) * stride + x * 4;
    rgba.set(fb.data.subarray(o, o + w * 4), row * w * 4);
  }
  return { kind: 'pixels', x, y, w, h, rgba };
}

/** An RGB image (3 bytes a pixel). */
export interface RgbImage {
  rgb: Uint8Array;
  width: number;
  height: number;
}

/** RGBA → a new RGB plane. */
export function rgbaToRgbPlane(rgba: Uint8Array, width: number, height: number): Uint8Array {
  const n = width * height;
  const out = new Uint8Array(n * 3);
  for (let i = 0, o = 0, s = 0; i < n; i++, o += 3, s += 4) {
    out[o] = rgba[s]!;
    out[o + 1] = rgba[s + 1]!;
    out[o + 2] = rgba[s + 2]!;
  }
  return out;
}

/** Apply `entries` in reverse onto `image` (which it may replace, for a resize): the screen before the update. */
export function applyUndo(image: RgbImage, entries: readonly UndoEntry[]): RgbImage {
  let { rgb, width, height } = image;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.kind === 'resize') {
      rgb = rgbaToRgbPlane(e.rgba, e.width, e.height);
      width = e.width;
      height = e.height;
    } else if (e.kind === 'pixels') {
      // Entries were captured with the dimensions the canvas has at this point of the reverse walk.
      const w = Math.min(e.w, width - e.x);
      const h = Math.min(e.h, height - e.y);
      for (let row = 0; row < h; row++) {
        let s = row * e.w * 4;
        let o = ((e.y + row) * width + e.x) * 3;
        for (let px = 0; px < w; px++, s += 4, o += 3) {
          rgb[o] = e.rgba[s]!;
          rgb[o + 1] = e.rgba[s + 1]!;
          rgb[o + 2] = e.rgba[s + 2]!;
        }
      }
    }
  }
  return { rgb, width, height };
}

/** The cursor shape before the update, if the update changed it (else undefined). */
export function cursorBefore(entries: readonly UndoEntry[]): CursorShape | null | undefined {
  for (const e of entries) if (e.kind === 'cursor') return e.shape;
  return undefined;
}

/** True when the update drew pixels (not only pseudo-rectangles: cursor shape, screen size). */
export function touchesPixels(entries: readonly UndoEntry[]): boolean {
  return entries.some((e) => e.kind === 'pixels');
}
