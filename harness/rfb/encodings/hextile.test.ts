import { describe, expect, it } from 'vitest';
import { hextileEncoding } from './hextile.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import { RgbCanvas, hextileRawTile, hextileRect, hextileTile, type Rgb } from '../test-helpers/fixtures-hextile.ts';
import type { RectHeader } from './types.ts';

const rect = (x: number, y: number, width: number, height: number): RectHeader => ({ x, y, width, height, encoding: 5 });
const RED: Rgb = [200, 10, 20];
const GREEN: Rgb = [15, 190, 40];
const BLUE: Rgb = [30, 40, 220];
const YELLOW: Rgb = [240, 230, 5];
const gradient = (px: number, py: number): Rgb => [px * 13, py * 11, 100 + px + py];

describe('Hextile', () => {
  it('decodes background, foreground subrects, carried colours, raw edge tiles, split anywhere', async () => {
    // A 20x18 rectangle at (1,1): tiles 16x16, 4x16 (edge column), 16x2 (edge row), 4x2 (corner).
    const payload = hextileRect([
      hextileTile({
        bg: RED,
        fg: GREEN,
        subrects: [
          { x: 0, y: 0, w: 3, h: 2 },
          { x: 5, y: 5, w: 11, h: 11 },
        ],
      }),
      hextileTile({}), // subencoding 0: solid, background carried over
      hextileTile({
        subrects: [
          { x: 1, y: 0, w: 3, h: 2 },
          { x: 15, y: 1, w: 1, h: 1 },
        ],
      }), // background and foreground carried over
      hextileRawTile(4, 2, gradient),
    ]);
    const ctx = await expectSameAtEverySplit(hextileEncoding, [{ rect: rect(1, 1, 20, 18), payload }], { width: 24, height: 20 });
    const want = new RgbCanvas(24, 20)
      .paint(1, 1, 16, 16, RED)
      .paint(1, 1, 3, 2, GREEN)
      .paint(6, 6, 11, 11, GREEN)
      .paint(17, 1, 4, 16, RED)
      .paint(1, 17, 16, 2, RED)
      .paint(2, 17, 3, 2, GREEN)
      .paint(16, 18, 1, 1, GREEN)
      .paint(17, 17, 4, 2, gradient);
    expectPixels(ctx.fb, 0, 0, 24, 20, want.at);
  });

  it('gives each SubrectsColoured subrect its own colour and lets a later tile set a new foreground', async () => {
    const payload = hextileRect([
      hextileTile({
        bg: BLUE,
        subrects: [
          { x: 2, y: 2, w: 4, h: 4, color: YELLOW },
          { x: 4, y: 4, w: 12, h: 12, color: RED },
          { x: 0, y: 15, w: 16, h: 1, color: GREEN },
        ],
      }),
      hextileTile({ fg: YELLOW, subrects: [{ x: 0, y: 0, w: 1, h: 3 }] }), // background carried from a coloured tile
    ]);
    const ctx = await expectSameAtEverySplit(hextileEncoding, [{ rect: rect(0, 0, 20, 16), payload }], { width: 20, height: 16 });
    const want = new RgbCanvas(20, 16)
      .paint(0, 0, 16, 16, BLUE)
      .paint(2, 2, 4, 4, YELLOW)
      .paint(4, 4, 12, 12, RED)
      .paint(0, 15, 16, 1, GREEN)
      .paint(16, 0, 4, 16, BLUE)
      .paint(16, 0, 1, 3, YELLOW);
    expectPixels(ctx.fb, 0, 0, 20, 16, want.at);
  });

  it('treats a tile with the Raw bit as raw whatever the other bits, and keeps the carried background (documented choice)', async () => {
    const payload = hextileRect([
      hextileTile({ bg: GREEN }),
      hextileRawTile(16, 3, gradient, 2 | 4 | 8 | 16), // subencoding 31: the other bits are irrelevant
      hextileTile({}), // after a raw tile: the background from before it
    ]);
    const ctx = await expectSameAtEverySplit(hextileEncoding, [{ rect: rect(0, 0, 40, 3), payload }], { width: 40, height: 3 });
    const want = new RgbCanvas(40, 3).paint(0, 0, 16, 3, GREEN).paint(16, 0, 16, 3, gradient).paint(32, 0, 8, 3, GREEN);
    expectPixels(ctx.fb, 0, 0, 40, 3, want.at);
  });

  it('draws AnySubrects with zero subrects as solid background, and starts from black when no background was ever sent', async () => {
    const payload = hextileRect([hextileTile({ fg: RED, subrects: [{ x: 1, y: 1, w: 2, h: 1 }] }), hextileTile({ bg: YELLOW, subrects: [] })]);
    const ctx = await expectSameAtEverySplit(hextileEncoding, [{ rect: rect(0, 0, 20, 3), payload }], { width: 20, height: 3, init: (c) => c.sink.fill(0, 0, 20, 3, 0xff808080) });
    const want = new RgbCanvas(20, 3).paint(0, 0, 16, 3, [0, 0, 0]).paint(1, 1, 2, 1, RED).paint(16, 0, 4, 3, YELLOW);
    expectPixels(ctx.fb, 0, 0, 20, 3, want.at);
  });

  it('rejects a subrect that leaves a small edge tile with RFB_ERR_DECODE', async () => {
    // Second tile is 4 wide: x 2 + w 3 overflows it.
    const payload = hextileRect([hextileTile({ bg: RED }), hextileTile({ fg: GREEN, subrects: [{ x: 2, y: 0, w: 3, h: 1 }] })]);
    await expect(decodeRects(hextileEncoding, [{ rect: rect(0, 0, 20, 4), payload }], { width: 20, height: 4 })).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
  });

  it('rejects a subrect that runs past the 16th row of a full tile with RFB_ERR_DECODE', async () => {
    const payload = hextileTile({ bg: RED, subrects: [{ x: 0, y: 10, w: 1, h: 8, color: BLUE }] });
    await expect(decodeRects(hextileEncoding, [{ rect: rect(0, 0, 16, 16), payload }], { width: 16, height: 16 })).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
  });

  it('rejects a subencoding with undefined bits (zlibhex bits) with RFB_ERR_DECODE', async () => {
    const payload = hextileTile({ bg: RED, extraBits: 64 });
    await expect(decodeRects(hextileEncoding, [{ rect: rect(0, 0, 4, 4), payload }], { width: 4, height: 4 })).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
  });

  it('rejects a rectangle outside the framebuffer with RFB_ERR_DECODE', async () => {
    const payload = hextileTile({ bg: RED });
    await expect(decodeRects(hextileEncoding, [{ rect: rect(0, 2, 4, 4), payload }], { width: 4, height: 4 })).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
  });

  it('accepts an empty rectangle with no tiles', async () => {
    const ctx = await decodeRects(hextileEncoding, [{ rect: rect(0, 0, 0, 5), payload: new Uint8Array(0) }], { width: 4, height: 8 });
    expect(ctx.fb.version).toBe(0);
  });
});
