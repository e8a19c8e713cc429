/**
 * Test helpers shared by the encoding tests: run a decoder over a payload fed in
 * arbitrary chunks, and check that every split point gives the same framebuffer.
 */
import { expect } from 'vitest';
import { ByteQueue } from '../bytes.ts';
import { Framebuffer } from '../framebuffer.ts';
import { InflateStream } from '../zlib.ts';
import type { DecodeContext, EncodingSpec, RectHeader } from '../encodings/types.ts';

/** A fresh decode context over a real Framebuffer of the given size. */
export function makeContext(width: number, height: number): DecodeContext & { fb: Framebuffer } {
  const fb = new Framebuffer(width, height);
  return {
    fb,
    sink: fb,
    width,
    height,
    zrleStream: new InflateStream('ZRLE'),
    tightStreams: [new InflateStream('Tight0'), new InflateStream('Tight1'), new InflateStream('Tight2'), new InflateStream('Tight3')],
  };
}

/**
 * Decode a sequence of rectangles (each with its payload) fed to the decoders in `chunks`,
 * in order, as a live connection would. Returns the context (with its framebuffer).
 * Asserts that each decoder finishes exactly at its payload's end.
 */
export async function decodeRects(
  spec: EncodingSpec | ((rect: RectHeader) => EncodingSpec),
  rects: Array<{ rect: RectHeader; payload: Uint8Array }>,
  opts: { width: number; height: number; splitAt?: number[]; ctx?: DecodeContext & { fb: Framebuffer } },
): Promise<DecodeContext & { fb: Framebuffer }> {
  const ctx = opts.ctx ?? makeContext(opts.width, opts.height);
  // Concatenate all payloads, then cut at the split points: the cuts may fall anywhere, including between rectangles.
  const total = rects.reduce((n, r) => n + r.payload.length, 0);
  const all = new Uint8Array(total);
  let o = 0;
  for (const r of rects) {
    all.set(r.payload, o);
    o += r.payload.length;
  }
  const cuts = [0, ...(opts.splitAt ?? []).filter((c) => c > 0 && c < total).sort((a, b) => a - b), total];
  const q = new ByteQueue();
  let idx = 0;
  let decoder: ReturnType<EncodingSpec['create']> | null = null;
  const startRect = () => {
    const r = rects[idx]!;
    const s = typeof spec === 'function' ? spec(r.rect) : spec;
    decoder = s.create(r.rect, ctx);
  };
  if (rects.length > 0) startRect();
  for (let c = 0; c + 1 < cuts.length; c++) {
    q.push(all.slice(cuts[c]!, cuts[c + 1]!));
    while (decoder && (decoder as { decode(q: ByteQueue): boolean }).decode(q)) {
      idx++;
      decoder = null;
      if (idx < rects.length) startRect();
    }
  }
  expect(idx, 'every rectangle finished').toBe(rects.length);
  expect(q.available, 'no bytes left over').toBe(0);
  await ctx.fb.whenIdle();
  expectPlanesInStep(ctx.fb);
  return ctx;
}

/**
 * Decode once whole, then once split at every byte offset (two chunks), and once
 * one byte at a time; every run must yield the same framebuffer. Returns the whole-feed context.
 */
export async function expectSameAtEverySplit(
  spec: EncodingSpec | ((rect: RectHeader) => EncodingSpec),
  rects: Array<{ rect: RectHeader; payload: Uint8Array }>,
  opts: { width: number; height: number; init?: (ctx: DecodeContext & { fb: Framebuffer }) => void },
): Promise<DecodeContext & { fb: Framebuffer }> {
  const fresh = () => {
    const c = makeContext(opts.width, opts.height);
    opts.init?.(c);
    return c;
  };
  const whole = await decodeRects(spec, rects, { ...opts, ctx: fresh() });
  const total = rects.reduce((n, r) => n + r.payload.length, 0);
  for (let cut = 1; cut < total; cut++) {
    const split = await decodeRects(spec, rects, { ...opts, splitAt: [cut], ctx: fresh() });
    if (Buffer.compare(Buffer.from(split.fb.data), Buffer.from(whole.fb.data)) !== 0) {
      throw new Error(`framebuffer differs when the payload is split at byte ${cut} of ${total}`);
    }
  }
  const bytewise = await decodeRects(spec, rects, { ...opts, splitAt: Array.from({ length: total }, (_, i) => i), ctx: fresh() });
  expect(Buffer.compare(Buffer.from(bytewise.fb.data), Buffer.from(whole.fb.data)), 'byte-at-a-time feed').toBe(0);
  return whole;
}

/** Build an RGBA expectation image and compare a framebuffer region to it, naming the first differing pixel. */
export function expectPixels(fb: Framebuffer, x: number, y: number, w: number, h: number, expected: (px: number, py: number) => [number, number, number]): void {
  for (let py = 0; py < h; py++) {
    for (let px = 0; px < w; px++) {
      const got = fb.pixel(x + px, y + py);
      const want = expected(px, py);
      if (got[0] !== want[0] || got[1] !== want[1] || got[2] !== want[2] || got[3] !== 255) {
        throw new Error(`pixel (${x + px},${y + py}) is rgba(${got.join(',')}), expected rgb(${want.join(',')})`);
      }
    }
  }
}

/** The framebuffer's RGB plane (what screenshots encode) holds exactly the RGB of its RGBA pixels. */
export function expectPlanesInStep(fb: Framebuffer): void {
  const data = fb.data;
  const rgb = fb.rgbPlane();
  expect(rgb.length).toBe(fb.width * fb.height * 3);
  for (let i = 0, o = 0; i < data.length; i += 4, o += 3) {
    if (rgb[o] !== data[i] || rgb[o + 1] !== data[i + 1] || rgb[o + 2] !== data[i + 2] || data[i + 3] !== 255) {
      const px = i / 4;
      throw new Error(
        `RGB plane differs from RGBA at (${px % fb.width},${Math.floor(px / fb.width)}): rgb(${rgb[o]},${rgb[o + 1]},${rgb[o + 2]}) vs rgba(${data[i]},${data[i + 1]},${data[i + 2]},${data[i + 3]})`,
      );
    }
  }
}
