/**
 * A Hextile encoder (RFC 6143 §7.7.4) for the live endpoint, kept to what is cheap to decide: each
 * 16x16 tile is either one colour (sent as its background, or as nothing at all when it is the same
 * colour as the tile before) or sent raw. Screens are mostly flat (page backgrounds, panels, margins),
 * so an update shrinks many times over for one pass over its pixels: less for the agent's process to
 * push through the socket, less for the watcher to read. noVNC and vncua's client both decode Hextile.
 *
 * Layout of a rectangle: tiles left to right, top to bottom, 16x16 (smaller at the right and bottom
 * edges), each:
 *   +--------------------+
 *   | U8 subencoding     |  bit 1 Raw, bit 2 BackgroundSpecified (4, 8, 16: subrects, never used here)
 *   +--------------------+
 *   Raw:                   width * height pixels, row after row
 *   BackgroundSpecified:   one pixel: the tile's only colour
 *   neither (0):           the tile is the previous tile's background colour
 * The first tile of a rectangle and the first solid tile after a Raw one always specify their colour
 * (decoders differ on what a Raw tile leaves behind).
 */
import { BYTES_PER_PIXEL, type PixelWriter } from './pixel-format.ts';
import type { PixelSource } from './messages.ts';
import type { Rect } from './region.ts';

const RAW = 1;
const BACKGROUND = 2;
const TILE = 16;

/** A rectangle's tiles, classified: what hextileSize() found, for writeHextile() to write. */
export interface HextilePlan {
  rect: Rect;
  /** Per tile: RAW, BACKGROUND or 0 (same colour as the previous tile). */
  kinds: Uint8Array;
  /** The encoded size in bytes. */
  size: number;
}

/** A 32-bit view of the framebuffer's RGBA bytes (one pixel per element). */
function pixels32(src: PixelSource): Uint32Array {
  return new Uint32Array(src.data.buffer, src.data.byteOffset, src.width * src.height);
}

/** Classify the tiles of `rect` of `src` (which must lie inside it). */
export function planHextile(src: PixelSource, rect: Rect): HextilePlan {
  const px = pixels32(src);
  const W = src.width;
  const cols = Math.ceil(rect.w / TILE);
  const rows = Math.ceil(rect.h / TILE);
  const kinds = new Uint8Array(cols * rows);
  let size = 0;
  let prev: number | null = null; // the background a 0 tile would repeat (null: none usable)
  let k = 0;
  for (let ty = rect.y; ty < rect.y + rect.h; ty += TILE) {
    const th = Math.min(TILE, rect.y + rect.h - ty);
    for (let tx = rect.x; tx < rect.x + rect.w; tx += TILE, k++) {
      const tw = Math.min(TILE, rect.x + rect.w - tx);
      const first = px[ty * W + tx]!;
      let solid = true;
      for (let y = ty; y < ty + th && solid; y++) {
        const row = y * W;
        for (let x = tx; x < tx + tw; x++) {
          if (px[row + x] !== first) {
            solid = false;
            break;
          }
        }
      }
      if (!solid) {
        kinds[k] = RAW;
        size += 1 + tw * th * BYTES_PER_PIXEL;
        prev = null;
      } else if (prev !== null && (first & 0xffffff) === (prev & 0xffffff)) {
        kinds[k] = 0;
        size += 1;
      } else {
        kinds[k] = BACKGROUND;
        size += 1 + BYTES_PER_PIXEL;
        prev = first;
      }
    }
  }
  return { rect, kinds, size };
}

/** Write the planned rectangle into `out` from `offset` (exactly plan.size bytes), pixels through `pixels`. */
export function writeHextile(plan: HextilePlan, src: PixelSource, pixels: PixelWriter, out: Uint8Array, offset: number): void {
  const { rect, kinds } = plan;
  const W = src.width;
  const px = pixels32(src);
  const dv = pixels.copy ? new DataView(out.buffer, out.byteOffset, out.byteLength) : null;
  let o = offset;
  let k = 0;
  for (let ty = rect.y; ty < rect.y + rect.h; ty += TILE) {
    const th = Math.min(TILE, rect.y + rect.h - ty);
    for (let tx = rect.x; tx < rect.x + rect.w; tx += TILE, k++) {
      const tw = Math.min(TILE, rect.x + rect.w - tx);
      const kind = kinds[k]!;
      out[o++] = kind;
      if (kind === BACKGROUND) {
        pixels.rect(src.data, W, tx, ty, 1, 1, out, o);
        o += BYTES_PER_PIXEL;
      } else if (kind === RAW) {
        if (dv) {
          // The Framebuffer's byte order is the watcher's: 32-bit copies, little-endian as in memory.
          for (let y = ty; y < ty + th; y++) {
            const row = y * W;
            for (let x = tx; x < tx + tw; x++, o += 4) dv.setUint32(o, px[row + x]!, true);
          }
        } else {
          pixels.rect(src.data, W, tx, ty, tw, th, out, o);
          o += tw * th * BYTES_PER_PIXEL;
        }
      }
    }
  }
}
