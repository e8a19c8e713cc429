import { describe, expect, it } from 'vitest';
import { ByteQueue } from '../../rfb/bytes.ts';
import { CLIENT_PIXEL_FORMAT } from '../../rfb/client-messages.ts';
import { hextileEncoding } from '../../rfb/encodings/hextile.ts';
import { ENC } from '../../rfb/encodings/types.ts';
import { makeContext } from '../../rfb/test-helpers/decode.ts';
import { Framebuffer } from '../../rfb/framebuffer.ts';
import { packRgb } from '../../rfb/sink.ts';
import { planHextile, writeHextile } from './hextile.ts';
import { pixelWriter } from './pixel-format.ts';
import { LiveRfbSession } from './session.ts';
import { MemoryPipe, expectSamePixels, patternFramebuffer } from './test-helpers.ts';

/** Encode `rect` of `fb`, decode it with vncua's own Hextile decoder into a fresh framebuffer; returns it and the byte count. */
function roundTrip(fb: Framebuffer, rect: { x: number; y: number; w: number; h: number }): { out: Framebuffer; size: number; kinds: number[] } {
  const plan = planHextile(fb, rect);
  const bytes = new Uint8Array(plan.size);
  writeHextile(plan, fb, pixelWriter(CLIENT_PIXEL_FORMAT), bytes, 0);
  const ctx = makeContext(fb.width, fb.height);
  // Start from the source picture outside the rectangle, so a wrong tile shows up as a difference.
  ctx.fb.blit(0, 0, fb.width, fb.height, fb.data, 0, fb.width * 4, 4);
  ctx.fb.fill(rect.x, rect.y, rect.w, rect.h, packRgb(1, 2, 3));
  const q = new ByteQueue();
  q.push(bytes);
  const done = hextileEncoding.create({ x: rect.x, y: rect.y, width: rect.w, height: rect.h, encoding: ENC.HEXTILE }, ctx).decode(q);
  expect(done, 'the decoder finished').toBe(true);
  expect(q.available, 'no bytes left over').toBe(0);
  return { out: ctx.fb, size: plan.size, kinds: [...plan.kinds] };
}

describe('Hextile encoder', () => {
  it('a flat rectangle: one colour, then one byte a tile', () => {
    const fb = new Framebuffer(50, 40);
    fb.fill(0, 0, 50, 40, packRgb(200, 100, 50));
    const { out, size, kinds } = roundTrip(fb, { x: 3, y: 5, w: 40, h: 33 });
    expectSamePixels(out, fb);
    expect(kinds).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(size).toBe(1 + 4 + 8);
  });

  it('mixed tiles (raw, new colour, same colour, edges narrower than 16) decode exactly', () => {
    const fb = patternFramebuffer(70, 45);
    fb.fill(16, 0, 32, 16, packRgb(9, 9, 9)); // tiles 1 and 2 of the first row: one colour
    fb.fill(0, 16, 70, 16, packRgb(7, 7, 7)); // the second row
    const { out, kinds } = roundTrip(fb, { x: 0, y: 0, w: 70, h: 45 });
    expectSamePixels(out, fb);
    // Row 1: raw, colour, same, raw, raw(6 wide); row 2: colour (after raw), same...; row 3: raw.
    expect(kinds.slice(0, 10)).toEqual([1, 2, 0, 1, 1, 2, 0, 0, 0, 0]);
    expect(kinds.slice(10)).toEqual([1, 1, 1, 1, 1]);
  });

  it("writes colours and raw tiles in the watcher's format (BGR here)", () => {
    const fb = patternFramebuffer(32, 16);
    fb.fill(0, 0, 16, 16, packRgb(250, 10, 20));
    const plan = planHextile(fb, { x: 0, y: 0, w: 32, h: 16 });
    expect([...plan.kinds]).toEqual([2, 1]);
    const bytes = new Uint8Array(plan.size);
    writeHextile(plan, fb, pixelWriter({ ...CLIENT_PIXEL_FORMAT, redShift: 16, blueShift: 0 }), bytes, 0);
    expect([...bytes.subarray(0, 5)]).toEqual([2, 20, 10, 250, 0]);
    expect(bytes[5]).toBe(1);
    const [r, g, b] = fb.pixel(16, 0);
    expect([...bytes.subarray(6, 10)]).toEqual([b, g, r, 0]);
    expect(plan.size).toBe(5 + 1 + 16 * 16 * 4);
  });

  it('is what a session sends a watcher that lists Hextile, decoded by the real client core', () => {
    const fb = patternFramebuffer(40, 24);
    fb.fill(0, 0, 40, 8, packRgb(250, 10, 20));
    const session = new LiveRfbSession({ name: 'x', viewOnly: false });
    session.attach(fb);
    const pipe = new MemoryPipe(session, { encodings: [ENC.HEXTILE] }).start();
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').map((e) => (e as { rect: { encoding: number } }).rect.encoding)).toContain(ENC.HEXTILE);
    expectSamePixels(pipe.fb, fb);
  });
});
