import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { blendCursor, encodeRgbPng } from './screenshot.ts';
import type { CursorShape } from './sink.ts';

/** A w x h RGBA image filled with one colour. */
function image(w: number, h: number, rgb: [number, number, number]): Uint8Array {
  const out = new Uint8Array(w * h * 4);
  for (let i = 0; i < out.length; i += 4) out.set([...rgb, 255], i);
  return out;
}

/** A cursor whose pixel (px, py) is `rgba(px, py)`. */
function cursor(w: number, h: number, hotX: number, hotY: number, rgba: (px: number, py: number) => [number, number, number, number]): CursorShape {
  const data = new Uint8Array(w * h * 4);
  for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) data.set(rgba(px, py), (py * w + px) * 4);
  return { width: w, height: h, hotX, hotY, rgba: data };
}

const at = (img: Uint8Array, w: number, x: number, y: number) => Array.from(img.subarray((y * w + x) * 4, (y * w + x) * 4 + 4));

describe('blendCursor', () => {
  it('puts the hotspot on the pointer and copies opaque pixels, skipping transparent ones', () => {
    const img = image(10, 8, [10, 20, 30]);
    // 3x3 cursor, hotspot in its centre; the centre pixel is transparent.
    const shape = cursor(3, 3, 1, 1, (px, py) => (px === 1 && py === 1 ? [255, 255, 255, 0] : [200 + px, 100 + py, 0, 255]));
    blendCursor(img, 10, 8, shape, 5, 4);
    expect(at(img, 10, 4, 3)).toEqual([200, 100, 0, 255]); // top-left of the cursor
    expect(at(img, 10, 6, 5)).toEqual([202, 102, 0, 255]); // bottom-right
    expect(at(img, 10, 5, 4)).toEqual([10, 20, 30, 255]); // transparent centre
    expect(at(img, 10, 3, 4)).toEqual([10, 20, 30, 255]); // outside
    expect(at(img, 10, 7, 4)).toEqual([10, 20, 30, 255]);
  });

  it('blends partial alpha', () => {
    const img = image(2, 2, [0, 0, 0]);
    blendCursor(
      img,
      2,
      2,
      cursor(1, 1, 0, 0, () => [255, 100, 50, 128]),
      1,
      1,
    );
    expect(at(img, 2, 1, 1)).toEqual([128, 50, 25, 255]);
  });

  it('clips at every edge without writing outside the image', () => {
    for (const [x, y] of [
      [0, 0],
      [9, 7],
      [-3, 2],
      [12, 12],
      [0, 7],
    ] as const) {
      const img = image(10, 8, [1, 1, 1]);
      const guard = new Uint8Array(img.length + 64);
      guard.set(img);
      const view = guard.subarray(0, img.length);
      blendCursor(
        view,
        10,
        8,
        cursor(4, 4, 2, 2, () => [9, 9, 9, 255]),
        x,
        y,
      );
      expect(
        Array.from(guard.subarray(img.length)).every((b) => b === 0),
        `no write past the end for ${x},${y}`,
      ).toBe(true);
      let painted = 0;
      for (let py = 0; py < 8; py++) {
        for (let px = 0; px < 10; px++) {
          const inside = px >= x - 2 && px < x + 2 && py >= y - 2 && py < y + 2;
          expect(at(view, 10, px, py)[0], `pixel ${px},${py} for pointer ${x},${y}`).toBe(inside ? 9 : 1);
          if (inside) painted++;
        }
      }
      if (x === 12) expect(painted).toBe(0);
    }
  });
});

describe('encodeRgbPng', () => {
  it('encodes RGB as an RGB PNG that decodes to the same pixels', async () => {
    const w = 7;
    const h = 5;
    const img = new Uint8Array(w * h * 3);
    for (let i = 0; i < w * h; i++) img.set([i * 7, 255 - i, (i * 13) & 0xff], i * 3);
    const shot = await encodeRgbPng(img, w, h);
    expect([shot.width, shot.height]).toEqual([w, h]);
    expect(shot.base64).toBe(shot.png.toString('base64'));
    const { data, info } = await sharp(shot.png).raw().toBuffer({ resolveWithObject: true });
    expect(info.channels).toBe(3);
    for (let i = 0; i < w * h; i++) expect(Array.from(data.subarray(i * 3, i * 3 + 3))).toEqual(Array.from(img.subarray(i * 3, i * 3 + 3)));
  });
});
