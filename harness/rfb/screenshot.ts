/**
 * Screenshots of a framebuffer: copy the RGBA pixels, optionally draw the cursor
 * shape (from the Cursor pseudo-encoding) where the pointer is, and encode a PNG
 * with sharp (level 1, no adaptive filtering: a few ms at 1280x800).
 */
import sharp from 'sharp';

// Raw framebuffers never repeat: libvips' operation cache would only hold memory.
sharp.cache(false);
import type { CursorShape } from './sink.ts';

/** A PNG screenshot. */
export interface Screenshot {
  /** PNG bytes (RGB, 8 bits per channel). */
  png: Buffer;
  /** The same PNG, base64-encoded (what model APIs take). */
  base64: string;
  width: number;
  height: number;
}

/**
 * Alpha-blend `shape` into an RGBA image so its hotspot lands on (x, y); parts
 * outside the image are clipped. Modifies `rgba` in place.
 */
export function blendCursor(rgba: Uint8Array, width: number, height: number, shape: CursorShape, x: number, y: number): void {
  const left = x - shape.hotX;
  const top = y - shape.hotY;
  const x0 = Math.max(0, left);
  const y0 = Math.max(0, top);
  const x1 = Math.min(width, left + shape.width);
  const y1 = Math.min(height, top + shape.height);
  const src = shape.rgba;
  for (let py = y0; py < y1; py++) {
    let s = ((py - top) * shape.width + (x0 - left)) * 4;
    let d = (py * width + x0) * 4;
    for (let px = x0; px < x1; px++, s += 4, d += 4) {
      const a = src[s + 3]!;
      if (a === 0) continue;
      if (a === 255) {
        rgba[d] = src[s]!;
        rgba[d + 1] = src[s + 1]!;
        rgba[d + 2] = src[s + 2]!;
      } else {
        const na = 255 - a;
        rgba[d] = Math.round((src[s]! * a + rgba[d]! * na) / 255);
        rgba[d + 1] = Math.round((src[s + 1]! * a + rgba[d + 1]! * na) / 255);
        rgba[d + 2] = Math.round((src[s + 2]! * a + rgba[d + 2]! * na) / 255);
      }
    }
  }
}

/** Encode an RGBA image (alpha ignored) as an RGB PNG. `rgba` must not change until the promise settles. */
export async function encodePng(rgba: Uint8Array, width: number, height: number): Promise<Screenshot> {
  const png = await sharp(rgba, { raw: { width, height, channels: 4 } })
    .removeAlpha()
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();
  return makeScreenshot(png, width, height);
}

/** A Screenshot whose base64 form is computed on first use (most callers only need the bytes). */
export function makeScreenshot(png: Buffer, width: number, height: number): Screenshot {
  let base64: string | undefined;
  return {
    png,
    get base64() {
      base64 ??= png.toString('base64');
      return base64;
    },
    width,
    height,
  };
}
