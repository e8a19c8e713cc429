import { describe, expect, it } from 'vitest';
import { desktopSizeEncoding } from './desktop-size.ts';
import { rawEncoding } from './raw.ts';
import { ByteWriter } from '../bytes.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import { ENC, type RectHeader } from './types.ts';

const rect = (x: number, y: number, width: number, height: number, encoding: number): RectHeader => ({ x, y, width, height, encoding });
const bySpec = (r: RectHeader) => (r.encoding === ENC.DESKTOP_SIZE ? desktopSizeEncoding : rawEncoding);

/** A Raw payload of one colour. */
function rawSolid(w: number, h: number, c: [number, number, number]): Uint8Array {
  const out = new ByteWriter();
  for (let i = 0; i < w * h; i++) out.bytes([...c, 0]);
  return out.toBytes();
}

describe('DesktopSize', () => {
  it('resizes the framebuffer and the context, keeps old pixels, and bounds-checks later rectangles against the new size', async () => {
    const ctx = await expectSameAtEverySplit(
      bySpec,
      [
        { rect: rect(0, 0, 4, 2, ENC.RAW), payload: rawSolid(4, 2, [9, 8, 7]) },
        { rect: rect(123, 456, 6, 3, ENC.DESKTOP_SIZE), payload: new Uint8Array(0) }, // x, y ignored
        { rect: rect(4, 2, 2, 1, ENC.RAW), payload: rawSolid(2, 1, [1, 2, 3]) }, // only fits the new size
      ],
      { width: 4, height: 2 },
    );
    expect([ctx.fb.width, ctx.fb.height, ctx.width, ctx.height]).toEqual([6, 3, 6, 3]);
    expectPixels(ctx.fb, 0, 0, 4, 2, () => [9, 8, 7]);
    expectPixels(ctx.fb, 4, 2, 2, 1, () => [1, 2, 3]);
    expectPixels(ctx.fb, 4, 0, 2, 2, () => [0, 0, 0]);
  });

  it('rejects an impossible size with RFB_ERR_PROTOCOL', async () => {
    await expect(decodeRects(desktopSizeEncoding, [{ rect: rect(0, 0, 0, 10, ENC.DESKTOP_SIZE), payload: new Uint8Array(0) }], { width: 4, height: 4 })).rejects.toMatchObject({
      code: 'RFB_ERR_PROTOCOL',
    });
    await expect(decodeRects(desktopSizeEncoding, [{ rect: rect(0, 0, 20000, 10, ENC.DESKTOP_SIZE), payload: new Uint8Array(0) }], { width: 4, height: 4 })).rejects.toMatchObject({
      code: 'RFB_ERR_PROTOCOL',
    });
  });
});
