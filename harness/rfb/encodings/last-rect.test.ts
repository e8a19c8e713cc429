import { describe, expect, it } from 'vitest';
import { lastRectEncoding } from './last-rect.ts';
import { rawEncoding } from './raw.ts';
import { ByteQueue, ByteWriter } from '../bytes.ts';
import { decodeRects, expectPixels, makeContext } from '../test-helpers/decode.ts';
import { ENC, type RectHeader } from './types.ts';

const rect = (x: number, y: number, width: number, height: number, encoding: number): RectHeader => ({ x, y, width, height, encoding });
const bySpec = (r: RectHeader) => (r.encoding === ENC.LAST_RECT ? lastRectEncoding : rawEncoding);

/** A Raw payload of one colour. */
function rawSolid(w: number, h: number, c: [number, number, number]): Uint8Array {
  const out = new ByteWriter();
  for (let i = 0; i < w * h; i++) out.bytes([...c, 0]);
  return out.toBytes();
}

describe('LastRect', () => {
  it("finishes at once without consuming the next rectangle's bytes or drawing anything", () => {
    const ctx = makeContext(4, 4);
    const q = new ByteQueue();
    q.push(rawSolid(1, 1, [5, 5, 5]));
    expect(lastRectEncoding.create(rect(0, 0, 0, 0, ENC.LAST_RECT), ctx).decode(q)).toBe(true);
    expect(q.available).toBe(4);
    expect(ctx.fb.version).toBe(0);
  });

  it('ends with nothing buffered, and a following rectangle still decodes', async () => {
    const ctx = await decodeRects(
      bySpec,
      [
        { rect: rect(0, 0, 0, 0, ENC.LAST_RECT), payload: new Uint8Array(0) },
        { rect: rect(1, 1, 1, 1, ENC.RAW), payload: rawSolid(1, 1, [5, 6, 7]) },
      ],
      { width: 3, height: 3, splitAt: [0, 1, 2, 3] },
    );
    expectPixels(ctx.fb, 1, 1, 1, 1, () => [5, 6, 7]);
  });
});
