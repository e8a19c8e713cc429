/**
 * ZRLE encoding (RFC 6143 §7.7.6), encoding number 16.
 *
 *   +--------------------+
 *   | U32 length         |
 *   +--------------------+
 *   | U8[length] zlibData|  one zlib stream per connection (ctx.zrleStream), sync-flushed per rectangle
 *   +--------------------+
 *
 * zlibData inflates to 64x64 tiles, left to right, top to bottom (edge tiles smaller).
 * CPIXEL is 3 bytes R, G, B in our pixel format. Each tile:
 *
 *   | U8 subencoding |  top bit = run-length encoded, low 7 bits = palette size
 *     0        raw:           CPIXEL[tw * th]
 *     1        solid:         CPIXEL
 *     2..16    packed palette: CPIXEL[size] palette, then rows of indices packed MSB first,
 *                             1 bit (size 2), 2 bits (3..4) or 4 bits (5..16) each, every row
 *                             padded to a whole byte: m = ceil(tw * bits / 8) * th bytes
 *     17..127  unused (RFB_ERR_DECODE)
 *     128      plain RLE:     runs of { CPIXEL, run length } until the tile is full
 *     129      unused (RFB_ERR_DECODE)
 *     130..255 palette RLE:   CPIXEL[sub - 128] palette, then runs until the tile is full:
 *                             U8 index (< 128: a run of 1) or U8 index + 128 then a run length
 *   run length: bytes b1..bn where b1..b(n-1) are 255 and bn < 255; length = 1 + sum(b)
 *
 * A run that overflows its tile, a palette index past the palette, tile data that ends
 * early or leaves bytes over are RFB_ERR_DECODE; so is corrupt zlib data.
 *
 * Resumable per rectangle: nothing is consumed until the whole length-prefixed blob
 * has arrived (the zlib stream must see every rectangle's bytes exactly once, in order).
 * Solid tiles become sink.fill; raw tiles are blitted straight from the inflated
 * bytes (bpp 3); palette and RLE tiles are expanded into one reused 64x64 RGBA buffer
 * and blitted with bpp 4 (alpha ignored by the sink).
 */
import { VncuaError } from '../../errors.ts';
import type { ByteQueue } from '../bytes.ts';
import type { PixelSink } from '../sink.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC, assertInBounds } from './types.ts';

const TILE = 64;
const OPAQUE = 0xff000000;

/** Reused tile buffer (decoding is synchronous; sinks copy what they keep). */
const tileU32 = new Uint32Array(TILE * TILE);
const tileBytes = new Uint8Array(tileU32.buffer);
/** Reused palette (at most 127 entries). */
const palette = new Uint32Array(128);

function corrupt(message: string, details?: Record<string, unknown>): VncuaError {
  return new VncuaError('RFB_ERR_DECODE', `ZRLE: ${message}; the stream is corrupt, reconnect`, details ? { details } : undefined);
}

/**
 * Decode the inflated tile data of one ZRLE rectangle into `sink`.
 * Exported for the benchmark and the recording post-processor; throws RFB_ERR_DECODE on malformed data.
 */
export function drawZrleTiles(src: Uint8Array, rx: number, ry: number, rw: number, rh: number, sink: PixelSink): void {
  const n = src.length;
  let p = 0;
  for (let ty = ry; ty < ry + rh; ty += TILE) {
    const th = Math.min(TILE, ry + rh - ty);
    for (let tx = rx; tx < rx + rw; tx += TILE) {
      const tw = Math.min(TILE, rx + rw - tx);
      const area = tw * th;
      if (p >= n) throw corrupt(`tile data ends before the tile at ${tx},${ty}`, { x: tx, y: ty });
      const sub = src[p++]!;

      if (sub === 0) {
        const len = area * 3;
        if (p + len > n) throw corrupt(`raw tile at ${tx},${ty} needs ${len} bytes, ${n - p} left`);
        sink.blit(tx, ty, tw, th, src, p, tw * 3, 3);
        p += len;
        continue;
      }
      if (sub === 1) {
        if (p + 3 > n) throw corrupt(`solid tile at ${tx},${ty} is truncated`);
        sink.fill(tx, ty, tw, th, (src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | OPAQUE) >>> 0);
        p += 3;
        continue;
      }
      if ((sub > 16 && sub < 128) || sub === 129) {
        throw corrupt(`tile at ${tx},${ty} has undefined subencoding ${sub}`, { x: tx, y: ty, subencoding: sub });
      }

      // Palette (packed or RLE); plain RLE (128) has none.
      const size = sub & 127;
      if (p + size * 3 > n) throw corrupt(`palette of the tile at ${tx},${ty} is truncated`);
      for (let i = 0; i < size; i++, p += 3) palette[i] = (src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | OPAQUE) >>> 0;

      if (sub < 128) {
        p = unpackPalette(src, p, tw, th, size, tx, ty);
      } else if (size === 0) {
        p = plainRle(src, p, area, tx, ty);
      } else {
        p = paletteRle(src, p, area, size, tx, ty);
      }
      sink.blit(tx, ty, tw, th, tileBytes, 0, tw * 4, 4);
    }
  }
  if (p !== n) throw corrupt(`${n - p} bytes of tile data left over after the last tile`, { extra: n - p });
}

/** Packed palette indices → tileU32. Returns the new read position. */
function unpackPalette(src: Uint8Array, p: number, tw: number, th: number, size: number, tx: number, ty: number): number {
  const bits = size === 2 ? 1 : size <= 4 ? 2 : 4;
  const rowBytes = (tw * bits + 7) >> 3;
  if (p + rowBytes * th > src.length) throw corrupt(`packed pixels of the tile at ${tx},${ty} are truncated`);
  const mask = (1 << bits) - 1;
  let o = 0;
  for (let row = 0; row < th; row++) {
    const end = o + tw;
    let byte = 0;
    let left = 0;
    while (o < end) {
      if (left === 0) {
        byte = src[p++]!;
        left = 8;
      }
      left -= bits;
      const idx = (byte >> left) & mask;
      if (idx >= size) throw corrupt(`palette index ${idx} past the ${size}-colour palette of the tile at ${tx},${ty}`);
      tileU32[o++] = palette[idx]!;
    }
  }
  return p;
}

/** Where the last readRun() stopped reading (a module slot, so the hot path allocates nothing). */
let runEnd = 0;
/** Read a multi-byte run length (1 + sum of the bytes; 255 means another byte follows) starting at `p`. */
function readRun(src: Uint8Array, p: number, tx: number, ty: number): number {
  const n = src.length;
  let len = 1;
  let b: number;
  do {
    if (p >= n) throw corrupt(`run length in the tile at ${tx},${ty} is truncated`);
    b = src[p++]!;
    len += b;
  } while (b === 255);
  runEnd = p;
  return len;
}

/** Plain RLE runs → tileU32. Returns the new read position. */
function plainRle(src: Uint8Array, p: number, area: number, tx: number, ty: number): number {
  const n = src.length;
  let o = 0;
  while (o < area) {
    if (p + 4 > n) throw corrupt(`plain RLE run in the tile at ${tx},${ty} is truncated`);
    const c = (src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | OPAQUE) >>> 0;
    p += 3;
    let len: number;
    const b = src[p]!;
    if (b < 255) {
      len = b + 1;
      p++;
    } else {
      len = readRun(src, p, tx, ty);
      p = runEnd;
    }
    if (o + len > area) throw corrupt(`run of ${len} overflows the tile at ${tx},${ty} (${area - o} pixels left)`);
    fillRun(c, o, len);
    o += len;
  }
  return p;
}

/** Palette RLE runs → tileU32. Returns the new read position. */
function paletteRle(src: Uint8Array, p: number, area: number, size: number, tx: number, ty: number): number {
  const n = src.length;
  let o = 0;
  while (o < area) {
    if (p >= n) throw corrupt(`palette RLE data of the tile at ${tx},${ty} is truncated`);
    const v = src[p++]!;
    const idx = v & 127;
    if (idx >= size) throw corrupt(`palette index ${idx} past the ${size}-colour palette of the tile at ${tx},${ty}`);
    const c = palette[idx]!;
    if (v < 128) {
      tileU32[o++] = c;
      continue;
    }
    if (p >= n) throw corrupt(`palette RLE run length in the tile at ${tx},${ty} is truncated`);
    let len: number;
    const b = src[p]!;
    if (b < 255) {
      len = b + 1;
      p++;
    } else {
      len = readRun(src, p, tx, ty);
      p = runEnd;
    }
    if (o + len > area) throw corrupt(`run of ${len} overflows the tile at ${tx},${ty} (${area - o} pixels left)`);
    fillRun(c, o, len);
    o += len;
  }
  return p;
}

function fillRun(c: number, o: number, len: number): void {
  if (len > 16) tileU32.fill(c, o, o + len);
  else for (const end = o + len; o < end; o++) tileU32[o] = c;
}

class ZrleDecoder implements RectDecoder {
  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {}

  decode(q: ByteQueue): boolean {
    if (!q.has(4)) return false;
    const len = q.peekU32(0);
    const { x, y, width, height } = this.rect;
    // Worst case is plain RLE with runs of 1 (4 bytes a pixel) plus 1 + 127 * 3 header bytes per tile; zlib adds ~0.1 % + a few bytes.
    const tiles = Math.ceil(width / TILE) * Math.ceil(height / TILE);
    const cap = 65536 + 2 * (width * height * 4 + tiles * 382);
    if (len > cap) {
      throw corrupt(`a ${width}x${height} rectangle announces ${len} compressed bytes (at most ${cap} make sense)`, { length: len, cap });
    }
    if (!q.has(4 + len)) return false;
    q.skip(4);
    const data = q.readBytes(len);
    if (len === 0) {
      if (width * height !== 0) throw corrupt(`a ${width}x${height} rectangle has no data`);
      return true;
    }
    // The largest valid tile data: plain RLE with runs of 1 (4 bytes a pixel) plus per-tile headers.
    const tilesData = this.ctx.zrleStream.inflate(data, undefined, width * height * 4 + tiles * 382);
    drawZrleTiles(tilesData, x, y, width, height, this.ctx.sink);
    return true;
  }
}

/** ZRLE: zlib-compressed 64x64 tiles, each raw, solid, packed-palette or run-length encoded. */
export const zrleEncoding: EncodingSpec = {
  id: ENC.ZRLE,
  name: 'ZRLE',
  pseudo: false,
  create(rect, ctx) {
    assertInBounds(rect, ctx, 'ZRLE');
    return new ZrleDecoder(rect, ctx);
  },
};
