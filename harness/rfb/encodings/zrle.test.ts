import { describe, expect, it } from 'vitest';
import { zrleEncoding } from './zrle.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import { RgbCanvas } from '../test-helpers/fixtures-hextile.ts';
import { ZrleDeflater, zrleEncodeImage, zrleRawPayload, zrleRect, zrleTile, type Rgb } from '../test-helpers/fixtures-zrle.ts';
import type { RectHeader } from './types.ts';

const rect = (x: number, y: number, width: number, height: number): RectHeader => ({ x, y, width, height, encoding: 16 });
const gradient = (px: number, py: number): Rgb => [px * 4, py * 50, 255 - px * 3];
const PAL16: Rgb[] = Array.from({ length: 16 }, (_, i) => [i * 16, 255 - i * 16, (i * 37) % 256]);
const A: Rgb = [10, 20, 30];
const B: Rgb = [200, 100, 50];
const C: Rgb = [90, 250, 0];

/** Paint a sequence of run lengths over a tile (runs continue across rows). */
function paintRuns(canvas: RgbCanvas, x: number, y: number, tw: number, runs: Array<[Rgb, number]>): void {
  let i = 0;
  for (const [c, len] of runs) for (let k = 0; k < len; k++, i++) canvas.paint(x + (i % tw), y + Math.floor(i / tw), 1, 1, c);
}

const decodeOne = (payload: Uint8Array, r: RectHeader, size = { width: 80, height: 80 }) => decodeRects(zrleEncoding, [{ rect: r, payload }], size);

describe('ZRLE', () => {
  it('decodes raw, solid, 1/2/4-bit packed palettes, plain RLE and palette RLE over edge tiles, across rectangles, split anywhere', async () => {
    const z = new ZrleDeflater();
    const idx2 = (px: number, py: number) => (px + py) % 2;
    const idx3 = (px: number, py: number) => (px * 2 + py) % 3;
    const idx16 = (px: number, py: number) => (px + py * 3) % 16;
    const plainRuns: Array<[Rgb, number]> = [
      [A, 300],
      [B, 19],
      [C, 1],
    ]; // 300 = [255, 44]
    const palRuns: Array<[number, number]> = [
      [0, 1],
      [1, 2],
      [2, 256],
      [0, 61],
    ]; // 256 = [255, 0]
    const smallRuns: Array<[number, number]> = [
      [1, 7],
      [0, 1],
      [2, 22],
    ]; // crosses rows of a 6-wide tile
    // Four 70x5 rectangles: each a 64x5 tile and a 6x5 edge tile.
    const rects = [
      { rect: rect(0, 0, 70, 5), payload: zrleRect([zrleTile.raw(64, 5, gradient), zrleTile.solid(B)], z) },
      { rect: rect(0, 5, 70, 5), payload: zrleRect([zrleTile.palette([A, C], 64, 5, idx2), zrleTile.palette([A, B, C], 6, 5, idx3)], z) },
      { rect: rect(0, 10, 70, 5), payload: zrleRect([zrleTile.plainRle(plainRuns), zrleTile.palette(PAL16, 6, 5, idx16)], z) },
      { rect: rect(0, 15, 70, 5), payload: zrleRect([zrleTile.paletteRle([A, B, C], palRuns), zrleTile.paletteRle([A, B, C], smallRuns)], z) },
    ];
    const ctx = await expectSameAtEverySplit(zrleEncoding, rects, { width: 72, height: 21 });
    const pal3 = [A, B, C];
    const want = new RgbCanvas(72, 21)
      .paint(0, 0, 64, 5, gradient)
      .paint(64, 0, 6, 5, B)
      .paint(0, 5, 64, 5, (px, py) => [A, C][idx2(px, py)]!)
      .paint(64, 5, 6, 5, (px, py) => pal3[idx3(px, py)]!)
      .paint(64, 10, 6, 5, (px, py) => PAL16[idx16(px, py)]!);
    paintRuns(want, 0, 10, 64, plainRuns);
    paintRuns(
      want,
      0,
      15,
      64,
      palRuns.map(([i, n]) => [pal3[i]!, n]),
    );
    paintRuns(
      want,
      64,
      15,
      6,
      smallRuns.map(([i, n]) => [pal3[i]!, n]),
    );
    expectPixels(ctx.fb, 0, 0, 72, 21, want.at);
  });

  it('decodes edge tiles in both directions of a 65x65 rectangle', async () => {
    const z = new ZrleDeflater();
    const payload = zrleRect(
      [
        zrleTile.solid(A),
        zrleTile.paletteRle(
          [B, C],
          [
            [0, 30],
            [1, 34],
          ],
        ),
        zrleTile.plainRle([
          [C, 10],
          [B, 54],
        ]),
        zrleTile.raw(1, 1, () => [1, 2, 3]),
      ],
      z,
    );
    const ctx = await expectSameAtEverySplit(zrleEncoding, [{ rect: rect(1, 2, 65, 65), payload }], { width: 67, height: 68 });
    const want = new RgbCanvas(67, 68)
      .paint(1, 2, 64, 64, A)
      .paint(65, 2, 1, 30, B)
      .paint(65, 32, 1, 34, C)
      .paint(1, 66, 10, 1, C)
      .paint(11, 66, 54, 1, B)
      .paint(65, 66, 1, 1, [1, 2, 3]);
    expectPixels(ctx.fb, 0, 0, 67, 68, want.at);
  });

  it("keeps one zlib stream across rectangles: the second rectangle only inflates with the first one's dictionary", async () => {
    const z = new ZrleDeflater();
    const tile = () => zrleTile.palette(PAL16, 40, 4, (px, py) => (px * 7 + py) % 16);
    const first = zrleRect([tile()], z);
    const second = zrleRect([tile()], z); // same bytes again: deflate refers back into the first rectangle
    expect(second.length).toBeLessThan(first.length / 2);
    await expect(decodeOne(second, rect(0, 4, 40, 4))).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    const ctx = await expectSameAtEverySplit(
      zrleEncoding,
      [
        { rect: rect(0, 0, 40, 4), payload: first },
        { rect: rect(0, 4, 40, 4), payload: second },
      ],
      { width: 40, height: 8 },
    );
    expectPixels(ctx.fb, 0, 0, 40, 8, (px, py) => PAL16[(px * 7 + (py % 4)) % 16]!);
  });

  it('round-trips a text-like image through a real per-tile encoder', async () => {
    const w = 150;
    const h = 70;
    const rgb = new Uint8Array(w * h * 3);
    const color = (x: number, y: number): Rgb => {
      if (y < 12) return [40 + x, 60, 90 + (y << 2)]; // title-bar gradient
      if (x > 100 && y > 40) return [230, 230, 235]; // flat panel
      const glyph = ((x * 7) ^ (y * 13)) % 11 < 3 && x % 9 < 6; // strokes on white
      return glyph ? ((x + y) % 4 === 0 ? [128, 128, 128] : [20, 20, 20]) : [255, 255, 255];
    };
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) rgb.set(color(x, y), (y * w + x) * 3);
    const tiles = zrleEncodeImage(rgb, w, h);
    const kinds = new Set(tiles.map((t) => (t[0]! === 0 ? 'raw' : t[0]! === 1 ? 'solid' : t[0]! <= 16 ? 'packed' : t[0]! === 128 ? 'plain' : 'palrle')));
    expect(kinds.size).toBeGreaterThanOrEqual(3);
    const payload = zrleRect(tiles, new ZrleDeflater());
    const cuts = Array.from({ length: Math.floor(payload.length / 37) }, (_, i) => i * 37 + 5);
    const ctx = await decodeRects(zrleEncoding, [{ rect: rect(3, 1, w, h), payload }], { width: 160, height: 72, splitAt: cuts });
    expectPixels(ctx.fb, 3, 1, w, h, color);
  });

  it('accepts an empty rectangle whose sync-flushed data inflates to nothing', async () => {
    const z = new ZrleDeflater();
    const ctx = await decodeRects(
      zrleEncoding,
      [
        { rect: rect(0, 0, 0, 0), payload: zrleRect([], z) },
        { rect: rect(0, 0, 2, 1), payload: zrleRect([zrleTile.solid(C)], z) },
      ],
      { width: 2, height: 1 },
    );
    expectPixels(ctx.fb, 0, 0, 2, 1, () => C);
  });

  describe('rejects malformed data with RFB_ERR_DECODE', () => {
    const bad = (tiles: Uint8Array[], r = rect(0, 0, 4, 2)) => decodeOne(zrleRect(tiles, new ZrleDeflater()), r);

    it.each([17, 100, 127, 129])('undefined subencoding %i', async (sub) => {
      await expect(bad([zrleTile.custom(sub, new Array(400).fill(0))])).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('a plain RLE run that overflows the tile', async () => {
      await expect(
        bad([
          zrleTile.plainRle([
            [A, 5],
            [B, 4],
          ]),
        ]),
      ).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('a palette RLE run that overflows the tile', async () => {
      await expect(
        bad([
          zrleTile.paletteRle(
            [A, B],
            [
              [0, 3],
              [1, 300],
            ],
          ),
        ]),
      ).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('a packed palette index past the palette', async () => {
      await expect(bad([zrleTile.palette([A, B, C], 4, 2, (px) => px)])).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('a palette RLE index past the palette', async () => {
      await expect(
        bad([
          zrleTile.paletteRle(
            [A, B],
            [
              [0, 4],
              [2, 4],
            ],
          ),
        ]),
      ).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('tile data that ends inside a tile', async () => {
      await expect(bad([zrleTile.raw(4, 1, gradient)])).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('tile data left over after the last tile', async () => {
      await expect(bad([zrleTile.solid(A), zrleTile.solid(B)])).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('corrupt zlib data', async () => {
      const junk = Uint8Array.from({ length: 24 }, (_, i) => (i * 89 + 7) & 255);
      await expect(decodeOne(zrleRawPayload(junk), rect(0, 0, 4, 2))).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('an absurd compressed length, before waiting for it', async () => {
      await expect(decodeOne(zrleRawPayload(new Uint8Array(0), 0x7fffffff), rect(0, 0, 4, 2))).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });

    it('a rectangle outside the framebuffer', async () => {
      await expect(decodeOne(zrleRect([zrleTile.solid(A)], new ZrleDeflater()), rect(79, 0, 2, 1))).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
    });
  });
});
