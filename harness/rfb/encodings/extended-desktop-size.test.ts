import { describe, expect, it } from 'vitest';
import { type ExtendedDesktopSizeDecoder, extendedDesktopSizeEncoding, type DesktopScreen } from './extended-desktop-size.ts';
import { ByteQueue } from '../bytes.ts';
import { decodeRects, expectSameAtEverySplit, makeContext } from '../test-helpers/decode.ts';
import { extendedDesktopSizePayload } from '../test-helpers/fixtures-pseudo.ts';
import { ENC, type RectHeader } from './types.ts';

/** Header of an ExtendedDesktopSize rectangle: x = reason, y = status. */
const eds = (reason: number, status: number, width: number, height: number): RectHeader => ({ x: reason, y: status, width, height, encoding: ENC.EXTENDED_DESKTOP_SIZE });
const TWO_SCREENS: DesktopScreen[] = [
  { id: 0x01020304, x: 0, y: 0, width: 640, height: 400, flags: 0 },
  { id: 0xfffffffe, x: 640, y: 0, width: 320, height: 400, flags: 0x80000001 },
];

describe('ExtendedDesktopSize', () => {
  it('resizes for a server-side change, whatever the byte split', async () => {
    const ctx = await expectSameAtEverySplit(extendedDesktopSizeEncoding, [{ rect: eds(0, 0, 960, 400), payload: extendedDesktopSizePayload(TWO_SCREENS) }], {
      width: 100,
      height: 50,
    });
    expect([ctx.fb.width, ctx.fb.height, ctx.width, ctx.height]).toEqual([960, 400, 960, 400]);
  });

  it('parses every screen, consuming the payload only once it is complete', () => {
    const ctx = makeContext(10, 10);
    const decoder = extendedDesktopSizeEncoding.create(eds(2, 0, 960, 400), ctx) as ExtendedDesktopSizeDecoder;
    const bytes = extendedDesktopSizePayload(TWO_SCREENS);
    const q = new ByteQueue();
    for (let i = 0; i < bytes.length - 1; i++) {
      q.push(bytes.subarray(i, i + 1));
      expect(decoder.decode(q)).toBe(false);
    }
    expect(q.available).toBe(bytes.length - 1);
    q.push(bytes.subarray(bytes.length - 1));
    expect(decoder.decode(q)).toBe(true);
    expect(q.available).toBe(0);
    expect(decoder.layout).toEqual({ reason: 2, status: 0, width: 960, height: 400, screens: TWO_SCREENS, applied: true });
    expect([ctx.width, ctx.height]).toEqual([960, 400]);
  });

  it('does not resize (and does not fail) when our own request was refused', async () => {
    const ctx = makeContext(100, 50);
    const decoder = extendedDesktopSizeEncoding.create(eds(1, 3, 100, 50), ctx) as ExtendedDesktopSizeDecoder;
    const q = new ByteQueue();
    q.push(extendedDesktopSizePayload([{ id: 7, x: 0, y: 0, width: 100, height: 50, flags: 0 }]));
    expect(decoder.decode(q)).toBe(true);
    expect(decoder.layout).toMatchObject({ reason: 1, status: 3, applied: false });
    expect([ctx.fb.width, ctx.fb.height, ctx.fb.version]).toEqual([100, 50, 0]);
  });

  it('resizes when our own request succeeded, and ignores the status for other reasons', async () => {
    const ours = await decodeRects(extendedDesktopSizeEncoding, [{ rect: eds(1, 0, 30, 20), payload: extendedDesktopSizePayload([TWO_SCREENS[0]!]) }], { width: 10, height: 10 });
    expect([ours.fb.width, ours.fb.height]).toEqual([30, 20]);
    const server = await decodeRects(extendedDesktopSizeEncoding, [{ rect: eds(0, 4, 40, 25), payload: extendedDesktopSizePayload([]) }], { width: 10, height: 10 });
    expect([server.fb.width, server.fb.height]).toEqual([40, 25]);
  });

  it('rejects an impossible size with RFB_ERR_PROTOCOL', async () => {
    await expect(decodeRects(extendedDesktopSizeEncoding, [{ rect: eds(0, 0, 0, 400), payload: extendedDesktopSizePayload([]) }], { width: 10, height: 10 })).rejects.toMatchObject(
      {
        code: 'RFB_ERR_PROTOCOL',
      },
    );
  });
});
