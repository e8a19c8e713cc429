/**
 * Fixture builders for the pseudo-encodings with a payload: Cursor (RFC 6143 §7.8.1)
 * and ExtendedDesktopSize (rfbproto). DesktopSize and LastRect have no payload.
 */
import { ByteWriter } from '../bytes.ts';
import type { DesktopScreen } from '../encodings/extended-desktop-size.ts';

/** An RGB colour. */
export type Rgb = [number, number, number];

/** A Cursor payload: width*height PIXELs (R, G, B, X) then the MSB-first bitmask, rows padded to a byte. */
export function cursorPayload(width: number, height: number, color: (px: number, py: number) => Rgb, opaque: (px: number, py: number) => boolean): Uint8Array {
  const w = new ByteWriter();
  for (let py = 0; py < height; py++) for (let px = 0; px < width; px++) w.bytes([...color(px, py), 0x77]);
  const rowBytes = Math.floor((width + 7) / 8);
  for (let py = 0; py < height; py++) {
    const row = new Uint8Array(rowBytes);
    for (let px = 0; px < width; px++) if (opaque(px, py)) row[px >> 3]! |= 0x80 >> (px & 7);
    w.bytes(row);
  }
  return w.toBytes();
}

/** An ExtendedDesktopSize payload: screen count, 3 padding bytes, 16 bytes per screen. */
export function extendedDesktopSizePayload(screens: DesktopScreen[]): Uint8Array {
  const w = new ByteWriter().u8(screens.length).pad(3);
  for (const s of screens) w.u32(s.id).u16(s.x).u16(s.y).u16(s.width).u16(s.height).u32(s.flags);
  return w.toBytes();
}
