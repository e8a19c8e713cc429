/**
 * Writers for every message the client sends (RFC 6143 §7.1–§7.5). Pure functions:
 * arguments in, bytes out. Out-of-range arguments throw RFB_ERR_BAD_ARGUMENT.
 */
import { VncuaError } from '../errors.ts';
import { ByteWriter } from './bytes.ts';

/** An RFB protocol version this client speaks. */
export type RfbVersion = '3.3' | '3.7' | '3.8';

/** The pixel format the client always asks for (RFC 6143 §7.4 PIXEL_FORMAT). */
export interface PixelFormat {
  bitsPerPixel: number;
  depth: number;
  bigEndian: boolean;
  trueColour: boolean;
  redMax: number;
  greenMax: number;
  blueMax: number;
  redShift: number;
  greenShift: number;
  blueShift: number;
}

/** 32 bpp, depth 24, true colour, little-endian, R at bits 0-7, G 8-15, B 16-23: a raw pixel is the bytes R, G, B, X. */
export const CLIENT_PIXEL_FORMAT: Readonly<PixelFormat> = {
  bitsPerPixel: 32,
  depth: 24,
  bigEndian: false,
  trueColour: true,
  redMax: 255,
  greenMax: 255,
  blueMax: 255,
  redShift: 0,
  greenShift: 8,
  blueShift: 16,
};

function check(ok: boolean, what: string, value: unknown, allowed: string): void {
  if (!ok) throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `${what} must be ${allowed}, got ${String(value)}`, { details: { argument: what, value, allowed } });
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * ProtocolVersion (§7.1.1), 12 bytes:
 *   "RFB 003.00x\n"
 */
export function writeProtocolVersion(version: RfbVersion): Uint8Array {
  return Buffer.from(`RFB 003.00${version.slice(2)}\n`, 'latin1');
}

/**
 * Security type selection (§7.1.2, 3.7 onwards):
 *   +---------------+
 *   | U8 sec-type   |
 *   +---------------+
 */
export function writeSecurityType(type: number): Uint8Array {
  check(isInt(type, 1, 255), 'security type', type, 'an integer 1..255');
  return Uint8Array.of(type);
}

/**
 * ClientInit (§7.3.1):
 *   +---------------+
 *   | U8 shared     |  1 = leave other clients connected
 *   +---------------+
 */
export function writeClientInit(shared: boolean): Uint8Array {
  return Uint8Array.of(shared ? 1 : 0);
}

/**
 * PIXEL_FORMAT (§7.4), 16 bytes:
 *   U8 bits-per-pixel, U8 depth, U8 big-endian-flag, U8 true-colour-flag,
 *   U16 red-max, U16 green-max, U16 blue-max,
 *   U8 red-shift, U8 green-shift, U8 blue-shift, 3 bytes padding
 * Appended to `w` (SetPixelFormat's body here; ServerInit's in the live endpoint's server).
 */
export function writePixelFormatBody(w: ByteWriter, pf: PixelFormat): void {
  w.u8(pf.bitsPerPixel)
    .u8(pf.depth)
    .u8(pf.bigEndian ? 1 : 0)
    .u8(pf.trueColour ? 1 : 0);
  w.u16(pf.redMax).u16(pf.greenMax).u16(pf.blueMax);
  w.u8(pf.redShift).u8(pf.greenShift).u8(pf.blueShift).pad(3);
}

/**
 * SetPixelFormat (§7.5.1), 20 bytes:
 *   +-------+---------+------------------------+
 *   | U8 0  | 3 pad   | PIXEL_FORMAT (16)      |
 *   +-------+---------+------------------------+
 */
export function writeSetPixelFormat(pf: PixelFormat = CLIENT_PIXEL_FORMAT): Uint8Array {
  const w = new ByteWriter(20).u8(0).pad(3);
  writePixelFormatBody(w, pf);
  return w.toBytes();
}

/**
 * SetEncodings (§7.5.2):
 *   +-------+-------+-------------------+---------------------------+
 *   | U8 2  | 1 pad | U16 n-encodings   | S32 encoding-type [n]     |
 *   +-------+-------+-------------------+---------------------------+
 */
export function writeSetEncodings(encodings: readonly number[]): Uint8Array {
  check(encodings.length <= 0xffff, 'number of encodings', encodings.length, 'at most 65535');
  const w = new ByteWriter(4 + 4 * encodings.length).u8(2).pad(1).u16(encodings.length);
  for (const e of encodings) {
    check(isInt(e, -0x80000000, 0x7fffffff), 'encoding number', e, 'a signed 32-bit integer');
    w.s32(e);
  }
  return w.toBytes();
}

/**
 * FramebufferUpdateRequest (§7.5.3), 10 bytes:
 *   +-------+----------------+--------+--------+------------+-------------+
 *   | U8 3  | U8 incremental | U16 x  | U16 y  | U16 width  | U16 height  |
 *   +-------+----------------+--------+--------+------------+-------------+
 */
export function writeFramebufferUpdateRequest(incremental: boolean, x: number, y: number, width: number, height: number): Uint8Array {
  for (const [name, v] of [
    ['x', x],
    ['y', y],
    ['width', width],
    ['height', height],
  ] as const)
    check(isInt(v, 0, 0xffff), name, v, 'an integer 0..65535');
  return new ByteWriter(10)
    .u8(3)
    .u8(incremental ? 1 : 0)
    .u16(x)
    .u16(y)
    .u16(width)
    .u16(height)
    .toBytes();
}

/**
 * KeyEvent (§7.5.4), 8 bytes:
 *   +-------+---------------+-------+-------------+
 *   | U8 4  | U8 down-flag  | 2 pad | U32 keysym  |
 *   +-------+---------------+-------+-------------+
 */
export function writeKeyEvent(keysym: number, down: boolean): Uint8Array {
  check(isInt(keysym, 0, 0xffffffff), 'keysym', keysym, 'an integer 0..0xFFFFFFFF (an X11 keysym)');
  check(typeof down === 'boolean', 'down', down, 'a boolean');
  return new ByteWriter(8)
    .u8(4)
    .u8(down ? 1 : 0)
    .pad(2)
    .u32(keysym)
    .toBytes();
}

/**
 * PointerEvent (§7.5.5), 6 bytes:
 *   +-------+------------------+--------+--------+
 *   | U8 5  | U8 button-mask   | U16 x  | U16 y  |
 *   +-------+------------------+--------+--------+
 *   button-mask bit 0 = left, 1 = middle, 2 = right, 3/4 = wheel up/down, 5/6 = wheel left/right.
 */
export function writePointerEvent(x: number, y: number, buttonMask: number): Uint8Array {
  check(isInt(x, 0, 0xffff), 'x', x, 'an integer 0..65535 (round fractional coordinates first)');
  check(isInt(y, 0, 0xffff), 'y', y, 'an integer 0..65535 (round fractional coordinates first)');
  check(isInt(buttonMask, 0, 0xff), 'buttonMask', buttonMask, 'an integer 0..255');
  return new ByteWriter(6).u8(5).u8(buttonMask).u16(x).u16(y).toBytes();
}

/**
 * ClientCutText (§7.5.6):
 *   +-------+-------+--------------+------------------------+
 *   | U8 6  | 3 pad | U32 length   | U8 text[length]        |
 *   +-------+-------+--------------+------------------------+
 *   The text is ISO 8859-1 (Latin-1); characters outside it cannot be sent.
 */
export function writeClientCutText(text: string): Uint8Array {
  check(typeof text === 'string', 'text', typeof text, 'a string');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff)
      check(false, 'text', `a string with U+${c.toString(16).toUpperCase().padStart(4, '0')} at index ${i}`, 'ISO 8859-1 (Latin-1) text, as RFC 6143 ClientCutText requires');
  }
  const body = Buffer.from(text, 'latin1');
  return new ByteWriter(8 + body.length).u8(6).pad(3).u32(body.length).bytes(body).toBytes();
}
