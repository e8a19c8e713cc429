import { describe, expect, it } from 'vitest';
import {
  writeClientCutText,
  writeClientInit,
  writeFramebufferUpdateRequest,
  writeKeyEvent,
  writePointerEvent,
  writeProtocolVersion,
  writeSecurityType,
  writeSetEncodings,
  writeSetPixelFormat,
} from './client-messages.ts';

const bytes = (b: Uint8Array) => Array.from(b);
const badArgument = expect.objectContaining({ code: 'RFB_ERR_BAD_ARGUMENT' });

describe('client message writers (RFC 6143 §7.5 layouts)', () => {
  it('ProtocolVersion is "RFB 003.00x\\n"', () => {
    expect(Buffer.from(writeProtocolVersion('3.8')).toString('latin1')).toBe('RFB 003.008\n');
    expect(Buffer.from(writeProtocolVersion('3.3')).toString('latin1')).toBe('RFB 003.003\n');
  });

  it('security type and ClientInit are single bytes', () => {
    expect(bytes(writeSecurityType(2))).toEqual([2]);
    expect(bytes(writeClientInit(true))).toEqual([1]);
    expect(bytes(writeClientInit(false))).toEqual([0]);
    expect(() => writeSecurityType(0)).toThrow(badArgument);
  });

  it('SetPixelFormat: type 0, 3 pad, 32 bpp, depth 24, little-endian, true colour, max 255, shifts 0/8/16', () => {
    // prettier-ignore
    expect(bytes(writeSetPixelFormat())).toEqual([
      0,
      0,
      0,
      0, // type, padding
      32,
      24,
      0,
      1, // bits-per-pixel, depth, big-endian, true-colour
      0,
      255,
      0,
      255,
      0,
      255, // red/green/blue max (U16)
      0,
      8,
      16, // red/green/blue shift
      0,
      0,
      0, // padding
    ]);
  });

  it("SetEncodings: type 2, pad, U16 count, S32 encodings (negative pseudo-encodings in two's complement)", () => {
    expect(bytes(writeSetEncodings([16, 0, -223]))).toEqual([2, 0, 0, 3, 0, 0, 0, 16, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x21]);
  });

  it('FramebufferUpdateRequest: type 3, incremental flag, U16 x, y, width, height', () => {
    expect(bytes(writeFramebufferUpdateRequest(true, 1, 2, 1280, 800))).toEqual([3, 1, 0, 1, 0, 2, 5, 0, 3, 32]);
    expect(bytes(writeFramebufferUpdateRequest(false, 0, 0, 1, 1))).toEqual([3, 0, 0, 0, 0, 0, 0, 1, 0, 1]);
    expect(() => writeFramebufferUpdateRequest(true, 0, 0, 70000, 1)).toThrow(badArgument);
  });

  it('KeyEvent: type 4, down flag, 2 pad, U32 keysym', () => {
    expect(bytes(writeKeyEvent(0xffe1, true))).toEqual([4, 1, 0, 0, 0, 0, 0xff, 0xe1]);
    expect(bytes(writeKeyEvent(0x1000263a, false))).toEqual([4, 0, 0, 0, 0x10, 0x00, 0x26, 0x3a]);
    for (const k of [-1, 2 ** 32, 1.5, Number.NaN]) expect(() => writeKeyEvent(k, true)).toThrow(badArgument);
  });

  it('PointerEvent: type 5, button mask, U16 x, U16 y; out-of-range or fractional values are refused', () => {
    expect(bytes(writePointerEvent(300, 65535, 0b101))).toEqual([5, 5, 1, 44, 255, 255]);
    expect(bytes(writePointerEvent(0, 0, 0))).toEqual([5, 0, 0, 0, 0, 0]);
    for (const [x, y, m] of [
      [-1, 0, 0],
      [65536, 0, 0],
      [0, 1.5, 0],
      [0, 0, 256],
      [0, 0, -1],
      [Number.NaN, 0, 0],
    ] as const) {
      expect(() => writePointerEvent(x, y, m), `${x},${y},${m}`).toThrow(badArgument);
    }
  });

  it('ClientCutText: type 6, 3 pad, U32 length, Latin-1 text; other characters are refused', () => {
    expect(bytes(writeClientCutText('hé'))).toEqual([6, 0, 0, 0, 0, 0, 0, 2, 0x68, 0xe9]);
    expect(bytes(writeClientCutText(''))).toEqual([6, 0, 0, 0, 0, 0, 0, 0]);
    expect(() => writeClientCutText('→')).toThrow(badArgument);
  });
});
