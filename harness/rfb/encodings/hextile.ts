/**
 * Hextile encoding (RFC 6143 §7.7.4), encoding number 5.
 *
 * The rectangle is cut into 16x16 tiles, left to right, top to bottom; the last
 * tile of a row / the tiles of the last row are narrower / shorter. Each tile:
 *
 *   +--------------------+
 *   | U8 subencoding     |  bit 1 Raw, 2 BackgroundSpecified, 4 ForegroundSpecified,
 *   +--------------------+      8 AnySubrects, 16 SubrectsColoured (32..128: undefined)
 *
 *   Raw set (other bits irrelevant):
 *   | PIXEL[tw * th]     |  (our pixel format: R, G, B, X)
 *
 *   otherwise, in this order:
 *   | PIXEL background   |  if BackgroundSpecified (else: the previous tile's background)
 *   | PIXEL foreground   |  if ForegroundSpecified (else: the previous tile's foreground)
 *   | U8 n-subrects      |  if AnySubrects (else: the tile is solid background)
 *   then n-subrects times:
 *   | PIXEL colour       |  only if SubrectsColoured (else the subrect uses the foreground)
 *   | U8 x << 4 | y      |
 *   | U8 (w-1) << 4 | (h-1) |
 *
 * Colour carry-over choices (the spec says a server must not rely on carrying a
 * colour over a Raw tile, nor the foreground over a SubrectsColoured tile, so this
 * only matters for non-conforming servers):
 * - background and foreground start as black for each rectangle (as TigerVNC's decoder);
 * - a Raw tile leaves both untouched (as noVNC and TigerVNC);
 * - a SubrectsColoured tile leaves the foreground untouched (as noVNC; TigerVNC sets it
 *   to the last subrect's colour);
 * - a tile with subencoding 0 after a Raw tile is filled with the carried background
 *   (as TigerVNC; noVNC skips drawing it).
 * A subrect that does not fit inside its (possibly smaller edge) tile is RFB_ERR_DECODE.
 *
 * Resumable per tile: the tile's full length is computed with peeks, and the tile is
 * consumed only once all of it has arrived.
 */
import { VncuaError } from '../../errors.ts';
import type { ByteQueue } from '../bytes.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC, assertInBounds } from './types.ts';

const RAW = 1;
const BACKGROUND_SPECIFIED = 2;
const FOREGROUND_SPECIFIED = 4;
const ANY_SUBRECTS = 8;
const SUBRECTS_COLOURED = 16;
const UNDEFINED_BITS = 0xe0;
const BPP = 4;
const BLACK = 0xff000000;

/** Shared 16x16 tile scratch buffer (decoding is synchronous; sinks copy what they keep). */
const tileU32 = new Uint32Array(16 * 16);
const tileBytes = new Uint8Array(tileU32.buffer);

class HextileDecoder implements RectDecoder {
  private readonly tilesX: number;
  private readonly total: number;
  private tile = 0;
  private bg = BLACK;
  private fg = BLACK;

  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {
    this.tilesX = Math.ceil(rect.width / 16);
    this.total = this.tilesX * Math.ceil(rect.height / 16);
  }

  decode(q: ByteQueue): boolean {
    const { x, y, width, height } = this.rect;
    while (this.tile < this.total) {
      const col = this.tile % this.tilesX;
      const row = (this.tile - col) / this.tilesX;
      const tx = x + col * 16;
      const ty = y + row * 16;
      const tw = Math.min(16, x + width - tx);
      const th = Math.min(16, y + height - ty);

      if (!q.has(1)) return false;
      const sub = q.peekU8(0);
      if (sub & UNDEFINED_BITS) {
        throw new VncuaError('RFB_ERR_DECODE', `Hextile tile ${this.tile} has subencoding ${sub} with undefined bits set; the stream is corrupt, reconnect`, {
          details: { tile: this.tile, subencoding: sub },
        });
      }

      if (sub & RAW) {
        const len = 1 + tw * th * BPP;
        if (!q.has(len)) return false;
        q.skip(1);
        const px = q.readBytes(tw * th * BPP);
        this.ctx.sink.blit(tx, ty, tw, th, px, 0, tw * BPP, 4);
        this.tile++;
        continue;
      }

      // Peek the whole tile's length before consuming any of it.
      let len = 1;
      if (sub & BACKGROUND_SPECIFIED) len += BPP;
      if (sub & FOREGROUND_SPECIFIED) len += BPP;
      let n = 0;
      if (sub & ANY_SUBRECTS) {
        if (!q.has(len + 1)) return false;
        n = q.peekU8(len);
        len += 1 + n * (sub & SUBRECTS_COLOURED ? BPP + 2 : 2);
      }
      if (!q.has(len)) return false;

      const b = q.readBytes(len);
      let p = 1;
      if (sub & BACKGROUND_SPECIFIED) {
        this.bg = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | BLACK) >>> 0;
        p += BPP;
      }
      if (sub & FOREGROUND_SPECIFIED) {
        this.fg = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | BLACK) >>> 0;
        p += BPP;
      }
      if (n === 0) {
        this.ctx.sink.fill(tx, ty, tw, th, this.bg);
        this.tile++;
        continue;
      }
      p += 1; // the subrect count, already peeked
      const coloured = (sub & SUBRECTS_COLOURED) !== 0;
      tileU32.fill(this.bg, 0, tw * th);
      for (let i = 0; i < n; i++) {
        let color = this.fg;
        if (coloured) {
          color = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | BLACK) >>> 0;
          p += BPP;
        }
        const xy = b[p]!;
        const wh = b[p + 1]!;
        p += 2;
        const sx = xy >> 4;
        const sy = xy & 15;
        const sw = (wh >> 4) + 1;
        const sh = (wh & 15) + 1;
        if (sx + sw > tw || sy + sh > th) {
          throw new VncuaError(
            'RFB_ERR_DECODE',
            `Hextile subrect ${sw}x${sh}+${sx}+${sy} does not fit in the ${tw}x${th} tile ${this.tile} of a ${width}x${height} rectangle; the stream is corrupt, reconnect`,
            { details: { tile: this.tile, subrect: { x: sx, y: sy, w: sw, h: sh }, tileWidth: tw, tileHeight: th } },
          );
        }
        for (let r = sy; r < sy + sh; r++) tileU32.fill(color, r * tw + sx, r * tw + sx + sw);
      }
      this.ctx.sink.blit(tx, ty, tw, th, tileBytes, 0, tw * BPP, 4);
      this.tile++;
    }
    return true;
  }
}

/** Hextile: 16x16 tiles, each raw or background + (coloured) subrectangles. */
export const hextileEncoding: EncodingSpec = {
  id: ENC.HEXTILE,
  name: 'Hextile',
  pseudo: false,
  create(rect, ctx) {
    assertInBounds(rect, ctx, 'Hextile');
    return new HextileDecoder(rect, ctx);
  },
};
