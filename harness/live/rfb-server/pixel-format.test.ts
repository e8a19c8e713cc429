import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../errors.ts';
import { CLIENT_PIXEL_FORMAT, type PixelFormat } from '../../rfb/client-messages.ts';
import { pixelWriter } from './pixel-format.ts';

/** Two RGBA pixels in a 3-pixel-wide source; we write the 2x1 rectangle at (1, 0). */
const SRC = Uint8Array.of(0, 0, 0, 255, 0x12, 0x34, 0x56, 255, 255, 128, 1, 255);
const write = (pf: Partial<PixelFormat>): number[] => {
  const out = new Uint8Array(8);
  pixelWriter({ ...CLIENT_PIXEL_FORMAT, ...pf }).rect(SRC, 3, 1, 0, 2, 1, out, 0);
  return [...out];
};

describe('pixelWriter', () => {
  it("noVNC's format (32 bpp LE, shifts 0/8/16) and its big-endian twin are straight copies", () => {
    expect(pixelWriter(CLIENT_PIXEL_FORMAT).copy).toBe(true);
    expect(write({})).toEqual([0x12, 0x34, 0x56, 255, 255, 128, 1, 255]);
    const be = { bigEndian: true, redShift: 24, greenShift: 16, blueShift: 8 };
    expect(pixelWriter({ ...CLIENT_PIXEL_FORMAT, ...be }).copy).toBe(true);
    expect(write(be)).toEqual([0x12, 0x34, 0x56, 255, 255, 128, 1, 255]);
  });

  it('converts any other 32 bpp true-colour format: BGR, big-endian, smaller maxima', () => {
    // B at byte 0, G at 1, R at 2 (shifts 16/8/0, little-endian).
    expect(write({ redShift: 16, blueShift: 0 })).toEqual([0x56, 0x34, 0x12, 0, 1, 128, 255, 0]);
    // Big-endian 0x00RRGGBB.
    expect(write({ bigEndian: true, redShift: 16, greenShift: 8, blueShift: 0 })).toEqual([0, 0x12, 0x34, 0x56, 0, 255, 128, 1]);
    // 5-6-5 in the low 16 bits: 0x12 -> 2, 0x34 -> 13, 0x56 -> 10 (rounded); 255 -> 31, 128 -> 32, 1 -> 0.
    const v1 = (2 << 11) | (13 << 5) | 10;
    const v2 = (31 << 11) | (32 << 5) | 0;
    expect(write({ redMax: 31, greenMax: 63, blueMax: 31, redShift: 11, greenShift: 5, blueShift: 0 })).toEqual([v1 & 255, v1 >> 8, 0, 0, v2 & 255, v2 >> 8, 0, 0]);
  });

  it('copies a full-width rectangle and a rectangle inside a row alike', () => {
    const src = Uint8Array.from({ length: 4 * 3 * 4 }, (_, i) => i);
    const full = new Uint8Array(4 * 2 * 4);
    pixelWriter(CLIENT_PIXEL_FORMAT).rect(src, 4, 0, 1, 4, 2, full, 0);
    expect([...full]).toEqual([...src.subarray(16, 48)]);
    const part = new Uint8Array(2 * 2 * 4);
    pixelWriter(CLIENT_PIXEL_FORMAT).rect(src, 4, 1, 1, 2, 2, part, 0);
    expect([...part]).toEqual([...src.subarray(20, 28), ...src.subarray(36, 44)]);
  });

  it('refuses 8 and 16 bpp, a colour map, and a channel that overflows 32 bits, with LIVE_ERR_PIXEL_FORMAT', () => {
    for (const pf of [{ bitsPerPixel: 16, depth: 16 }, { bitsPerPixel: 8, depth: 8 }, { trueColour: false }, { redShift: 28 }, { greenMax: 0 }]) {
      let err: unknown;
      try {
        pixelWriter({ ...CLIENT_PIXEL_FORMAT, ...pf });
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'LIVE_ERR_PIXEL_FORMAT'), JSON.stringify(pf)).toBe(true);
      expect((err as Error).message).toMatch(/ask for 32 bpp true colour/);
    }
  });
});
