/**
 * Fixture builders for Tight and TightPNG rectangles, written the way a server encodes
 * them (see harness/rfb/encodings/tight-common.ts for the byte layout). Also used by
 * bench/tight-decode.ts, so no test-runner imports here.
 */
import { Deflate, Z_SYNC_FLUSH } from 'pako';
import { ByteWriter } from '../bytes.ts';

/** An R, G, B triple (0..255 each). */
export type Rgb = [number, number, number];

/** Tight's compact length: 1..3 bytes, 7 bits each, least significant first; the 3rd byte holds 8 bits. */
export function compactLength(n: number): Uint8Array {
  if (n < 0 || n > 4194303) throw new Error(`compact length ${n} out of range`);
  if (n < 0x80) return Uint8Array.of(n);
  if (n < 0x4000) return Uint8Array.of((n & 0x7f) | 0x80, n >> 7);
  return Uint8Array.of((n & 0x7f) | 0x80, ((n >> 7) & 0x7f) | 0x80, n >> 14);
}

/** The four persistent zlib streams a Tight server keeps; each compress() is one sync-flushed chunk. */
export class TightDeflaters {
  private readonly streams: Array<Deflate | null> = [null, null, null, null];
  private out: Uint8Array[] = [];

  constructor(private readonly level = 6) {}

  /** Compress `data` on stream `id`, continuing that stream's dictionary. */
  compress(id: number, data: Uint8Array): Uint8Array {
    let d = this.streams[id];
    if (!d) {
      d = new Deflate({ level: this.level });
      d.onData = (chunk: Uint8Array) => {
        this.out.push(chunk);
      };
      this.streams[id] = d;
    }
    this.out = [];
    d.push(data, Z_SYNC_FLUSH);
    if (d.err) throw new Error(`deflate failed: ${d.msg}`);
    const w = new ByteWriter();
    for (const c of this.out) w.bytes(c);
    return w.toBytes();
  }

  /** Start stream `id` afresh (the server then sets that stream's reset bit). */
  reset(id: number): void {
    this.streams[id] = null;
  }
}

/** The compression-control byte: high nibble `mode`, low nibble the streams to reset. */
export function tightControl(mode: number, resetMask = 0): number {
  return ((mode & 0xf) << 4) | (resetMask & 0xf);
}

/** A FillCompression rectangle. */
export function tightFill(rgb: Rgb, opts: { reset?: number } = {}): Uint8Array {
  return Uint8Array.of(tightControl(0x8, opts.reset), ...rgb);
}

function imageRect(mode: number, data: Uint8Array, reset = 0): Uint8Array {
  return new ByteWriter().u8(tightControl(mode, reset)).bytes(compactLength(data.length)).bytes(data).toBytes();
}

/** A JpegCompression rectangle around JFIF bytes. */
export function tightJpeg(jpeg: Uint8Array, opts: { reset?: number } = {}): Uint8Array {
  return imageRect(0x9, jpeg, opts.reset);
}

/** A TightPNG PngCompression rectangle around PNG bytes. */
export function tightPng(png: Uint8Array, opts: { reset?: number } = {}): Uint8Array {
  return imageRect(0xa, png, opts.reset);
}

/** What a BasicCompression rectangle holds. */
export interface TightBasicOptions {
  width: number;
  height: number;
  /** zlib stream 0..3 (default 0). */
  stream?: number;
  filter: 'copy' | 'palette' | 'gradient';
  /** Send the filter-id byte (default: true, except for 'copy' where the implicit form is default). */
  explicitFilter?: boolean;
  /** Pixel colours for 'copy' and 'gradient'. */
  rgb?: (px: number, py: number) => Rgb;
  /** Palette for 'palette' (1..256 entries). */
  palette?: Rgb[];
  /** Palette index of each pixel for 'palette'. */
  index?: (px: number, py: number) => number;
  /** Streams to reset (low nibble of the control byte). */
  reset?: number;
  /** TurboVNC NoZlib form (mode 0xA / 0xE): the length-prefixed data is not compressed. */
  noZlib?: boolean;
  /** Override the filter-id byte (malformed fixtures). */
  filterId?: number;
  /** Replace the filtered bytes, still framed by the rectangle's true size (malformed fixtures). */
  filtered?: Uint8Array;
  /** Replace the compressed bytes after the compact length (malformed fixtures). */
  zlib?: Uint8Array;
}

/** Bytes per row of filtered data for these options. */
export function tightRowBytes(o: Pick<TightBasicOptions, 'width' | 'filter' | 'palette'>): number {
  if (o.filter === 'palette') return (o.palette?.length ?? 0) <= 2 ? (o.width + 7) >> 3 : o.width;
  return o.width * 3;
}

/** Gradient-filter residuals of an image, per the spec (V = 0 outside the rectangle). */
export function gradientResiduals(width: number, height: number, rgb: (px: number, py: number) => Rgb): Uint8Array {
  const v = (px: number, py: number, c: number) => (px < 0 || py < 0 ? 0 : rgb(px, py)[c]!);
  const out = new Uint8Array(width * height * 3);
  for (let py = 0; py < height; py++) {
    for (let px = 0; px < width; px++) {
      for (let c = 0; c < 3; c++) {
        const p = Math.min(255, Math.max(0, v(px - 1, py, c) + v(px, py - 1, c) - v(px - 1, py - 1, c)));
        out[(py * width + px) * 3 + c] = (v(px, py, c) - p) & 0xff;
      }
    }
  }
  return out;
}

/** The filtered (pre-zlib) bytes of a BasicCompression rectangle. */
export function tightFiltered(o: TightBasicOptions): Uint8Array {
  const { width: w, height: h } = o;
  if (o.filter === 'gradient') return gradientResiduals(w, h, o.rgb!);
  if (o.filter === 'copy') {
    const out = new Uint8Array(w * h * 3);
    for (let py = 0; py < h; py++) for (let px = 0; px < w; px++) out.set(o.rgb!(px, py), (py * w + px) * 3);
    return out;
  }
  const rowBytes = tightRowBytes(o);
  const out = new Uint8Array(rowBytes * h);
  const mono = (o.palette?.length ?? 0) <= 2;
  for (let py = 0; py < h; py++) {
    for (let px = 0; px < w; px++) {
      const i = o.index!(px, py);
      if (mono) {
        const k = py * rowBytes + (px >> 3);
        out[k] = out[k]! | ((i & 1) << (7 - (px & 7)));
      } else out[py * rowBytes + px] = i;
    }
  }
  return out;
}

/** A BasicCompression rectangle (copy, palette or gradient), compressed on `deflaters` when its data is 12 bytes or more. */
export function tightBasic(o: TightBasicOptions, deflaters: TightDeflaters): Uint8Array {
  const stream = o.stream ?? 0;
  const explicit = o.explicitFilter ?? o.filter !== 'copy';
  const mode = o.noZlib ? (explicit ? 0xe : 0xa) : (stream & 3) | (explicit ? 0x4 : 0);
  const w = new ByteWriter().u8(tightControl(mode, o.reset));
  if (explicit) w.u8(o.filterId ?? { copy: 0, palette: 1, gradient: 2 }[o.filter]);
  if (o.filter === 'palette') {
    const pal = o.palette!;
    w.u8(pal.length - 1);
    for (const c of pal) w.bytes(c);
  }
  const size = tightRowBytes(o) * o.height;
  const filtered = o.filtered ?? tightFiltered(o);
  if (size < 12) return w.bytes(filtered).toBytes();
  const body = o.zlib ?? (o.noZlib ? filtered : deflaters.compress(stream, filtered));
  return w.bytes(compactLength(body.length)).bytes(body).toBytes();
}

/**
 * A gradient-filtered rectangle as QEMU's send_gradient_rect writes it (also under TightPNG, with
 * lossy=on): control byte (stream 3 | explicit filter) << 4, filter id 2, zlib data on stream 3.
 */
export function qemuGradientRect(o: Omit<TightBasicOptions, 'filter' | 'stream' | 'explicitFilter'>, deflaters: TightDeflaters): Uint8Array {
  return tightBasic({ ...o, filter: 'gradient', stream: 3, explicitFilter: true }, deflaters);
}
