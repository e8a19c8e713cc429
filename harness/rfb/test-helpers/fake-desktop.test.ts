import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { connectVnc, type VncClient } from '../client.ts';
import { VncuaError } from '../../errors.ts';
import { startFakeDesktop, type FakeDesktop, type Rgb } from './fake-desktop.ts';
import { pixelBytes, SERVER_PIXEL_FORMAT } from './server-stream.ts';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function desktop(options: Parameters<typeof startFakeDesktop>[0] = {}): Promise<FakeDesktop> {
  const d = await startFakeDesktop(options);
  open.push(d);
  return d;
}

async function client(url: string, password?: string): Promise<VncClient> {
  const c = await connectVnc(url, { timeoutMs: 5000, password });
  open.push(c);
  return c;
}

/** The screenshot's pixels, RGB. */
async function shotPixels(c: VncClient): Promise<{ at(x: number, y: number): Rgb }> {
  const shot = await c.screenshot();
  const { data, info } = await sharp(shot.png).raw().toBuffer({ resolveWithObject: true });
  return { at: (x, y) => Array.from(data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)) as Rgb };
}

describe('fake desktop', () => {
  for (const transport of ['tcp', 'ws'] as const) {
    it(`serves what was painted over ${transport}: the screenshot shows it`, async () => {
      const d = await desktop({ width: 64, height: 48, background: [10, 20, 30] });
      d.paint(8, 4, 16, 8, [200, 100, 50]);
      const c = await client(transport === 'tcp' ? d.tcpUrl : d.wsUrl);
      expect(c.resolution()).toEqual({ width: 64, height: 48 });
      expect(c.name).toBe('fake desktop');
      const px = await shotPixels(c);
      expect(px.at(0, 0)).toEqual([10, 20, 30]);
      expect(px.at(8, 4)).toEqual([200, 100, 50]);
      expect(px.at(23, 11)).toEqual([200, 100, 50]);
      expect(px.at(24, 11)).toEqual([10, 20, 30]);
      expect(px.at(63, 47)).toEqual([10, 20, 30]);
      expect(d.connections).toBe(1);
      expect(d.encodings.length).toBeGreaterThan(0);
    });
  }

  it('sends a paint to a connected client as an incremental update, and answers round trips', async () => {
    const d = await desktop({ width: 40, height: 30 });
    const c = await client(d.vncUrl);
    const before = c.framebuffer.version;
    d.paint(5, 5, 10, 10, [0, 255, 0]);
    await c.waitForUpdate({ after: before, timeoutMs: 2000 });
    expect(c.framebuffer.pixel(5, 5).slice(0, 3)).toEqual([0, 255, 0]);
    expect(c.framebuffer.pixel(4, 5).slice(0, 3)).toEqual([0, 0, 0]);
    // Nothing changed since: an incremental request waits, and no update arrives.
    expect(await c.waitForQuiet({ quietMs: 150, timeoutMs: 1000 })).toBe(true);
    await c.sync({ timeoutMs: 2000 });
    d.fill([1, 2, 3]);
    await c.waitForUpdate({ timeoutMs: 2000 });
    expect((await shotPixels(c)).at(39, 29)).toEqual([1, 2, 3]);
  });

  it('records key and pointer events in order, and a repaint from onInput is seen after a round trip', async () => {
    const d = await desktop({
      width: 32,
      height: 32,
      onInput: (e, self) => {
        if (e.kind === 'pointer' && e.mask === 1) self.paint(e.x, e.y, 1, 1, [255, 255, 255]);
      },
    });
    const c = await client(d.vncUrl);
    c.pointerEvent(3, 4, 0);
    c.pointerEvent(3, 4, 1);
    c.keyEvent(0x61, true);
    c.keyEvent(0x61, false);
    c.pointerEvent(3, 4, 0);
    await c.sync({ timeoutMs: 2000 });
    expect(d.events).toEqual([
      { kind: 'pointer', x: 3, y: 4, mask: 0 },
      { kind: 'pointer', x: 3, y: 4, mask: 1 },
      { kind: 'key', keysym: 0x61, down: true },
      { kind: 'key', keysym: 0x61, down: false },
      { kind: 'pointer', x: 3, y: 4, mask: 0 },
    ]);
    expect(d.pixel(3, 4)).toEqual([255, 255, 255]);
    // The paint went out before the round trip's answer.
    expect(c.framebuffer.pixel(3, 4).slice(0, 3)).toEqual([255, 255, 255]);
  });

  it('serves several clients, each with its own updates', async () => {
    const d = await desktop({ width: 16, height: 16 });
    const a = await client(d.tcpUrl);
    const b = await client(d.wsUrl);
    d.paint(0, 0, 16, 16, [9, 9, 9]);
    await Promise.all([a.waitForUpdate({ after: 0, timeoutMs: 2000 }), b.waitForUpdate({ after: 0, timeoutMs: 2000 })]);
    await Promise.all([a.sync(), b.sync()]);
    expect(a.framebuffer.pixel(15, 15).slice(0, 3)).toEqual([9, 9, 9]);
    expect(b.framebuffer.pixel(15, 15).slice(0, 3)).toEqual([9, 9, 9]);
    expect(d.connections).toBe(2);
  });

  it('asks for VNC Authentication when given a password, and refuses a wrong one', async () => {
    const d = await desktop({ width: 8, height: 8, password: 's3cret', background: [7, 7, 7] });
    const c = await client(d.vncUrl, 's3cret');
    expect(c.framebuffer.pixel(0, 0).slice(0, 3)).toEqual([7, 7, 7]);
    const err = await connectVnc(d.vncUrl, { password: 'wrong', timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VncuaError);
    expect((err as VncuaError).code).toBe('RFB_ERR_AUTH_FAILED');
  });

  it('pixelBytes writes a pixel in the server format (B, G, R, X) and 16-bit big-endian formats', () => {
    expect(pixelBytes(SERVER_PIXEL_FORMAT, [1, 2, 3])).toEqual([3, 2, 1, 0]);
    const rgb565be = { ...SERVER_PIXEL_FORMAT, bitsPerPixel: 16, depth: 16, bigEndian: true, redMax: 31, greenMax: 63, blueMax: 31, redShift: 11, greenShift: 5, blueShift: 0 };
    expect(pixelBytes(rgb565be, [255, 0, 255])).toEqual([0xf8, 0x1f]);
  });
});
