/**
 * Writers for the messages the live endpoint's RFB server sends (RFC 6143 §7.1–§7.3, §7.6.1, §7.7):
 * pure functions, arguments in, bytes out. The client-side readers of the same messages are
 * harness/rfb/handshake.ts and server-messages.ts (the tests read these bytes back with them).
 */
import { VncuaError } from '../../errors.ts';
import { ByteWriter } from '../../rfb/bytes.ts';
import { type PixelFormat, writePixelFormatBody } from '../../rfb/client-messages.ts';
import { ENC } from '../../rfb/encodings/types.ts';
import type { CursorShape } from '../../rfb/sink.ts';
import { type HextilePlan, planHextile, writeHextile } from './hextile.ts';
import { BYTES_PER_PIXEL, type PixelWriter } from './pixel-format.ts';
import type { Rect } from './region.ts';

/** Security type None (RFC 6143 §7.2.1): the only one the endpoint offers (its token guards the WebSocket). */
export const SECURITY_NONE = 1;

/**
 * ProtocolVersion (§7.1.1), 12 bytes of ASCII:
 *   "RFB 003.008\n"
 */
export function writeServerVersion(): Uint8Array {
  return Buffer.from('RFB 003.008\n', 'latin1');
}

/**
 * Security types, version 3.7 onwards (§7.1.2):
 *   +---------------------------+--------------------------------+
 *   | U8 number-of-types (n)    | U8 security-types[n]           |
 *   +---------------------------+--------------------------------+
 */
export function writeSecurityTypes(types: readonly number[]): Uint8Array {
  if (types.length === 0 || types.length > 255) throw new VncuaError('LIVE_ERR_ILLEGAL_STATE', `internal: ${types.length} security types cannot be offered`);
  return new ByteWriter(1 + types.length).u8(types.length).bytes(types).toBytes();
}

/**
 * Security type, version 3.3 (§7.1.2): the server decides.
 *   +---------------------+
 *   | U32 security-type   |
 *   +---------------------+
 */
export function writeSecurityType33(type: number): Uint8Array {
  return new ByteWriter(4).u32(type).toBytes();
}

/**
 * SecurityResult (§7.1.3), OK:
 *   +-------------+
 *   | U32 0       |
 *   +-------------+
 */
export function writeSecurityOk(): Uint8Array {
  return new ByteWriter(4).u32(0).toBytes();
}

/**
 * SecurityResult (§7.1.3), failed, version 3.8 (3.3 and 3.7 just close):
 *   +-------------+--------------------+-----------------------------+
 *   | U32 1       | U32 reason-length  | U8 reason-string[length]    |
 *   +-------------+--------------------+-----------------------------+
 */
export function writeSecurityFailure(reason: string): Uint8Array {
  const text = Buffer.from(reason, 'utf8');
  return new ByteWriter(8 + text.length).u32(1).u32(text.length).bytes(text).toBytes();
}

/**
 * ServerInit (§7.3.2):
 *   +--------------------+---------------------+------------------------+
 *   | U16 fb-width       | U16 fb-height       | PIXEL_FORMAT (16 bytes)|
 *   +--------------------+---------------------+------------------------+
 *   | U32 name-length    | U8 name-string[name-length]                  |
 *   +--------------------+----------------------------------------------+
 */
export function writeServerInit(width: number, height: number, pf: PixelFormat, name: string): Uint8Array {
  const text = Buffer.from(name, 'utf8');
  const w = new ByteWriter(24 + text.length).u16(width).u16(height);
  writePixelFormatBody(w, pf);
  return w.u32(text.length).bytes(text).toBytes();
}

/** One rectangle of a FramebufferUpdate the endpoint sends. */
export type UpdateRect =
  /** Pixels of the framebuffer, in Raw encoding. */
  | ({ kind: 'raw' } & Rect)
  /** Pixels of the framebuffer, in Hextile encoding (one-colour tiles as a colour, others raw: ./hextile.ts). */
  | ({ kind: 'hextile' } & Rect)
  /** The DesktopSize pseudo-rectangle: the framebuffer is now width x height. */
  | { kind: 'desktopSize'; width: number; height: number }
  /** The Cursor pseudo-rectangle: the cursor shape (null: an invisible 0x0 cursor). */
  | { kind: 'cursor'; shape: CursorShape | null };

/** What pixels come from: a Framebuffer (RGBA, `width` pixels a row). */
export interface PixelSource {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
  readonly cursorShape: CursorShape | null;
  /** Changes with every drawing operation (a Framebuffer's); lets watchers share an update built once. */
  readonly version?: number;
}

/** Bytes of one rectangle's payload (Hextile: as planned). */
function payloadSize(r: UpdateRect, plans: Map<UpdateRect, HextilePlan>): number {
  if (r.kind === 'raw') return r.w * r.h * BYTES_PER_PIXEL;
  if (r.kind === 'hextile') return plans.get(r)!.size;
  if (r.kind === 'cursor' && r.shape) return r.shape.width * r.shape.height * BYTES_PER_PIXEL + ((r.shape.width + 7) >> 3) * r.shape.height;
  return 0;
}

/**
 * FramebufferUpdate (§7.6.1), built in one buffer of exactly its size:
 *   +-------+-------+----------------------------+
 *   | U8 0  | 1 pad | U16 number-of-rectangles   |
 *   +-------+-------+----------------------------+
 *   then per rectangle:
 *   +--------+--------+------------+-------------+--------------------+------------+
 *   | U16 x  | U16 y  | U16 width  | U16 height  | S32 encoding-type  | payload    |
 *   +--------+--------+------------+-------------+--------------------+------------+
 * Raw (§7.7.1, encoding 0): width * height pixels in the watcher's format, row after row.
 * Hextile (§7.7.4, encoding 5): tiles, see ./hextile.ts.
 * DesktopSize (§7.8.2, -223): x = y = 0, width and height the new size, no payload.
 * Cursor (§7.8.1, -239): x, y the hotspot; width * height pixels, then a bitmask of
 *   floor((width + 7) / 8) bytes a row, most significant bit first, 1 = the pixel is shown.
 */
export function writeFramebufferUpdate(rects: readonly UpdateRect[], src: PixelSource, pixels: PixelWriter): Uint8Array {
  if (rects.length > 0xffff) throw new VncuaError('LIVE_ERR_ILLEGAL_STATE', `internal: ${rects.length} rectangles do not fit in one FramebufferUpdate`);
  const plans = new Map<UpdateRect, HextilePlan>();
  for (const r of rects) if (r.kind === 'hextile') plans.set(r, planHextile(src, r));
  let size = 4;
  for (const r of rects) size += 12 + payloadSize(r, plans);
  const out = new Uint8Array(size);
  out.set(new ByteWriter(4).u8(0).pad(1).u16(rects.length).toBytes(), 0);
  let o = 4;
  const header = (x: number, y: number, w: number, h: number, encoding: number) => {
    out.set(new ByteWriter(12).u16(x).u16(y).u16(w).u16(h).s32(encoding).toBytes(), o);
    o += 12;
  };
  for (const r of rects) {
    if (r.kind === 'raw') {
      header(r.x, r.y, r.w, r.h, ENC.RAW);
      pixels.rect(src.data, src.width, r.x, r.y, r.w, r.h, out, o);
      o += r.w * r.h * BYTES_PER_PIXEL;
    } else if (r.kind === 'hextile') {
      const plan = plans.get(r)!;
      header(r.x, r.y, r.w, r.h, ENC.HEXTILE);
      writeHextile(plan, src, pixels, out, o);
      o += plan.size;
    } else if (r.kind === 'desktopSize') {
      header(0, 0, r.width, r.height, ENC.DESKTOP_SIZE);
    } else if (!r.shape) {
      header(0, 0, 0, 0, ENC.CURSOR);
    } else {
      const { hotX, hotY, width: w, height: h, rgba } = r.shape;
      header(hotX, hotY, w, h, ENC.CURSOR);
      pixels.rect(rgba, w, 0, 0, w, h, out, o);
      o += w * h * BYTES_PER_PIXEL;
      const stride = (w + 7) >> 3;
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const m = o + y * stride + (x >> 3);
          if (rgba[(y * w + x) * 4 + 3] !== 0) out[m] = out[m]! | (0x80 >> (x & 7));
        }
      }
      o += stride * h;
    }
  }
  return out;
}
