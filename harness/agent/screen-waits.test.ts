import { describe, expect, it } from 'vitest';
import { BLANK_SCREEN_OTHER_PIXELS, isBlank } from './screen-waits.ts';

/** A w x h RGBA screen of one colour with a `bw` x `bh` block of another at (x, y). */
function screen(w: number, h: number, block: { x: number; y: number; w: number; h: number } | null): Uint8Array {
  const rgba = new Uint8Array(w * h * 4).fill(255);
  if (block) for (let y = block.y; y < block.y + block.h; y++) for (let x = block.x; x < block.x + block.w; x++) rgba.set([0, 0, 0, 255], (y * w + x) * 4);
  return rgba;
}

describe('isBlank', () => {
  it('a one-colour screen is blank, also with a cursor drawn in (Xvnc does), but not with a painted page', () => {
    expect(isBlank(screen(320, 200, null))).toBe(true);
    expect(isBlank(screen(320, 200, { x: 100, y: 80, w: 12, h: 19 }))).toBe(true); // an X cursor
    expect(isBlank(screen(320, 200, { x: 10, y: 10, w: 180, h: 44 }))).toBe(false); // a button
    const n = BLANK_SCREEN_OTHER_PIXELS;
    expect(isBlank(screen(n + 1, 1, { x: 1, y: 0, w: n, h: 1 }))).toBe(true);
    expect(isBlank(screen(n + 2, 1, { x: 1, y: 0, w: n + 1, h: 1 }))).toBe(false);
  });
});
