/**
 * Fuzz the session with ≥ 10,000 mutated server streams (seeded, reproducible):
 * the only failure allowed is a VncuaError with a known code, every stream must be
 * processed to its end, and absurd sizes must be refused, not allocated.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, VncuaError } from '../errors.ts';
import { ENC } from './encodings/types.ts';
import { RfbSession, type SessionOptions } from './session.ts';
import { hextileRawTile, hextileRect, hextileTile } from './test-helpers/fixtures-hextile.ts';
import { ZrleDeflater, zrleEncodeImage, zrleRect } from './test-helpers/fixtures-zrle.ts';
import {
  bell,
  copyRect,
  cursorRect,
  desktopSizeRect,
  extendedDesktopSizeRect,
  framebufferUpdate,
  handshake,
  lastRect,
  rawRect,
  securityRefusal,
  securityResult,
  securityTypes,
  serverCutText,
  serverVersion,
  setColourMapEntries,
  stream,
  type Rgb,
} from './test-helpers/server-stream.ts';
import { mulberry32 } from '../prng.ts';

const W = 16;
const H = 12;
const colour = (px: number, py: number): Rgb => [px * 15, py * 20, (px ^ py) * 16];

/** Valid server streams covering each version, both security types and every message kind. */
function baseStreams(): Array<{ name: string; opts: SessionOptions; data: Uint8Array }> {
  const enc: SessionOptions = { encodings: [ENC.COPYRECT, ENC.HEXTILE, ENC.ZRLE, ENC.RAW], password: 'pw' };
  const updates = stream(
    framebufferUpdate([rawRect(0, 0, W, H, colour), copyRect(8, 6, 8, 6, 0, 0)]),
    bell(),
    framebufferUpdate([cursorRect(2, 3, 5, 4, colour, (px, py) => (px + py) % 2 === 0), rawRect(1, 1, 3, 2, colour), lastRect()], 0xffff),
    serverCutText('clipboard ✓ text'.replace('✓', 'x')),
    setColourMapEntries(3, [
      [1, 2, 3],
      [250, 251, 252],
    ]),
    framebufferUpdate([desktopSizeRect(20, 14), rawRect(16, 10, 4, 4, colour)]),
    framebufferUpdate([
      extendedDesktopSizeRect(W, H),
      {
        header: { x: 0, y: 0, width: 16, height: 12, encoding: ENC.HEXTILE },
        payload: hextileRect([hextileTile({ bg: [9, 8, 7], fg: [1, 2, 3], subrects: [{ x: 1, y: 2, w: 3, h: 4 }] })]),
      },
    ]),
    framebufferUpdate([{ header: { x: 0, y: 0, width: 4, height: 4, encoding: ENC.HEXTILE }, payload: hextileRect([hextileRawTile(4, 4, colour)]) }]),
  );
  const img = new Uint8Array(W * H * 3).map((_, i) => (i * 37) & 0xff);
  const zrle = framebufferUpdate([{ header: { x: 0, y: 0, width: W, height: H, encoding: ENC.ZRLE }, payload: zrleRect(zrleEncodeImage(img, W, H), new ZrleDeflater()) }]);
  const out: Array<{ name: string; opts: SessionOptions; data: Uint8Array }> = [];
  for (const version of ['3.3', '3.7', '3.8'] as const) {
    for (const security of ['none', 'vncAuth'] as const) {
      out.push({ name: `${version}/${security}`, opts: enc, data: stream(handshake({ version, security, width: W, height: H }), updates) });
    }
  }
  out.push({ name: 'zrle', opts: enc, data: stream(handshake({ version: '3.8', width: W, height: H }), zrle, bell()) });
  out.push({ name: 'refusal', opts: enc, data: stream(serverVersion('3.8'), securityRefusal('no')) });
  out.push({ name: 'auth failure', opts: enc, data: stream(serverVersion('3.8'), securityTypes([2]), new Uint8Array(16), securityResult({ failed: 'bad' })) });
  return out;
}

/** One random mutation of `data`. */
function mutate(data: Uint8Array, rand: () => number): Uint8Array {
  const int = (n: number) => Math.floor(rand() * n);
  const bytes = Array.from(data);
  const rounds = 1 + int(3);
  for (let r = 0; r < rounds; r++) {
    const at = int(bytes.length + 1);
    switch (int(7)) {
      case 0: // flip a bit
        if (bytes.length) bytes[at % bytes.length]! ^= 1 << int(8);
        break;
      case 1: // insert random bytes
        bytes.splice(at, 0, ...Array.from({ length: 1 + int(4) }, () => int(256)));
        break;
      case 2: // delete bytes
        bytes.splice(at, 1 + int(4));
        break;
      case 3: // truncate
        bytes.length = at;
        break;
      case 4: {
        // boost a length / size field: 16 or 32 big-endian bits set to a big value
        const big = [0xff, 0x7f, 0x80, int(256)];
        const n = rand() < 0.5 ? 2 : 4;
        for (let i = 0; i < n && at + i < bytes.length; i++) bytes[at + i] = big[int(big.length)]!;
        break;
      }
      case 5: // random byte
        if (bytes.length) bytes[at % bytes.length] = int(256);
        break;
      case 6: {
        // duplicate a slice
        const len = 1 + int(16);
        bytes.splice(at, 0, ...bytes.slice(at, at + len));
        break;
      }
    }
  }
  return Uint8Array.from(bytes);
}

describe('session fuzz', () => {
  it('survives 10,000+ mutated streams with only typed errors', () => {
    const rand = mulberry32(0x5eed1234);
    const bases = baseStreams();
    const seen: Record<string, number> = {};
    let streams = 0;
    let clean = 0;
    const started = Date.now();
    for (let i = 0; i < 10_500; i++) {
      const base = bases[i % bases.length]!;
      const data = i < bases.length ? base.data : mutate(base.data, rand);
      const session = new RfbSession(base.opts);
      let offset = 0;
      try {
        while (offset < data.length) {
          const n = 1 + Math.floor(rand() * 64);
          session.receive(data.slice(offset, offset + n));
          offset += n;
        }
        clean++;
      } catch (e) {
        if (!(e instanceof VncuaError)) {
          throw new Error(`stream ${i} (${base.name}) threw a non-VncuaError: ${(e as Error)?.stack ?? String(e)}\nbytes: ${Buffer.from(data).toString('hex')}`);
        }
        expect(Object.keys(ERROR_CODES)).toContain(e.code);
        seen[e.code] = (seen[e.code] ?? 0) + 1;
        expect(session.state).toBe('failed');
      }
      streams++;
      // A stream that announced a huge framebuffer must not have one.
      const fb = session.framebuffer;
      if (fb) expect(fb.width * fb.height).toBeLessThanOrEqual(64 * 1024 * 1024);
    }
    console.log(`fuzz: ${streams} streams in ${Date.now() - started} ms; ${clean} processed without error; errors by code: ${JSON.stringify(seen)}`);
    expect(streams).toBeGreaterThanOrEqual(10_000);
    expect(clean).toBeGreaterThan(bases.length); // the unmutated streams and some harmless mutations pass
    expect(Object.keys(seen).length).toBeGreaterThanOrEqual(4);
  });
});
