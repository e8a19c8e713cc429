/**
 * Fixture builders for ZRLE rectangles (RFC 6143 §7.7.6), CPIXEL = R, G, B.
 * Tiles are built uncompressed with `zrleTile.*`, then `zrleRect` compresses them
 * through one persistent deflate stream (sync-flushed per rectangle, as servers do)
 * and prefixes the U32 length. `zrleEncodeImage` is a small real encoder (picks the
 * smallest subencoding per tile) for round-trip tests and the benchmark.
 */
import { Deflate, Z_SYNC_FLUSH } from 'pako';
import { ByteWriter } from '../bytes.ts';

/** An RGB colour. */
export type Rgb = [number, number, number];

/** A run length as ZRLE encodes it: (len-1)/255 bytes of 255, then (len-1)%255. */
export function zrleRunLength(len: number): number[] {
  const out: number[] = [];
  let rest = len - 1;
  while (rest >= 255) {
    out.push(255);
    rest -= 255;
  }
  out.push(rest);
  return out;
}

function bitsFor(size: number): number {
  return size === 2 ? 1 : size <= 4 ? 2 : 4;
}

/** Builders for one uncompressed ZRLE tile, by subencoding. */
export const zrleTile = {
  /** Subencoding 0: tw*th CPIXELs. */
  raw(tw: number, th: number, color: (px: number, py: number) => Rgb): Uint8Array {
    const w = new ByteWriter().u8(0);
    for (let py = 0; py < th; py++) for (let px = 0; px < tw; px++) w.bytes(color(px, py));
    return w.toBytes();
  },
  /** Subencoding 1: one CPIXEL for the whole tile. */
  solid(c: Rgb): Uint8Array {
    return new ByteWriter().u8(1).bytes(c).toBytes();
  },
  /** Subencodings 2..16: palette then packed indices, rows padded to a byte. `index(px, py)` may exceed the palette for malformed fixtures. */
  palette(pal: Rgb[], tw: number, th: number, index: (px: number, py: number) => number): Uint8Array {
    const bits = bitsFor(pal.length);
    const w = new ByteWriter().u8(pal.length);
    for (const c of pal) w.bytes(c);
    for (let py = 0; py < th; py++) {
      const row = new Uint8Array(Math.ceil((tw * bits) / 8));
      for (let px = 0; px < tw; px++) {
        const bit = px * bits;
        row[bit >> 3]! |= index(px, py) << (8 - bits - (bit & 7));
      }
      w.bytes(row);
    }
    return w.toBytes();
  },
  /** Subencoding 128: runs of [colour, length] (lengths may cross rows). */
  plainRle(runs: Array<[Rgb, number]>): Uint8Array {
    const w = new ByteWriter().u8(128);
    for (const [c, len] of runs) w.bytes(c).bytes(zrleRunLength(len));
    return w.toBytes();
  },
  /** Subencodings 130..255: palette then runs of [index, length]; a length of 1 is the bare index. */
  paletteRle(pal: Rgb[], runs: Array<[number, number]>): Uint8Array {
    const w = new ByteWriter().u8(128 + pal.length);
    for (const c of pal) w.bytes(c);
    for (const [i, len] of runs) {
      if (len === 1) w.u8(i);
      else w.u8(i | 128).bytes(zrleRunLength(len));
    }
    return w.toBytes();
  },
  /** Any subencoding byte followed by arbitrary bytes (malformed fixtures). */
  custom(subencoding: number, body: number[] = []): Uint8Array {
    return new ByteWriter().u8(subencoding).bytes(body).toBytes();
  },
};

/** One zlib stream shared by the rectangles of a connection, sync-flushed per rectangle. */
export class ZrleDeflater {
  private readonly deflate: Deflate;
  private out: Uint8Array[] = [];

  constructor(level = 6) {
    this.deflate = new Deflate({ level });
    this.deflate.onData = (chunk: Uint8Array) => {
      this.out.push(chunk);
    };
  }

  /** Compress `data` and sync-flush; returns exactly the bytes the server would send. */
  compress(data: Uint8Array): Uint8Array {
    this.out = [];
    if (!this.deflate.push(data, Z_SYNC_FLUSH)) throw new Error(`deflate failed: ${this.deflate.msg}`);
    return concat(this.out);
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A ZRLE rectangle payload: U32 length + the tiles compressed through `deflater`. */
export function zrleRect(tiles: Uint8Array[], deflater: ZrleDeflater): Uint8Array {
  const z = deflater.compress(concat(tiles));
  return new ByteWriter().u32(z.length).bytes(z).toBytes();
}

/** A ZRLE rectangle payload with an explicit (possibly wrong) zlib body. */
export function zrleRawPayload(zlibData: Uint8Array, length = zlibData.length): Uint8Array {
  return new ByteWriter().u32(length).bytes(zlibData).toBytes();
}

/**
 * Encode an RGB image (3 bytes a pixel, row-major) into uncompressed ZRLE tile data,
 * choosing per tile the smallest of solid, packed palette, palette RLE, plain RLE and raw
 * (what real encoders do). Returns one Uint8Array per tile, in tile order.
 */
export function zrleEncodeImage(rgb: Uint8Array, width: number, height: number): Uint8Array[] {
  const tiles: Uint8Array[] = [];
  const px = new Uint32Array(64 * 64);
  for (let ty = 0; ty < height; ty += 64) {
    const th = Math.min(64, height - ty);
    for (let tx = 0; tx < width; tx += 64) {
      const tw = Math.min(64, width - tx);
      const area = tw * th;
      for (let y = 0; y < th; y++) {
        for (let x = 0; x < tw; x++) {
          const s = ((ty + y) * width + tx + x) * 3;
          px[y * tw + x] = rgb[s]! | (rgb[s + 1]! << 8) | (rgb[s + 2]! << 16);
        }
      }
      tiles.push(encodeTile(px, tw, th, area));
    }
  }
  return tiles;
}

function rgbOf(c: number): Rgb {
  return [c & 255, (c >> 8) & 255, (c >> 16) & 255];
}

function runBytes(len: number): number {
  return Math.floor((len - 1) / 255) + 1;
}

function encodeTile(px: Uint32Array, tw: number, th: number, area: number): Uint8Array {
  const pal = new Map<number, number>();
  const runs: Array<[number, number]> = [];
  let plainSize = 0;
  let palRleRunsSize = 0;
  for (let i = 0; i < area; ) {
    const c = px[i]!;
    let j = i + 1;
    while (j < area && px[j] === c) j++;
    runs.push([c, j - i]);
    if (pal.size <= 127 && !pal.has(c)) pal.set(c, pal.size);
    plainSize += 3 + runBytes(j - i);
    palRleRunsSize += j - i === 1 ? 1 : 1 + runBytes(j - i);
    i = j;
  }
  const palette = [...pal.keys()];
  if (palette.length === 1) return zrleTile.solid(rgbOf(palette[0]!));
  const candidates: Array<[number, () => Uint8Array]> = [
    [area * 3, () => zrleTile.raw(tw, th, (x, y) => rgbOf(px[y * tw + x]!))],
    [plainSize, () => zrleTile.plainRle(runs.map(([c, n]) => [rgbOf(c), n]))],
  ];
  if (palette.length <= 127) {
    const pals = palette.map(rgbOf);
    candidates.push([
      palette.length * 3 + palRleRunsSize,
      () =>
        zrleTile.paletteRle(
          pals,
          runs.map(([c, n]) => [pal.get(c)!, n]),
        ),
    ]);
    if (palette.length <= 16) {
      const bits = bitsFor(palette.length);
      candidates.push([palette.length * 3 + Math.ceil((tw * bits) / 8) * th, () => zrleTile.palette(pals, tw, th, (x, y) => pal.get(px[y * tw + x]!)!)]);
    }
  }
  candidates.sort((a, b) => a[0] - b[0]);
  return candidates[0]![1]();
}
