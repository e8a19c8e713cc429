import { describe, expect, it } from 'vitest';
import { isBlankFrame } from './blank.ts';

/** A width×height frame of one colour, with `paint` setting some pixels. */
function frame(width: number, height: number, rgb: [number, number, number], channels: 3 | 4 = 4, paint?: (x: number, y: number) => [number, number, number] | null) {
  const data = new Uint8Array(width * height * channels);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const c = paint?.(x, y) ?? rgb;
      data.set(c, (y * width + x) * channels);
    }
  }
  return { width, height, data, channels };
}

describe('isBlankFrame', () => {
  it('a one-colour frame is blank, with its colour', () => {
    expect(isBlankFrame(frame(640, 360, [255, 255, 255]))).toEqual({ blank: true, colour: '#ffffff', share: 1 });
    expect(isBlankFrame(frame(100, 50, [18, 52, 86], 3))).toMatchObject({ blank: true, colour: '#123456' });
  });

  it('noise within the tolerance is still blank; a colour split over two buckets is one colour', () => {
    const f = frame(200, 100, [0, 0, 0], 4, (x, y) => ((x + y) % 2 ? [15, 17, 16] : [17, 15, 16]));
    expect(isBlankFrame(f).blank).toBe(true);
  });

  it('a line of text, a box or a half-and-half frame is not blank', () => {
    const text = frame(640, 360, [255, 255, 255], 4, (x, y) => (y >= 20 && y < 36 && x >= 20 && x < 140 && x % 3 === 0 ? [30, 30, 30] : null));
    expect(isBlankFrame(text).blank).toBe(false);
    const half = frame(64, 64, [255, 255, 255], 3, (x) => (x < 32 ? [0, 0, 0] : null));
    expect(isBlankFrame(half)).toMatchObject({ blank: false, share: 0.5 });
  });

  it('the share and tolerance options decide', () => {
    const dot = frame(100, 100, [200, 200, 200], 3, (x, y) => (x < 3 && y < 3 ? [0, 0, 0] : null));
    expect(isBlankFrame(dot).blank).toBe(false); // 9 of 10 000 pixels differ: 99.91 % < 99.95 %
    expect(isBlankFrame(dot, { share: 0.99 }).blank).toBe(true);
    expect(
      isBlankFrame(
        frame(10, 10, [0, 0, 0], 3, (x) => (x === 0 ? [20, 20, 20] : null)),
        { tolerance: 30 },
      ).blank,
    ).toBe(true);
  });

  it('a frame shorter than its size says is a RangeError', () => {
    expect(() => isBlankFrame({ width: 10, height: 10, data: new Uint8Array(10), channels: 3 })).toThrow(RangeError);
  });
});
