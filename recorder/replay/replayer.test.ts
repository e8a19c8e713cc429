import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSetPixelFormat } from '../../harness/rfb/client-messages.ts';
import { ENC } from '../../harness/rfb/encodings/types.ts';
import { tightPng } from '../../harness/rfb/test-helpers/fixtures-tight.ts';
import { cursorRect, desktopSizeRect, framebufferUpdate, lastRect, rawRect, type Rgb } from '../../harness/rfb/test-helpers/server-stream.ts';
import { Replayer, iterateFrames, type Frame } from './replayer.ts';
import { setPixelFormatWith } from '../../harness/rfb/test-helpers/client-stream.ts';
import { writeRecording } from './test-helpers/recording.ts';
import { VNCUA_ENCODINGS, clientHello, pointerChunk, splitChunks, syntheticConnection } from './test-helpers/synthetic.ts';

const T = 1_763_000_000_000;
const W = 64;
const H = 48;
const red: Rgb = [200, 0, 0];
const green: Rgb = [0, 200, 0];
const blue: Rgb = [0, 0, 200];
const white: Rgb = [255, 255, 255];
const black: Rgb = [0, 0, 0];

const rgbAt = (f: Frame, x: number, y: number): number[] => Array.from(f.rgb.subarray((y * f.width + x) * 3, (y * f.width + x) * 3 + 3));

/** U1 (red screen + white 3x3 cursor, hotspot 1,1) at T+10; U2 (green left, blue right) arriving at T+20 (partly) and T+30. */
const U1 = framebufferUpdate([
  rawRect(0, 0, W, H, () => red),
  cursorRect(
    1,
    1,
    3,
    3,
    () => white,
    () => true,
  ),
]);
const U2 = framebufferUpdate([rawRect(0, 0, W / 2, H, () => green), rawRect(W / 2, 0, W / 2, H, () => blue)]);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-replayer-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function open(conns: Parameters<typeof writeRecording>[1]): Promise<Replayer> {
  await writeRecording(dir, conns);
  return Replayer.open(dir);
}

describe('Replayer', () => {
  it('shows the state after the last update whose bytes ALL arrived by t (an update in flight is not shown)', async () => {
    const r = await open([syntheticConnection({ t0: T, width: W, height: H, server: [{ t: T + 10, bytes: U1 }, ...splitChunks(U2, [100 + 16 * 4 * 10], [T + 20, T + 30])] })]);
    expect(await r.frameAt(T + 5)).toBeNull(); // handshake only
    const f10 = (await r.frameAt(T + 10))!;
    expect([f10.width, f10.height]).toEqual([W, H]);
    expect(rgbAt(f10, 5, 5)).toEqual(red);
    const f25 = (await r.frameAt(T + 25))!; // U2 half-decoded: rows of green already in the framebuffer
    expect(rgbAt(f25, 5, 2)).toEqual(red);
    expect(rgbAt(f25, 40, 40)).toEqual(red);
    expect(f25.key).toBe(f10.key);
    const f30 = (await r.frameAt(T + 30))!;
    expect(rgbAt(f30, 5, 2)).toEqual(green);
    expect(rgbAt(f30, 40, 40)).toEqual(blue);
    expect(f30.updateAt).toBe(T + 30);
    expect(r.warnings).toEqual([]);
  });

  it('splits a chunk holding the end of one update and the start of the next', async () => {
    const both = Buffer.concat([U1, U2]);
    const r = await open([syntheticConnection({ t0: T, width: W, height: H, server: splitChunks(both, [U1.length + 50], [T + 10, T + 20]) })]);
    expect(rgbAt((await r.frameAt(T + 15))!, 5, 2)).toEqual(red);
    expect(rgbAt((await r.frameAt(T + 20))!, 5, 2)).toEqual(green);
  });

  it('draws the cursor at the pointer position the client had sent by t, with the shape of the shown state', async () => {
    const U3 = framebufferUpdate([
      cursorRect(
        0,
        0,
        2,
        2,
        () => black,
        () => true,
      ),
      rawRect(0, 0, W, H, () => blue),
    ]);
    const r = await open([
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        server: [{ t: T + 10, bytes: U1 }, ...splitChunks(U3, [100], [T + 40, T + 50])],
        client: [pointerChunk(T + 15, 10, 10), pointerChunk(T + 35, 20, 20, 1)],
      }),
    ]);
    const plain = (await r.frameAt(T + 12, { cursor: true }))!;
    expect(rgbAt(plain, 9, 9)).toEqual(red); // no pointer event yet: no cursor, like the live client
    const c = (await r.frameAt(T + 20, { cursor: true }))!;
    expect([rgbAt(c, 9, 9), rgbAt(c, 11, 11), rgbAt(c, 12, 12)]).toEqual([white, white, red]);
    // At T+45 the black cursor rectangle of U3 has been decoded, but U3 is not complete: the white shape is still the one shown.
    const mid = (await r.frameAt(T + 45, { cursor: true }))!;
    expect([rgbAt(mid, 19, 19), rgbAt(mid, 21, 21), rgbAt(mid, 10, 10)]).toEqual([white, white, red]);
    const after = (await r.frameAt(T + 50, { cursor: true }))!;
    expect([rgbAt(after, 20, 20), rgbAt(after, 21, 21), rgbAt(after, 19, 19)]).toEqual([black, black, blue]);
    const noCursor = (await r.frameAt(T + 50))!;
    expect(rgbAt(noCursor, 20, 20)).toEqual(blue);
  });

  it('keeps the old size while a resize is in flight', async () => {
    const U4 = framebufferUpdate([desktopSizeRect(32, 24), rawRect(0, 0, 32, 24, () => green)]);
    const r = await open([syntheticConnection({ t0: T, width: W, height: H, server: [{ t: T + 10, bytes: U1 }, ...splitChunks(U4, [40], [T + 20, T + 30])] })]);
    const mid = (await r.frameAt(T + 25))!;
    expect([mid.width, mid.height, ...rgbAt(mid, 50, 40)]).toEqual([W, H, ...red]);
    const end = (await r.frameAt(T + 30))!;
    expect([end.width, end.height, ...rgbAt(end, 5, 5)]).toEqual([32, 24, ...green]);
  });

  it('applies async image rectangles (TightPNG) before showing the update', async () => {
    const png = await sharp(Buffer.alloc(8 * 8 * 3, 77), { raw: { width: 8, height: 8, channels: 3 } })
      .png()
      .toBuffer();
    const U5 = framebufferUpdate([{ header: { x: 4, y: 4, width: 8, height: 8, encoding: ENC.TIGHT_PNG }, payload: tightPng(png) }]);
    const r = await open([
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        encodings: [ENC.TIGHT_PNG, ...VNCUA_ENCODINGS],
        server: [
          { t: T + 10, bytes: U1 },
          { t: T + 20, bytes: U5 },
        ],
      }),
    ]);
    expect(rgbAt((await r.frameAt(T + 19))!, 6, 6)).toEqual(red);
    expect(rgbAt((await r.frameAt(T + 20))!, 6, 6)).toEqual([77, 77, 77]);
  });

  it('tells when the screen next changes', async () => {
    const r = await open([syntheticConnection({ t0: T, width: W, height: H, server: [{ t: T + 10, bytes: U1 }, ...splitChunks(U2, [30], [T + 20, T + 30])] })]);
    expect(await r.nextUpdateAfter(T)).toBe(T + 10);
    expect(await r.nextUpdateAfter(T + 10)).toBe(T + 30);
    // Looking ahead does not change what an earlier instant shows.
    expect(rgbAt((await r.frameAt(T + 29))!, 5, 5)).toEqual(red);
    expect(await r.nextUpdateAfter(T + 30)).toBeNull();
  });

  it('shows a re-connection from its first complete update on', async () => {
    const second = framebufferUpdate([rawRect(0, 0, W, H, () => blue)]);
    const r = await open([
      syntheticConnection({ t0: T, width: W, height: H, server: [{ t: T + 10, bytes: U1 }] }),
      syntheticConnection({ t0: T + 100, width: W, height: H, server: [{ t: T + 120, bytes: second }] }),
    ]);
    expect(await r.nextUpdateAfter(T + 10)).toBe(T + 120);
    expect(rgbAt((await r.frameAt(T + 110))!, 5, 5)).toEqual(red);
    const f = (await r.frameAt(T + 120))!;
    expect([f.connection, ...rgbAt(f, 5, 5)]).toEqual([1, ...blue]);
  });

  it('replays corrupt data up to the damage, with RECORDING_ERR_DECODE', async () => {
    const r = await open([
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        server: [
          { t: T + 10, bytes: U1 },
          { t: T + 20, bytes: Uint8Array.of(0, 0, 0, 1, 0, 0, 0, 0, 0, 64, 0, 64, 0, 0, 0, 0) },
        ],
      }),
    ]);
    const f = (await r.frameAt(T + 50))!;
    expect(rgbAt(f, 5, 5)).toEqual(red);
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_DECODE']);
  });

  it('refuses a pixel format it cannot decode, with RECORDING_ERR_PIXEL_FORMAT', async () => {
    const conn = syntheticConnection({ t0: T, width: W, height: H, server: [{ t: T + 10, bytes: U1 }] });
    const hello = Buffer.from(clientHello());
    const at = hello.indexOf(Buffer.from(writeSetPixelFormat()));
    Buffer.from(setPixelFormatWith({ redShift: 16, blueShift: 0 })).copy(hello, at);
    conn.client[0] = { t: T, bytes: hello };
    const r = await open([conn]);
    expect(await r.frameAt(T + 50)).toBeNull();
    expect(r.warnings.map((w) => w.code)).toEqual(['RECORDING_ERR_PIXEL_FORMAT']);
  });

  it('answers an earlier instant after a later one (by replaying again)', async () => {
    const r = await open([
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        server: [
          { t: T + 10, bytes: U1 },
          { t: T + 30, bytes: U2 },
        ],
      }),
    ]);
    expect(rgbAt((await r.frameAt(T + 40))!, 5, 5)).toEqual(green);
    expect(rgbAt((await r.frameAt(T + 15))!, 5, 5)).toEqual(red);
  });

  it('iterates frames at a fixed rate, sharing unchanged buffers', async () => {
    const U6 = framebufferUpdate([rawRect(0, 0, 4, 4, () => green), lastRect()], 0xffff);
    await writeRecording(dir, [
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        server: [
          { t: T + 10, bytes: U1 },
          { t: T + 35, bytes: U6 },
          { t: T + 61, bytes: U2 },
        ],
      }),
    ]);
    const frames = [];
    for await (const f of iterateFrames(dir, { fps: 100 })) frames.push(f);
    expect(frames.map((f) => f.t - T)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(frames.map((f) => rgbAt(f as Frame, 1, 1))).toEqual([red, red, red, green, green, green]);
    expect(frames[1]!.rgb).toBe(frames[0]!.rgb);
    expect(frames[3]!.rgb).not.toBe(frames[2]!.rgb);
  });

  it('iterates from the first frame with pixels to the end of the data, past the last server byte (a still screen sends nothing)', async () => {
    // The first update is a cursor only (no pixels yet); the screen is still after T+30, and the client's last input is at T+95.
    const cursorOnly = framebufferUpdate([
      cursorRect(
        1,
        1,
        3,
        3,
        () => white,
        () => true,
      ),
    ]);
    await writeRecording(dir, [
      syntheticConnection({
        t0: T,
        width: W,
        height: H,
        server: [
          { t: T + 5, bytes: cursorOnly },
          { t: T + 30, bytes: U2 },
        ],
        client: [pointerChunk(T + 95, 3, 3)],
      }),
    ]);
    const frames = [];
    for await (const f of iterateFrames(dir, { fps: 50 })) frames.push(f);
    expect(frames.map((f) => Math.round(f.t - T))).toEqual([30, 50, 70, 90]);
    expect(frames.every((f) => rgbAt(f as Frame, 1, 1).join() === green.join())).toBe(true);
  });
});
