import { describe, expect, it } from 'vitest';
import { cursorEncoding } from './cursor.ts';
import { decodeRects } from '../test-helpers/decode.ts';
import { cursorPayload, type Rgb } from '../test-helpers/fixtures-pseudo.ts';
import { ENC, type RectHeader } from './types.ts';

const cur = (hotX: number, hotY: number, width: number, height: number): RectHeader => ({ x: hotX, y: hotY, width, height, encoding: ENC.CURSOR });
const color = (px: number, py: number): Rgb => [px * 20, py * 60, 255 - px];
/** A mask that exercises both bytes of a 10-wide row (bit 7 of byte 0 and bits 7..6 of the padded byte 1). */
const opaque = (px: number, py: number) => (px + py) % 3 !== 0;

/** The RGBA image the decoder should produce. */
function expectedRgba(w: number, h: number): number[] {
  const out: number[] = [];
  for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) out.push(...color(px, py), opaque(px, py) ? 255 : 0);
  return out;
}

describe('Cursor', () => {
  it('expands pixels and the padded MSB-first mask to RGBA, whatever the byte split', async () => {
    const payload = cursorPayload(10, 3, color, opaque);
    expect(payload.length).toBe(10 * 3 * 4 + 2 * 3);
    // The hotspot lies outside the 4x4 framebuffer: it is not a framebuffer position.
    for (let cut = 0; cut <= payload.length; cut++) {
      const ctx = await decodeRects(cursorEncoding, [{ rect: cur(100, 200, 10, 3), payload }], { width: 4, height: 4, splitAt: [cut] });
      const shape = ctx.fb.cursorShape;
      expect(shape && { hotX: shape.hotX, hotY: shape.hotY, width: shape.width, height: shape.height }).toEqual({ hotX: 100, hotY: 200, width: 10, height: 3 });
      expect(Array.from(shape!.rgba)).toEqual(expectedRgba(10, 3));
    }
    const bytewise = await decodeRects(cursorEncoding, [{ rect: cur(1, 2, 10, 3), payload }], {
      width: 4,
      height: 4,
      splitAt: Array.from({ length: payload.length }, (_, i) => i),
    });
    expect(Array.from(bytewise.fb.cursorShape!.rgba)).toEqual(expectedRgba(10, 3));
  });

  it('clears the cursor for a 0x0 rectangle', async () => {
    const ctx = await decodeRects(
      cursorEncoding,
      [
        { rect: cur(0, 0, 2, 2), payload: cursorPayload(2, 2, color, () => true) },
        { rect: cur(0, 0, 0, 0), payload: new Uint8Array(0) },
      ],
      { width: 4, height: 4 },
    );
    expect(ctx.fb.cursorShape).toBeNull();
  });

  it('rejects an oversized cursor with RFB_ERR_DECODE', async () => {
    await expect(decodeRects(cursorEncoding, [{ rect: cur(0, 0, 513, 1), payload: new Uint8Array(513 * 4 + 65) }], { width: 4, height: 4 })).rejects.toMatchObject({
      code: 'RFB_ERR_DECODE',
    });
  });
});
