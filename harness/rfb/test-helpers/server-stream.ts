/**
 * Named builders for what an RFB server sends, used as test fixtures by the session
 * tests, the fuzzer and the fake servers. Each returns the exact bytes of one message
 * (or part of one) in the client's pixel format (R, G, B, X).
 */
import { ByteWriter } from '../bytes.ts';
import { CLIENT_PIXEL_FORMAT, writeSetPixelFormat, type PixelFormat } from '../client-messages.ts';
import { ENC } from '../encodings/types.ts';

/** An RGB colour. */
export type Rgb = [number, number, number];

const concat = (parts: Uint8Array[]): Uint8Array => {
  const w = new ByteWriter();
  for (const p of parts) w.bytes(p);
  return w.toBytes();
};

/** ProtocolVersion: "RFB 003.008\n" for '3.8', or any raw "xxx.yyy" such as '003.889'. */
export function serverVersion(v: '3.3' | '3.7' | '3.8' | string): Uint8Array {
  const text = v.length === 3 ? `003.00${v.slice(2)}` : v;
  return Buffer.from(`RFB ${text}\n`, 'latin1');
}

/** A reason string: U32 length + text. */
export function reasonString(text: string): Uint8Array {
  const b = Buffer.from(text, 'utf8');
  return new ByteWriter().u32(b.length).bytes(b).toBytes();
}

/** A reason string as QEMU writes it: `sizeof` of a C string, so the length counts its trailing NUL. */
export function cStringReason(text: string): Uint8Array {
  const b = Buffer.from(`${text}\0`, 'utf8');
  return new ByteWriter().u32(b.length).bytes(b).toBytes();
}

/** 3.7+ security type list (an empty list must be followed by reasonString()). */
export function securityTypes(types: number[]): Uint8Array {
  return new ByteWriter().u8(types.length).bytes(types).toBytes();
}

/** 3.7+ refusal: zero types and a reason. */
export function securityRefusal(reason: string): Uint8Array {
  return concat([securityTypes([]), reasonString(reason)]);
}

/** 3.3 security type chosen by the server (0 must be followed by reasonString()). */
export function securityType33(type: number): Uint8Array {
  return new ByteWriter().u32(type).toBytes();
}

/** A 16-byte VNC Authentication challenge. */
export function vncChallenge(bytes: ArrayLike<number>): Uint8Array {
  if (bytes.length !== 16) throw new Error('a challenge is 16 bytes');
  return Uint8Array.from(bytes);
}

/** SecurityResult: OK, or failed with (3.8) an optional reason. */
export function securityResult(result: 'ok' | { failed: string | null; status?: number }): Uint8Array {
  if (result === 'ok') return new ByteWriter().u32(0).toBytes();
  const w = new ByteWriter().u32(result.status ?? 1);
  if (result.failed !== null) w.bytes(reasonString(result.failed));
  return w.toBytes();
}

/** The pixel format serverInit() announces: 32 bpp, depth 24, little-endian true colour, R at bits 16-23, G 8-15, B 0-7 (bytes B, G, R, X). */
export const SERVER_PIXEL_FORMAT: Readonly<PixelFormat> = { ...CLIENT_PIXEL_FORMAT, redShift: 16, blueShift: 0 };

/** ServerInit with a plausible server pixel format (SERVER_PIXEL_FORMAT, which the client replaces with its own). */
export function serverInit({ width, height, name }: { width: number; height: number; name: string }): Uint8Array {
  const n = Buffer.from(name, 'utf8');
  return new ByteWriter()
    .u16(width)
    .u16(height)
    .bytes(writeSetPixelFormat(SERVER_PIXEL_FORMAT).subarray(4)) // the 16-byte PIXEL_FORMAT after SetPixelFormat's 4-byte header
    .u32(n.length)
    .bytes(n)
    .toBytes();
}

/** A rectangle: its 12-byte header plus payload. */
export interface RectBytes {
  header: { x: number; y: number; width: number; height: number; encoding: number };
  payload: Uint8Array;
}

/** FramebufferUpdate with the given rectangles; `count` overrides the announced number (e.g. 0xFFFF with LastRect). */
export function framebufferUpdate(rects: RectBytes[], count = rects.length): Uint8Array {
  const w = new ByteWriter(rects.reduce((n, r) => n + 12 + r.payload.length, 4)).u8(0).pad(1).u16(count);
  for (const r of rects) {
    const h = r.header;
    w.u16(h.x).u16(h.y).u16(h.width).u16(h.height).s32(h.encoding).bytes(r.payload);
  }
  return w.toBytes();
}

/**
 * A writer of true-colour pixels in `pf` (8, 16 or 32 bits per pixel): each channel scaled to its
 * max and shifted into place, the value written at `out[offset]` in the format's byte order.
 */
function pixelWriter(pf: PixelFormat): (rgb: Rgb, out: Uint8Array, offset: number) => void {
  const n = pf.bitsPerPixel >> 3;
  const shifts = Array.from({ length: n }, (_, i) => 8 * (pf.bigEndian ? n - 1 - i : i));
  const channel = (max: number, shift: number) => (max === 255 ? (v: number) => v << shift : (v: number) => Math.round((v * max) / 255) << shift);
  const red = channel(pf.redMax, pf.redShift);
  const green = channel(pf.greenMax, pf.greenShift);
  const blue = channel(pf.blueMax, pf.blueShift);
  return (rgb, out, offset) => {
    const value = (red(rgb[0]) | green(rgb[1]) | blue(rgb[2])) >>> 0;
    for (let i = 0; i < n; i++) out[offset + i] = (value >>> shifts[i]!) & 0xff;
  };
}

/** One true-colour pixel's bytes in `pf`. */
export function pixelBytes(pf: PixelFormat, rgb: Rgb): number[] {
  const out = new Uint8Array(pf.bitsPerPixel >> 3);
  pixelWriter(pf)(rgb, out, 0);
  return Array.from(out);
}

/** The client's format (CLIENT_PIXEL_FORMAT) with a 0xA5 padding byte, which no decoder may read. */
const clientPixel = (rgb: Rgb, out: Uint8Array, offset: number): void => {
  out[offset] = rgb[0];
  out[offset + 1] = rgb[1];
  out[offset + 2] = rgb[2];
  out[offset + 3] = 0xa5;
};

/**
 * A Raw rectangle whose pixel (px, py) relative to its corner is `colour(px, py)`: in the client's
 * format (bytes R, G, B and a 0xA5 padding byte no decoder may read), or in `format` when given.
 */
export function rawRect(x: number, y: number, width: number, height: number, colour: (px: number, py: number) => Rgb, format?: PixelFormat): RectBytes {
  const bpp = format ? format.bitsPerPixel >> 3 : 4;
  const write = format ? pixelWriter(format) : clientPixel;
  const payload = new Uint8Array(width * height * bpp);
  let o = 0;
  for (let py = 0; py < height; py++) for (let px = 0; px < width; px++, o += bpp) write(colour(px, py), payload, o);
  return { header: { x, y, width, height, encoding: ENC.RAW }, payload };
}

/** A CopyRect rectangle copying from (srcX, srcY). */
export function copyRect(x: number, y: number, width: number, height: number, srcX: number, srcY: number): RectBytes {
  return { header: { x, y, width, height, encoding: ENC.COPYRECT }, payload: new ByteWriter().u16(srcX).u16(srcY).toBytes() };
}

/** The LastRect pseudo-rectangle (ends the update). */
export function lastRect(): RectBytes {
  return { header: { x: 0, y: 0, width: 0, height: 0, encoding: ENC.LAST_RECT }, payload: new Uint8Array(0) };
}

/** The DesktopSize pseudo-rectangle announcing a new framebuffer size. */
export function desktopSizeRect(width: number, height: number): RectBytes {
  return { header: { x: 0, y: 0, width, height, encoding: ENC.DESKTOP_SIZE }, payload: new Uint8Array(0) };
}

/**
 * The ExtendedDesktopSize pseudo-rectangle: x = reason, y = status, then
 * U8 number-of-screens, 3 pad, and per screen U32 id, U16 x, y, width, height, U32 flags.
 */
export function extendedDesktopSizeRect(width: number, height: number, opts: { reason?: number; status?: number } = {}): RectBytes {
  const payload = new ByteWriter().u8(1).pad(3).u32(1).u16(0).u16(0).u16(width).u16(height).u32(0).toBytes();
  return { header: { x: opts.reason ?? 0, y: opts.status ?? 0, width, height, encoding: ENC.EXTENDED_DESKTOP_SIZE }, payload };
}

/**
 * The Cursor pseudo-rectangle: x, y = hotspot; width × height pixels, then a bitmask of
 * floor((width + 7) / 8) bytes per row, most significant bit first, 1 = opaque.
 */
export function cursorRect(
  hotX: number,
  hotY: number,
  width: number,
  height: number,
  colour: (px: number, py: number) => Rgb,
  opaque: (px: number, py: number) => boolean,
): RectBytes {
  const w = new ByteWriter();
  for (let py = 0; py < height; py++) for (let px = 0; px < width; px++) w.bytes([...colour(px, py), 0]);
  const stride = (width + 7) >> 3;
  for (let py = 0; py < height; py++) {
    const row = new Uint8Array(stride);
    for (let px = 0; px < width; px++) if (opaque(px, py)) row[px >> 3]! |= 0x80 >> (px & 7);
    w.bytes(row);
  }
  return { header: { x: hotX, y: hotY, width, height, encoding: ENC.CURSOR }, payload: w.toBytes() };
}

/** Bell. */
export function bell(): Uint8Array {
  return Uint8Array.of(2);
}

/** ServerCutText (Latin-1). */
export function serverCutText(text: string): Uint8Array {
  const b = Buffer.from(text, 'latin1');
  return new ByteWriter().u8(3).pad(3).u32(b.length).bytes(b).toBytes();
}

/** SetColourMapEntries with 16-bit RGB triples. */
export function setColourMapEntries(first: number, colours: Rgb[]): Uint8Array {
  const w = new ByteWriter().u8(1).pad(1).u16(first).u16(colours.length);
  for (const [r, g, b] of colours)
    w.u16(r * 257)
      .u16(g * 257)
      .u16(b * 257);
  return w.toBytes();
}

/** Concatenate fixture parts into one stream. */
export function stream(...parts: Uint8Array[]): Uint8Array {
  return concat(parts);
}

/** The whole server side of a handshake up to and including ServerInit, for a given version and security. */
export function handshake(opts: {
  version: '3.3' | '3.7' | '3.8';
  security?: 'none' | 'vncAuth';
  challenge?: ArrayLike<number>;
  width: number;
  height: number;
  name?: string;
}): Uint8Array {
  const parts: Uint8Array[] = [serverVersion(opts.version)];
  const vnc = opts.security === 'vncAuth';
  if (opts.version === '3.3') parts.push(securityType33(vnc ? 2 : 1));
  else parts.push(securityTypes(vnc ? [2] : [1]));
  if (vnc) parts.push(vncChallenge(opts.challenge ?? Array.from({ length: 16 }, (_, i) => i * 17)));
  if (vnc || opts.version === '3.8') parts.push(securityResult('ok'));
  parts.push(serverInit({ width: opts.width, height: opts.height, name: opts.name ?? 'test desktop' }));
  return concat(parts);
}
