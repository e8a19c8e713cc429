import { describe, expect, it } from 'vitest';
import { rawEncoding } from './raw.ts';
import { copyRectEncoding } from './copyrect.ts';
import { ByteWriter } from '../bytes.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import type { RectHeader } from './types.ts';

/** A Raw payload whose pixel (px, py) has colour `color(px, py)`. */
function rawPayload(w: number, h: number, color: (px: number, py: number) => [number, number, number]): Uint8Array {
  const out = new ByteWriter();
  for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) out.bytes([...color(px, py), 0x5a]);
  return out.toBytes();
}

/** A CopyRect payload. */
function copyRectPayload(srcX: number, srcY: number): Uint8Array {
  return new ByteWriter().u16(srcX).u16(srcY).toBytes();
}

const rect = (x: number, y: number, width: number, height: number, encoding: number): RectHeader => ({ x, y, width, height, encoding });
const gradient = (px: number, py: number): [number, number, number] => [px * 20, py * 30, (px + py) * 7];

describe('Raw', () => {
  it('draws every pixel, whatever the byte split', async () => {
    const ctx = await expectSameAtEverySplit(rawEncoding, [{ rect: rect(2, 1, 5, 3, 0), payload: rawPayload(5, 3, gradient) }], { width: 10, height: 6 });
    expectPixels(ctx.fb, 2, 1, 5, 3, gradient);
    expectPixels(ctx.fb, 0, 0, 2, 1, () => [0, 0, 0]);
  });

  it('rejects a rectangle outside the framebuffer with RFB_ERR_DECODE', async () => {
    await expect(decodeRects(rawEncoding, [{ rect: rect(8, 0, 5, 1, 0), payload: rawPayload(5, 1, gradient) }], { width: 10, height: 6 })).rejects.toMatchObject({
      code: 'RFB_ERR_DECODE',
    });
  });

  it('accepts an empty rectangle with no payload', async () => {
    const ctx = await decodeRects(rawEncoding, [{ rect: rect(0, 0, 0, 0, 0), payload: new Uint8Array(0) }], { width: 4, height: 4 });
    expect(ctx.fb.version).toBe(0);
  });
});

describe('CopyRect', () => {
  it('copies an overlapping block downwards and rightwards, split anywhere', async () => {
    const spec = (r: RectHeader) => (r.encoding === 0 ? rawEncoding : copyRectEncoding);
    const ctx = await expectSameAtEverySplit(
      spec,
      [
        { rect: rect(0, 0, 6, 6, 0), payload: rawPayload(6, 6, gradient) },
        { rect: rect(1, 1, 4, 4, 1), payload: copyRectPayload(0, 0) },
      ],
      { width: 6, height: 6 },
    );
    expectPixels(ctx.fb, 1, 1, 4, 4, (px, py) => gradient(px, py));
    expectPixels(ctx.fb, 0, 0, 6, 1, (px) => gradient(px, 0));
  });

  it('copies an overlapping block upwards and leftwards', async () => {
    const spec = (r: RectHeader) => (r.encoding === 0 ? rawEncoding : copyRectEncoding);
    const ctx = await decodeRects(
      spec,
      [
        { rect: rect(0, 0, 6, 6, 0), payload: rawPayload(6, 6, gradient) },
        { rect: rect(0, 0, 4, 4, 1), payload: copyRectPayload(2, 2) },
      ],
      { width: 6, height: 6 },
    );
    expectPixels(ctx.fb, 0, 0, 4, 4, (px, py) => gradient(px + 2, py + 2));
  });

  it('rejects a source outside the framebuffer with RFB_ERR_DECODE', async () => {
    await expect(decodeRects(copyRectEncoding, [{ rect: rect(0, 0, 4, 4, 1), payload: copyRectPayload(3, 0) }], { width: 6, height: 6 })).rejects.toMatchObject({
      code: 'RFB_ERR_DECODE',
    });
  });
});
