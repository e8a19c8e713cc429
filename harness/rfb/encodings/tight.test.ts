import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { tightEncoding } from './tight.ts';
import { peekCompactLength } from './tight-common.ts';
import { ByteQueue } from '../bytes.ts';
import type { VncuaError } from '../../errors.ts';
import type { RectHeader } from './types.ts';
import { decodeRects, expectPixels, expectSameAtEverySplit } from '../test-helpers/decode.ts';
import { type Rgb, TightDeflaters, compactLength, tightBasic, tightControl, tightFill, tightJpeg, tightRowBytes } from '../test-helpers/fixtures-tight.ts';

const rect = (x: number, y: number, width: number, height: number): RectHeader => ({ x, y, width, height, encoding: 7 });
const black = (): Rgb => [0, 0, 0];
const smooth = (px: number, py: number): Rgb => [40 + px * 9, 60 + py * 11, 200 - px * 5 - py * 3];
/** Colours that make the gradient predictor clamp both ways and the residuals wrap. */
const rough = (px: number, py: number): Rgb => [(px * 97 + py * 31) & 255, ((px ^ py) * 53 + 250) & 255, (px * py * 17 + (px & 1) * 255) & 255];
const red: Rgb = [255, 0, 0];
const blue: Rgb = [0, 0, 255];

/** Raw RGB bytes of a w x h image. */
function rgbImage(w: number, h: number, color: (px: number, py: number) => Rgb): Buffer {
  const b = Buffer.alloc(w * h * 3);
  for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) b.set(color(px, py), (py * w + px) * 3);
  return b;
}

describe('Tight compact length', () => {
  it('matches the spec example (10000 = 0x90 0x4E) and reads back every width of 1..3 bytes', () => {
    expect([...compactLength(10000)]).toEqual([0x90, 0x4e]);
    for (const n of [0, 1, 127, 128, 10000, 16383, 16384, 1_000_000, 4194303]) {
      const bytes = compactLength(n);
      const q = new ByteQueue();
      q.push(Uint8Array.of(0xee, ...bytes));
      expect(peekCompactLength(q, 1), `length ${n}`).toBe(n * 4 + bytes.length);
      const short = new ByteQueue();
      short.push(Uint8Array.of(0xee, ...bytes.subarray(0, bytes.length - 1)));
      expect(peekCompactLength(short, 1), `length ${n} cut short`).toBe(-1);
    }
  });
});

describe('Tight fill', () => {
  it('fills the rectangle with one TPIXEL, split anywhere', async () => {
    const ctx = await expectSameAtEverySplit(tightEncoding, [{ rect: rect(1, 1, 3, 2), payload: tightFill([10, 200, 30]) }], { width: 6, height: 4 });
    expectPixels(ctx.fb, 1, 1, 3, 2, () => [10, 200, 30]);
    expectPixels(ctx.fb, 0, 0, 6, 1, black);
    expectPixels(ctx.fb, 4, 1, 2, 3, black);
  });
});

describe('Tight basic compression, copy filter', () => {
  it('reads data under 12 bytes as is (no length, no zlib)', async () => {
    const payload = tightBasic({ width: 3, height: 1, filter: 'copy', rgb: smooth }, new TightDeflaters());
    expect(payload.length).toBe(1 + 9);
    const ctx = await expectSameAtEverySplit(tightEncoding, [{ rect: rect(2, 1, 3, 1), payload }], { width: 6, height: 3 });
    expectPixels(ctx.fb, 2, 1, 3, 1, smooth);
    expectPixels(ctx.fb, 0, 0, 6, 1, black);
  });

  it('inflates data of exactly 12 bytes', async () => {
    const payload = tightBasic({ width: 4, height: 1, filter: 'copy', rgb: smooth }, new TightDeflaters());
    expect(payload[1], 'a one-byte compact length of the zlib data').toBe(payload.length - 2);
    expect(payload[2], 'zlib header').toBe(0x78);
    const ctx = await expectSameAtEverySplit(tightEncoding, [{ rect: rect(0, 0, 4, 1), payload }], { width: 4, height: 1 });
    expectPixels(ctx.fb, 0, 0, 4, 1, smooth);
  });

  it('inflates data of 12 bytes or more, with the implicit and the explicit copy filter', async () => {
    const z = new TightDeflaters();
    const implicit = tightBasic({ width: 5, height: 3, filter: 'copy', rgb: smooth }, z);
    const explicit = tightBasic({ width: 4, height: 2, filter: 'copy', explicitFilter: true, rgb: rough }, z);
    expect(implicit[0]).toBe(0x00);
    expect(explicit.subarray(0, 2)).toEqual(Uint8Array.of(0x40, 0));
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(0, 0, 5, 3), payload: implicit },
        { rect: rect(4, 3, 4, 2), payload: explicit },
      ],
      { width: 8, height: 5 },
    );
    expectPixels(ctx.fb, 0, 0, 5, 3, smooth);
    expectPixels(ctx.fb, 4, 3, 4, 2, rough);
    expectPixels(ctx.fb, 0, 3, 4, 2, black);
  });
});

describe('Tight basic compression, palette filter', () => {
  const mono = (px: number, py: number) => ((px * 3 + py) % 5 < 2 ? 1 : 0);

  it('draws 2 colours at 1 bit per pixel with rows padded to a byte (width 11), raw and zlib', async () => {
    const z = new TightDeflaters();
    const small = tightBasic({ width: 5, height: 2, filter: 'palette', palette: [red, blue], index: mono }, z);
    const big = tightBasic({ width: 11, height: 7, filter: 'palette', palette: [blue, red], index: mono, stream: 1 }, z);
    expect(tightRowBytes({ width: 11, filter: 'palette', palette: [blue, red] })).toBe(2);
    expect(small.length).toBe(2 + 1 + 6 + 2); // ctl, filter, count, 2 TPIXELs, 2 one-byte rows: no zlib
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(0, 0, 5, 2), payload: small },
        { rect: rect(1, 2, 11, 7), payload: big },
      ],
      { width: 13, height: 9 },
    );
    expectPixels(ctx.fb, 0, 0, 5, 2, (px, py) => (mono(px, py) ? blue : red));
    expectPixels(ctx.fb, 1, 2, 11, 7, (px, py) => (mono(px, py) ? red : blue));
    expectPixels(ctx.fb, 12, 2, 1, 7, black);
  });

  it('draws 3..256 colours at one byte per pixel', async () => {
    const z = new TightDeflaters();
    const five: Rgb[] = [red, blue, [0, 255, 0], [12, 34, 56], [255, 255, 255]];
    const fiveIndex = (px: number, py: number) => (px + 2 * py) % 5;
    const all: Rgb[] = Array.from({ length: 256 }, (_, i) => [i, 255 - i, (i * 7) & 255]);
    const allIndex = (px: number, py: number) => py * 16 + px;
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(0, 0, 6, 4), payload: tightBasic({ width: 6, height: 4, filter: 'palette', palette: five, index: fiveIndex, stream: 2 }, z) },
        { rect: rect(0, 4, 3, 2), payload: tightBasic({ width: 3, height: 2, filter: 'palette', palette: five.slice(0, 3), index: (px) => px }, z) },
        { rect: rect(6, 0, 16, 16), payload: tightBasic({ width: 16, height: 16, filter: 'palette', palette: all, index: allIndex, stream: 2 }, z) },
      ],
      { width: 22, height: 16 },
    );
    expectPixels(ctx.fb, 0, 0, 6, 4, (px, py) => five[fiveIndex(px, py)]!);
    expectPixels(ctx.fb, 0, 4, 3, 2, (px) => five[px]!);
    expectPixels(ctx.fb, 6, 0, 16, 16, (px, py) => all[allIndex(px, py)]!);
  });
});

describe('Tight basic compression, gradient filter', () => {
  it('undoes the prediction (clamped, per component, zero outside the rect), raw and zlib', async () => {
    const z = new TightDeflaters();
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(0, 0, 2, 1), payload: tightBasic({ width: 2, height: 1, filter: 'gradient', rgb: rough }, z) },
        { rect: rect(0, 1, 7, 5), payload: tightBasic({ width: 7, height: 5, filter: 'gradient', rgb: rough, stream: 3 }, z) },
        { rect: rect(7, 0, 6, 6), payload: tightBasic({ width: 6, height: 6, filter: 'gradient', rgb: smooth, stream: 3 }, z) },
      ],
      { width: 13, height: 6 },
    );
    expectPixels(ctx.fb, 0, 0, 2, 1, rough);
    expectPixels(ctx.fb, 0, 1, 7, 5, rough);
    expectPixels(ctx.fb, 7, 0, 6, 6, smooth);
  });
});

describe('Tight rectangles larger than one drawing band (2048 x 33 = 67584 pixels)', () => {
  it('draws every row of palette and gradient rectangles at the maximum width', async () => {
    const z = new TightDeflaters(9);
    const w = 2048;
    const h = 33;
    const five: Rgb[] = [red, blue, [0, 255, 0], [12, 34, 56], [255, 255, 255]];
    const idx = (px: number, py: number) => (px + py) % 5;
    const bits = (px: number, py: number) => (((px >> 3) * 7 + py * py) % 3 === 0 ? 1 : 0); // rows 0 and 32 differ
    const ramp = (px: number, py: number): Rgb => [px & 255, py * 7, (px >> 3) & 255];
    const rects = [
      { rect: rect(0, 0, w, h), payload: tightBasic({ width: w, height: h, filter: 'palette', palette: five, index: idx, stream: 1 }, z) },
      { rect: rect(0, h, w, h), payload: tightBasic({ width: w, height: h, filter: 'palette', palette: [red, blue], index: bits, stream: 2 }, z) },
      { rect: rect(0, 2 * h, w, h), payload: tightBasic({ width: w, height: h, filter: 'gradient', rgb: ramp, stream: 3 }, z) },
    ];
    const ctx = await expectSameAtEverySplit(tightEncoding, rects, { width: w, height: 3 * h });
    expectPixels(ctx.fb, 0, 0, w, h, (px, py) => five[idx(px, py)]!);
    expectPixels(ctx.fb, 0, h, w, h, (px, py) => (bits(px, py) ? blue : red));
    expectPixels(ctx.fb, 0, 2 * h, w, h, ramp);
  });
});

describe('Tight zlib streams', () => {
  it('keeps four independent streams whose dictionaries persist across rectangles', async () => {
    const z = new TightDeflaters();
    const rects = [];
    const colours =
      (k: number) =>
      (px: number, py: number): Rgb => [(px * 20 + k * 40) & 255, (py * 30 + k) & 255, (k * 60) & 255];
    // Every stream twice, interleaved, with the same picture so later blobs refer back to earlier ones.
    for (const s of [0, 1, 2, 3, 3, 2, 1, 0]) rects.push({ rect: rect(0, 0, 4, 3), payload: tightBasic({ width: 4, height: 3, filter: 'copy', rgb: colours(s), stream: s }, z) });
    rects.push({ rect: rect(4, 0, 4, 3), payload: tightBasic({ width: 4, height: 3, filter: 'copy', rgb: colours(2), stream: 2 }, z) });
    const ctx = await expectSameAtEverySplit(tightEncoding, rects, { width: 8, height: 3 });
    expectPixels(ctx.fb, 0, 0, 4, 3, colours(0));
    expectPixels(ctx.fb, 4, 0, 4, 3, colours(2));
    // The last blob only makes sense with stream 2's history: alone, on fresh streams, it fails.
    await expect(decodeRects(tightEncoding, [rects[8]!], { width: 8, height: 3 })).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });
  });

  it('resets the streams named in the control byte before the rectangle, also on fill rectangles', async () => {
    const z = new TightDeflaters();
    const first = tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, stream: 1 }, z);
    const second = tightBasic({ width: 4, height: 3, filter: 'copy', rgb: rough, stream: 0 }, z);
    z.reset(1);
    const freshOnReset = tightBasic({ width: 4, height: 3, filter: 'copy', rgb: rough, stream: 1, reset: 0b0010 }, z);
    z.reset(0);
    const fillResetting = tightFill([9, 8, 7], { reset: 0b0001 });
    const afterFill = tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, stream: 0 }, z);
    const rects = [
      { rect: rect(0, 0, 4, 3), payload: first },
      { rect: rect(4, 0, 4, 3), payload: second },
      { rect: rect(0, 3, 4, 3), payload: freshOnReset },
      { rect: rect(8, 0, 1, 6), payload: fillResetting },
      { rect: rect(4, 3, 4, 3), payload: afterFill },
    ];
    const ctx = await expectSameAtEverySplit(tightEncoding, rects, { width: 9, height: 6 });
    expectPixels(ctx.fb, 0, 0, 4, 3, smooth);
    expectPixels(ctx.fb, 4, 0, 4, 3, rough);
    expectPixels(ctx.fb, 0, 3, 4, 3, rough);
    expectPixels(ctx.fb, 8, 0, 1, 6, () => [9, 8, 7]);
    expectPixels(ctx.fb, 4, 3, 4, 3, smooth);
    // Without the reset bit the fresh zlib header lands mid-stream and decoding fails.
    const noReset = freshOnReset.slice();
    noReset[0] = noReset[0]! & 0xf0;
    await expect(decodeRects(tightEncoding, [rects[0]!, rects[1]!, { rect: rect(0, 3, 4, 3), payload: noReset }], { width: 9, height: 6 })).rejects.toMatchObject({
      code: 'RFB_ERR_DECODE',
    });
  });
});

describe('Tight NoZlib (TurboVNC / libvncserver at compression level 0)', () => {
  it('reads length-prefixed uncompressed data, with and without a filter byte', async () => {
    const z = new TightDeflaters();
    const copy = tightBasic({ width: 5, height: 1, filter: 'copy', rgb: smooth, noZlib: true }, z);
    const pal = tightBasic({ width: 6, height: 2, filter: 'palette', palette: [red, blue, [1, 2, 3]], index: (px, py) => (px + py) % 3, noZlib: true }, z);
    expect(copy[0]).toBe(0xa0);
    expect(pal[0]).toBe(0xe0);
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(0, 0, 5, 1), payload: copy },
        { rect: rect(0, 1, 6, 2), payload: pal },
      ],
      { width: 6, height: 3 },
    );
    expectPixels(ctx.fb, 0, 0, 5, 1, smooth);
    expectPixels(ctx.fb, 0, 1, 6, 2, (px, py) => ([red, blue, [1, 2, 3]] as Rgb[])[(px + py) % 3]!);
  });
});

describe('Tight JPEG', () => {
  it('hands the JFIF bytes to the framebuffer, which draws them in order with later rectangles', async () => {
    const w = 16;
    const h = 8;
    const jpeg = await sharp(rgbImage(w, h, smooth), { raw: { width: w, height: h, channels: 3 } })
      .jpeg({ quality: 95, chromaSubsampling: '4:4:4' })
      .toBuffer();
    const reference = await sharp(jpeg).ensureAlpha().raw().toBuffer();
    const z = new TightDeflaters();
    const idx = (px: number, py: number) => (px * 5 + py) % 3;
    // Rectangles queued behind the pending JPEG: a fill over it, then two palette rects whose
    // pixels pass through the decoder's reused band buffer (the sink must copy them).
    const ctx = await expectSameAtEverySplit(
      tightEncoding,
      [
        { rect: rect(1, 1, w, h), payload: tightJpeg(jpeg) },
        { rect: rect(1, 1, 2, 2), payload: tightFill([1, 2, 3]) },
        { rect: rect(0, 9, 9, 1), payload: tightBasic({ width: 9, height: 1, filter: 'palette', palette: [red, blue, [7, 7, 7]], index: idx }, z) },
        { rect: rect(9, 9, 9, 1), payload: tightBasic({ width: 9, height: 1, filter: 'palette', palette: [blue, red], index: (px) => px & 1 }, z) },
      ],
      { width: 18, height: 10 },
    );
    expectPixels(ctx.fb, 1, 1, 2, 2, () => [1, 2, 3]);
    expectPixels(ctx.fb, 0, 9, 9, 1, (px, py) => ([red, blue, [7, 7, 7]] as Rgb[])[idx(px, py)]!);
    expectPixels(ctx.fb, 9, 9, 9, 1, (px) => (px & 1 ? red : blue));
    let maxErr = 0;
    for (let py = 0; py < h; py++) {
      for (let px = 0; px < w; px++) {
        const got = ctx.fb.pixel(1 + px, 1 + py);
        if (px < 2 && py < 2) continue;
        const o = (py * w + px) * 4;
        expect([got[0], got[1], got[2]], `pixel ${px},${py} vs sharp's decode`).toEqual([reference[o], reference[o + 1], reference[o + 2]]);
        const want = smooth(px, py);
        for (let c = 0; c < 3; c++) maxErr = Math.max(maxErr, Math.abs(got[c]! - want[c]!));
      }
    }
    expect(maxErr).toBeLessThanOrEqual(8);
    expectPixels(ctx.fb, 0, 0, 18, 1, black);
  });

  it('reports a JPEG whose size differs from the rectangle through onError (RFB_ERR_DECODE) and keeps drawing', async () => {
    const jpeg = await sharp(rgbImage(8, 8, smooth), { raw: { width: 8, height: 8, channels: 3 } })
      .jpeg()
      .toBuffer();
    const rects = [
      { rect: rect(0, 0, 16, 8), payload: tightJpeg(jpeg) },
      { rect: rect(0, 8, 16, 2), payload: tightFill([5, 6, 7]) },
    ];
    const perRun: VncuaError[][] = [];
    const ctx = await expectSameAtEverySplit(tightEncoding, rects, {
      width: 16,
      height: 10,
      init: (c) => {
        const errors: VncuaError[] = [];
        perRun.push(errors);
        c.fb.onError = (e) => errors.push(e);
      },
    });
    const total = rects.reduce((n, r) => n + r.payload.length, 0);
    expect(perRun.length, 'whole, every split, byte at a time').toBe(total + 1);
    for (const errors of perRun) expect(errors.map((e) => e.code)).toEqual(['RFB_ERR_DECODE']);
    expectPixels(ctx.fb, 0, 0, 16, 8, black);
    expectPixels(ctx.fb, 0, 8, 16, 2, () => [5, 6, 7]);
  });
});

describe('Tight malformed data', () => {
  const z = () => new TightDeflaters();
  const rejects = (payload: Uint8Array, r = rect(0, 0, 4, 3), size = { width: 8, height: 8 }) =>
    expect(decodeRects(tightEncoding, [{ rect: r, payload }], size)).rejects.toMatchObject({ code: 'RFB_ERR_DECODE' });

  it('rejects control bytes naming no compression type', async () => {
    for (const mode of [0xb, 0xc, 0xd, 0xf]) await rejects(Uint8Array.of(tightControl(mode), 1, 2, 3, 4));
  });

  it('rejects an unknown filter id', async () => {
    await rejects(tightBasic({ width: 4, height: 3, filter: 'copy', explicitFilter: true, filterId: 3, rgb: smooth }, z()));
  });

  it('rejects zlib data that inflates to the wrong size', async () => {
    const short = new Uint8Array(4 * 3 * 3 - 3);
    await rejects(tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, filtered: short }, z()));
    const long = new Uint8Array(4 * 3 * 3 + 3);
    await rejects(tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, filtered: long }, z()));
  });

  it('rejects corrupt zlib data', async () => {
    await rejects(tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, zlib: Uint8Array.of(0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0x00) }, z()));
  });

  it('rejects a palette index past the palette (8-bit and 1-bit forms)', async () => {
    await rejects(tightBasic({ width: 4, height: 3, filter: 'palette', palette: [red, blue, red], index: (px) => (px === 3 ? 3 : 0) }, z()));
    await rejects(tightBasic({ width: 3, height: 1, filter: 'palette', palette: [red], index: (px) => (px === 2 ? 1 : 0) }, z()), rect(0, 0, 3, 1));
    // A 1-colour palette with no set bit is accepted.
    const ctx = await decodeRects(
      tightEncoding,
      [{ rect: rect(0, 0, 3, 1), payload: tightBasic({ width: 3, height: 1, filter: 'palette', palette: [red], index: () => 0 }, z()) }],
      { width: 3, height: 1 },
    );
    expectPixels(ctx.fb, 0, 0, 3, 1, () => red);
  });

  it('rejects NoZlib data whose length is not the filtered size', async () => {
    await rejects(tightBasic({ width: 4, height: 3, filter: 'copy', rgb: smooth, noZlib: true, filtered: new Uint8Array(30) }, z()));
  });

  it('rejects an empty JPEG, a basic rectangle wider than 2048 and a rectangle outside the framebuffer', async () => {
    await rejects(Uint8Array.of(tightControl(0x9), 0));
    await rejects(Uint8Array.of(tightControl(0x0), 0), rect(0, 0, 2049, 1), { width: 2049, height: 1 });
    await rejects(tightFill(red), rect(6, 6, 4, 3));
  });
});
