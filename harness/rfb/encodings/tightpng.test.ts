import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { tightPngEncoding } from './tightpng.ts';
import type { VncuaError } from '../../errors.ts';
import type { RectHeader } from './types.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import { type Rgb, TightDeflaters, qemuGradientRect, tightBasic, tightControl, tightFill, tightJpeg, tightPng } from '../test-helpers/fixtures-tight.ts';

const rect = (x: number, y: number, width: number, height: number): RectHeader => ({ x, y, width, height, encoding: -260 });
const black = (): Rgb => [0, 0, 0];
const rough = (px: number, py: number): Rgb => [(px * 97 + py * 31) & 255, ((px ^ py) * 53) & 255, (px * py * 17) & 255];
const smooth = (px: number, py: number): Rgb => [40 + px * 9, 60 + py * 11, 200 - px * 5 - py * 3];

/** Encode a w x h image with sharp. */
async function encode(w: number, h: number, color: (px: number, py: number) => Rgb, format: 'png' | 'jpeg'): Promise<Uint8Array> {
  const raw = Buffer.alloc(w * h * 3);
  for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) raw.set(color(px, py), (py * w + px) * 3);
  const img = sharp(raw, { raw: { width: w, height: h, channels: 3 } });
  return format === 'png' ? img.png().toBuffer() : img.jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer();
}

describe('TightPNG', () => {
  it('draws PNG rectangles exactly, and fills, split anywhere', async () => {
    const png = await encode(6, 5, rough, 'png');
    const ctx = await expectSameAtEverySplit(
      tightPngEncoding,
      [
        { rect: rect(1, 0, 6, 5), payload: tightPng(png) },
        { rect: rect(0, 5, 8, 1), payload: tightFill([200, 100, 50]) },
      ],
      { width: 8, height: 6 },
    );
    expectPixels(ctx.fb, 1, 0, 6, 5, rough);
    expectPixels(ctx.fb, 0, 5, 8, 1, () => [200, 100, 50]);
    expectPixels(ctx.fb, 0, 0, 1, 5, black);
  });

  it('draws JPEG rectangles like Tight', async () => {
    const jpeg = await encode(8, 8, smooth, 'jpeg');
    const ctx = await expectSameAtEverySplit(tightPngEncoding, [{ rect: rect(0, 0, 8, 8), payload: tightJpeg(jpeg, { reset: 0b1111 }) }], { width: 8, height: 8 });
    let maxErr = 0;
    for (let py = 0; py < 8; py++) {
      for (let px = 0; px < 8; px++) {
        const got = ctx.fb.pixel(px, py);
        const want = smooth(px, py);
        for (let c = 0; c < 3; c++) maxErr = Math.max(maxErr, Math.abs(got[c]! - want[c]!));
      }
    }
    expect(maxErr).toBeLessThanOrEqual(8);
  });

  it('reports a PNG whose size differs from the rectangle through onError (RFB_ERR_DECODE)', async () => {
    const png = await encode(4, 4, rough, 'png');
    const rects = [
      { rect: rect(0, 0, 5, 4), payload: tightPng(png) },
      { rect: rect(0, 4, 6, 2), payload: tightFill([1, 1, 1]) },
    ];
    const perRun: VncuaError[][] = [];
    const ctx = await expectSameAtEverySplit(tightPngEncoding, rects, {
      width: 6,
      height: 6,
      init: (c) => {
        const errors: VncuaError[] = [];
        perRun.push(errors);
        c.fb.onError = (e) => errors.push(e);
      },
    });
    expect(perRun.length).toBe(rects.reduce((n, r) => n + r.payload.length, 0) + 1);
    for (const errors of perRun) expect(errors.map((e) => e.code)).toEqual(['RFB_ERR_DECODE']);
    expectPixels(ctx.fb, 0, 0, 6, 4, black);
    expectPixels(ctx.fb, 0, 4, 6, 2, () => [1, 1, 1]);
  });

  it("decodes QEMU's gradient-filtered BasicCompression rectangles (lossy=on) exactly, between PNG rectangles, split anywhere", async () => {
    const z = new TightDeflaters();
    const png = await encode(4, 2, rough, 'png');
    const rects = [
      { rect: rect(0, 0, 6, 5), payload: qemuGradientRect({ width: 6, height: 5, rgb: smooth }, z) },
      { rect: rect(0, 5, 4, 2), payload: tightPng(png) },
      // the same zlib stream continues across rectangles (sync-flushed, not reset)
      { rect: rect(6, 0, 2, 7), payload: qemuGradientRect({ width: 2, height: 7, rgb: rough }, z) },
    ];
    expect(rects[0]!.payload[0]).toBe(0x70);
    expect(rects[0]!.payload[1]).toBe(2);
    const ctx = await expectSameAtEverySplit(tightPngEncoding, rects, { width: 8, height: 7, init: (c) => (c.tightKinds = new Map()) });
    expect(Object.fromEntries(ctx.tightKinds!)).toEqual({ gradient: 2, png: 1 });
    expectPixels(ctx.fb, 0, 0, 6, 5, smooth);
    expectPixels(ctx.fb, 0, 5, 4, 2, rough);
    expectPixels(ctx.fb, 6, 0, 2, 7, rough);
    expectPixels(ctx.fb, 4, 5, 2, 2, black);
  });

  it('decodes every other BasicCompression form (copy and palette, every stream) as Tight does', async () => {
    for (let mode = 0; mode < 8; mode++) {
      const z = new TightDeflaters();
      const payload = tightBasic({ width: 4, height: 3, filter: 'copy', explicitFilter: (mode & 4) !== 0, stream: mode & 3, rgb: rough }, z);
      expect(payload[0]! >> 4).toBe(mode);
      const ctx = await decodeRects(tightPngEncoding, [{ rect: rect(0, 0, 4, 3), payload }], { width: 4, height: 3 });
      expectPixels(ctx.fb, 0, 0, 4, 3, rough);
    }
    const palette: Rgb[] = [
      [10, 20, 30],
      [200, 100, 0],
      [0, 255, 0],
    ];
    const payload = tightBasic({ width: 5, height: 3, filter: 'palette', palette, index: (px, py) => (px + py) % 3 }, new TightDeflaters());
    const ctx = await decodeRects(tightPngEncoding, [{ rect: rect(0, 0, 5, 3), payload }], { width: 5, height: 3 });
    expectPixels(ctx.fb, 0, 0, 5, 3, (px, py) => palette[(px + py) % 3]!);
  });

  it('rejects control bytes naming no compression type and an empty PNG', async () => {
    for (const mode of [0xb, 0xc, 0xd, 0xe, 0xf]) {
      await expect(decodeRects(tightPngEncoding, [{ rect: rect(0, 0, 2, 2), payload: Uint8Array.of(tightControl(mode), 1, 2, 3) }], { width: 2, height: 2 })).rejects.toMatchObject(
        { code: 'RFB_ERR_DECODE' },
      );
    }
    await expect(decodeRects(tightPngEncoding, [{ rect: rect(0, 0, 2, 2), payload: Uint8Array.of(tightControl(0xa), 0) }], { width: 2, height: 2 })).rejects.toMatchObject({
      code: 'RFB_ERR_DECODE',
    });
  });
});
