/**
 * Fixture builders for Hextile rectangles (RFC 6143 §7.7.4), in our pixel format
 * (PIXEL = R, G, B, X). Tests compose tiles with these instead of hex blobs.
 */
import { ByteWriter } from '../bytes.ts';

/** An RGB colour. */
export type Rgb = [number, number, number];

/** A Hextile subrectangle, relative to its tile; `color` only with SubrectsColoured. */
export interface HextileSubrect {
  x: number;
  y: number;
  w: number;
  h: number;
  color?: Rgb;
}

/** Hextile subencoding bits. */
export const HEXTILE = { RAW: 1, BACKGROUND: 2, FOREGROUND: 4, ANY_SUBRECTS: 8, COLOURED: 16 } as const;

/** One PIXEL in our format; the padding byte is junk on purpose (decoders must ignore it). */
export function hextilePixel(c: Rgb): number[] {
  return [c[0], c[1], c[2], 0xa5];
}

/**
 * A non-raw tile. The subencoding is derived from what is given: `bg` → BackgroundSpecified,
 * `fg` → ForegroundSpecified, `subrects` → AnySubrects (even if empty), subrects with a
 * `color` → SubrectsColoured. `extraBits` is OR-ed in (for malformed fixtures).
 */
export function hextileTile(opts: { bg?: Rgb; fg?: Rgb; subrects?: HextileSubrect[]; extraBits?: number }): Uint8Array {
  const { bg, fg, subrects } = opts;
  const coloured = subrects?.some((s) => s.color !== undefined) ?? false;
  let sub = opts.extraBits ?? 0;
  if (bg) sub |= HEXTILE.BACKGROUND;
  if (fg) sub |= HEXTILE.FOREGROUND;
  if (subrects) sub |= HEXTILE.ANY_SUBRECTS;
  if (coloured) sub |= HEXTILE.COLOURED;
  const w = new ByteWriter().u8(sub);
  if (bg) w.bytes(hextilePixel(bg));
  if (fg) w.bytes(hextilePixel(fg));
  if (subrects) {
    w.u8(subrects.length);
    for (const s of subrects) {
      if (coloured) w.bytes(hextilePixel(s.color ?? [0, 0, 0]));
      w.u8((s.x << 4) | s.y).u8(((s.w - 1) << 4) | (s.h - 1));
    }
  }
  return w.toBytes();
}

/** A raw tile of tw x th pixels coloured by `color(px, py)`; `extraBits` are OR-ed into the subencoding. */
export function hextileRawTile(tw: number, th: number, color: (px: number, py: number) => Rgb, extraBits = 0): Uint8Array {
  const w = new ByteWriter().u8(HEXTILE.RAW | extraBits);
  for (let py = 0; py < th; py++) for (let px = 0; px < tw; px++) w.bytes(hextilePixel(color(px, py)));
  return w.toBytes();
}

/** Concatenate tiles into one rectangle payload (tiles in left-to-right, top-to-bottom order). */
export function hextileRect(tiles: Uint8Array[]): Uint8Array {
  const w = new ByteWriter();
  for (const t of tiles) w.bytes(t);
  return w.toBytes();
}

/** A tiny expected-image model for tests: paint rectangles, then read pixels back (used with expectPixels). */
export class RgbCanvas {
  private readonly px: Rgb[];
  constructor(
    readonly width: number,
    readonly height: number,
    fill: Rgb = [0, 0, 0],
  ) {
    this.px = Array.from({ length: width * height }, () => fill);
  }
  /** Paint a w x h block at (x, y) with `color` or `color(px, py)` (block-relative). */
  paint(x: number, y: number, w: number, h: number, color: Rgb | ((px: number, py: number) => Rgb)): this {
    for (let py = 0; py < h; py++) {
      for (let px = 0; px < w; px++) this.px[(y + py) * this.width + x + px] = typeof color === 'function' ? color(px, py) : color;
    }
    return this;
  }
  /** The colour at (x, y). */
  at = (x: number, y: number): Rgb => this.px[y * this.width + x]!;
}
