import { describe, expect, it } from 'vitest';
import { applyRects, decodeBlob, diffRects, encodeBlob, subFilter, unSubFilter } from './frame-codec.ts';

/** A deterministic pseudo-random generator (an LCG), so failures reproduce. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** A screen with some texture (not flat: row and column matter). */
function screen(w: number, h: number): Uint8Array {
  const a = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) a.set([(x * 5 + y) & 255, (y * 3) & 255, (x ^ y) & 255], (y * w + x) * 3);
  return a;
}

/** Paint a w x h rectangle at (x, y) with `colour`. */
function paint(a: Uint8Array, width: number, x: number, y: number, w: number, h: number, colour: [number, number, number]): void {
  for (let r = y; r < y + h; r++) for (let c = x; c < x + w; c++) a.set(colour, (r * width + c) * 3);
}

/** The rectangles of a delta payload. */
function rectsOf(bytes: Uint8Array): Array<[number, number, number, number]> {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: dv.getUint32(0) }, (_, i) => [dv.getUint16(4 + i * 8), dv.getUint16(6 + i * 8), dv.getUint16(8 + i * 8), dv.getUint16(10 + i * 8)]);
}

describe('diffRects / applyRects', () => {
  it('a changed rectangle comes back as exactly that rectangle, whatever the band and column alignment', () => {
    for (const [x, y, w, h] of [
      [97, 53, 160, 100],
      [0, 0, 1, 1],
      [299, 169, 1, 1],
      [31, 15, 2, 2],
      [0, 0, 300, 170],
      [64, 16, 32, 16],
    ] as const) {
      const a = screen(300, 170);
      const b = a.slice();
      paint(b, 300, x, y, w, h, [1, 2, 3]);
      const d = diffRects(a, b, 300, 170)!;
      expect(rectsOf(d.bytes), `${x},${y} ${w}x${h}`).toEqual([[x, y, w, h]]);
      expect(d.pixelBytes).toBe(w * h * 3);
      const c = a.slice();
      applyRects(c, 300, d.bytes);
      expect(Buffer.compare(Buffer.from(c), Buffer.from(b))).toBe(0);
    }
  });

  it('two changes far apart on the same rows are two rectangles, not the span between them', () => {
    const a = screen(1280, 48);
    const b = a.slice();
    paint(b, 1280, 5, 3, 10, 4, [9, 9, 9]);
    paint(b, 1280, 1200, 5, 20, 2, [9, 9, 9]);
    const d = diffRects(a, b, 1280, 48)!;
    expect(d.pixelBytes).toBeLessThan(1280 * 3 * 4);
    expect(rectsOf(d.bytes)).toHaveLength(2);
  });

  it('random changes on odd sizes: applying the delta gives the new screen; no change gives null', () => {
    const rnd = lcg(7);
    for (let trial = 0; trial < 200; trial++) {
      const w = 1 + Math.floor(rnd() * 150);
      const h = 1 + Math.floor(rnd() * 60);
      const a = screen(w, h);
      const b = a.slice();
      const n = Math.floor(rnd() * 6);
      for (let k = 0; k < n; k++) {
        const x = Math.floor(rnd() * w);
        const y = Math.floor(rnd() * h);
        paint(b, w, x, y, 1 + Math.floor(rnd() * (w - x)), 1 + Math.floor(rnd() * (h - y)), [Math.floor(rnd() * 256), 0, 77]);
      }
      // Single pixels, one channel only.
      for (let k = 0; k < 3; k++) {
        const i = Math.floor(rnd() * b.length);
        b[i] = b[i]! ^ 1;
      }
      const d = diffRects(a, b, w, h);
      const c = a.slice();
      if (d) applyRects(c, w, d.bytes);
      expect(Buffer.compare(Buffer.from(c), Buffer.from(b)), `trial ${trial} ${w}x${h}`).toBe(0);
      if (d) for (const [x, y, rw, rh] of rectsOf(d.bytes)) expect(x + rw <= w && y + rh <= h).toBe(true);
    }
    const a = screen(33, 17);
    expect(diffRects(a, a.slice(), 33, 17)).toBeNull();
  });
});

describe('encodeBlob / decodeBlob', () => {
  it('round-trips, and keeps the Sub filter for gradients (far smaller), plain deflate otherwise', () => {
    const gradient = new Uint8Array(300 * 200 * 3).map((_, i) => ((i % 900) * 7 + Math.floor(i / 900)) & 255);
    const g = encodeBlob(gradient);
    expect(g[0]).toBe(1);
    expect(g.length).toBeLessThan(gradient.length / 50);
    expect(Buffer.compare(Buffer.from(decodeBlob(g)), Buffer.from(gradient))).toBe(0);
    // Flat: the filter gains nothing, the plain form is kept.
    const flat = new Uint8Array(5000).fill(200);
    const f = encodeBlob(flat);
    expect(f[0]).toBe(0);
    expect(Buffer.compare(Buffer.from(decodeBlob(f)), Buffer.from(flat))).toBe(0);
    // Large payloads choose on samples: a 1280x800 gradient screen.
    const big = screen(1280, 800);
    const b = encodeBlob(big);
    expect(b[0]).toBe(1);
    expect(Buffer.compare(Buffer.from(decodeBlob(b)), Buffer.from(big))).toBe(0);
    // Payloads not a multiple of 3 bytes, and tiny ones.
    for (const n of [0, 1, 2, 3, 4, 5, 7, 1001]) {
      const p = new Uint8Array(n).map((_, i) => (i * 13) & 255);
      expect(Array.from(decodeBlob(encodeBlob(p)))).toEqual(Array.from(p));
      expect(Array.from(unSubFilter(subFilter(p)))).toEqual(Array.from(p));
    }
  });

  it('an unknown method byte is an error, not garbage pixels', () => {
    const b = encodeBlob(new Uint8Array(30));
    b[0] = 9;
    expect(() => decodeBlob(b)).toThrow(/unknown blob method 9/);
  });
});
