/**
 * The decoder shared by Tight (encoding 7) and TightPNG (encoding -260), per the
 * rfbproto community specification ("Tight Encoding", "Tight PNG Encoding").
 *
 *   +-------------------------+
 *   | U8 compression-control  |  bits 0..3: reset zlib stream 0..3 BEFORE this rectangle
 *   +-------------------------+            (even for fill, JPEG and PNG rectangles)
 *                               bits 4..7 (the "mode"):
 *     1000 (0x8) FillCompression:  TPIXEL                        one colour for the whole rect
 *     1001 (0x9) JpegCompression:  compact length n, U8[n]       a JFIF image of exactly w x h
 *     1010 (0xA) TightPNG:         PngCompression: compact length n, U8[n]   a PNG of w x h
 *                Tight:            BasicCompression without zlib (TurboVNC/libvncserver "NoZlib",
 *     1110 (0xE) Tight:            same, with a filter-id byte)   see below
 *     0xxx       BasicCompression (Tight; TightPNG too, although its spec forbids it: QEMU
 *                sends gradient-filtered rectangles under TightPNG with lossy=on):
 *                  bits 4..5 = zlib stream id, bit 6 (mode & 0x4) = a filter-id byte follows
 *     other      invalid (RFB_ERR_DECODE)
 *
 *   BasicCompression:
 *     [U8 filter-id]        only if bit 6 is set: 0 copy, 1 palette, 2 gradient (else copy)
 *     palette filter only:  U8 (colours - 1), TPIXEL[colours]
 *     data:                 the filtered pixels, rows of
 *                             copy / gradient: TPIXEL[w]            (3w bytes)
 *                             palette, 2 colours: 1 bit per pixel, MSB = leftmost,
 *                                                 each row padded to a byte (ceil(w/8) bytes)
 *                             palette, 3..256:    U8 index per pixel (w bytes)
 *                           if that size (rowBytes * h) is < 12 it is sent as is; otherwise
 *                           compact length n, then U8[n] of zlib data on the chosen stream
 *                           (persistent across rectangles, sync-flushed) inflating to it.
 *                           NoZlib: compact length n, then the n filtered bytes themselves.
 *
 *   TPIXEL: 3 bytes R, G, B (our pixel format is 32 bpp, depth 24, 8 bits per channel).
 *   compact length: 1..3 bytes, 7 bits each, least significant first, the top bit of the
 *   first two bytes meaning "another byte follows"; the third byte carries 8 bits:
 *     0xxxxxxx | 1xxxxxxx 0yyyyyyy | 1xxxxxxx 1yyyyyyy zzzzzzzz   (max 4194303)
 *   gradient filter: per colour component, with V = 0 outside the rectangle,
 *     P = clamp(V[left] + V[above] - V[above-left], 0, 255);  V = (D + P) mod 256
 *   Basic rectangles are at most 2048 pixels wide (spec); wider ones are RFB_ERR_DECODE.
 *
 * Choices where the spec is silent:
 *  - A palette index past the palette is RFB_ERR_DECODE. TigerVNC does not check it (it
 *    reads an uninitialised palette slot), so there is no behaviour to stay compatible with.
 *  - A 1-colour palette is accepted (TigerVNC does) and drawn 1 bit per pixel; a set bit is
 *    then an index past the palette.
 *  - Mode 0xA/0xE in Tight is TurboVNC's NoZlib, which libvncserver (x11vnc) sends at
 *    compression level 0; its length must equal the filtered size. Not in the community spec.
 *  - A JPEG/PNG of length 0 is RFB_ERR_DECODE (as TigerVNC and libvncclient). A JPEG/PNG whose
 *    decoded size differs from the rectangle is reported by the sink (Framebuffer.onError).
 *
 * Resumable: decode() peeks the whole rectangle (control byte, filter, palette, length and
 * data) and consumes it in one go only once all of it has arrived, so a zlib stream sees each
 * blob exactly once and no state spans calls. Pixels are expanded into a small module-level
 * band buffer (safe: it is only used inside one synchronous decode() call) and blitted.
 */
import { VncuaError } from '../../errors.ts';
import type { ByteQueue } from '../bytes.ts';
import { packRgb } from '../sink.ts';
import type { DecodeContext, RectDecoder, RectHeader } from './types.ts';
import { assertInBounds } from './types.ts';

/** Which of the two encodings a decoder speaks. */
export type TightVariant = 'tight' | 'tightpng';

const MODE_FILL = 0x8;
const MODE_JPEG = 0x9;
const MODE_PNG_OR_NOZLIB = 0xa;
const MODE_NOZLIB_FILTER = 0xe;
const FILTER_COPY = 0;
const FILTER_PALETTE = 1;
const FILTER_GRADIENT = 2;
/** Filtered data shorter than this is sent without zlib. */
export const TIGHT_MIN_TO_COMPRESS = 12;
/** Widest BasicCompression rectangle the spec allows. */
export const TIGHT_MAX_WIDTH = 2048;

/** Band buffer: 64 Ki pixels of RGBA (256 KiB), i.e. at least 32 rows of a 2048-wide rect. */
const BAND_PIXELS = 64 * 1024;
const band8 = new Uint8Array(BAND_PIXELS * 4);
const band32 = new Uint32Array(band8.buffer);
/** Packed RGBA palette of the rectangle being drawn. */
const palette32 = new Uint32Array(256);
/** The previous row's R,G,B for the gradient filter. */
const gradientRow = new Uint8Array(TIGHT_MAX_WIDTH * 3);

/**
 * Peek a compact length `offset` bytes ahead. Returns -1 if its bytes have not all arrived,
 * else (length * 4 + number of length bytes).
 */
export function peekCompactLength(q: ByteQueue, offset: number): number {
  if (!q.has(offset + 1)) return -1;
  const b0 = q.peekU8(offset);
  if ((b0 & 0x80) === 0) return (b0 << 2) | 1;
  if (!q.has(offset + 2)) return -1;
  const b1 = q.peekU8(offset + 1);
  if ((b1 & 0x80) === 0) return (((b0 & 0x7f) | (b1 << 7)) << 2) | 2;
  if (!q.has(offset + 3)) return -1;
  const b2 = q.peekU8(offset + 2);
  return (((b0 & 0x7f) | ((b1 & 0x7f) << 7) | (b2 << 14)) << 2) | 3;
}

function decodeError(message: string, details: Record<string, unknown>): VncuaError {
  return new VncuaError('RFB_ERR_DECODE', message, { details });
}

/** One Tight or TightPNG rectangle. */
export class TightRectDecoder implements RectDecoder {
  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
    private readonly variant: TightVariant,
  ) {}

  private get label(): string {
    return this.variant === 'tight' ? 'Tight' : 'TightPNG';
  }

  decode(q: ByteQueue): boolean {
    if (!q.has(1)) return false;
    const ctl = q.peekU8(0);
    const mode = ctl >> 4;
    if (mode === MODE_FILL) return this.decodeFill(q, ctl);
    if (mode === MODE_JPEG) return this.decodeImage(q, ctl, 'jpeg');
    if (this.variant === 'tightpng') {
      if (mode === MODE_PNG_OR_NOZLIB) return this.decodeImage(q, ctl, 'png');
      // The spec forbids BasicCompression here, but QEMU sends gradient-filtered rectangles under
      // TightPNG when lossy=on (its send_gradient_rect has no PNG path): decode them as Tight does.
      if (mode < MODE_FILL) return this.decodeBasic(q, ctl, mode & 0x3, (mode & 0x4) !== 0, false);
      throw decodeError(`TightPNG control byte 0x${ctl.toString(16)} names no compression type (0x8 fill, 0x9 JPEG, 0xA PNG)`, { ctl, rect: this.rect });
    }
    if (mode < MODE_FILL) return this.decodeBasic(q, ctl, mode & 0x3, (mode & 0x4) !== 0, false);
    if (mode === MODE_PNG_OR_NOZLIB || mode === MODE_NOZLIB_FILTER) return this.decodeBasic(q, ctl, 0, mode === MODE_NOZLIB_FILTER, true);
    throw decodeError(`Tight control byte 0x${ctl.toString(16)} names no compression type (0x0-0x7 basic, 0x8 fill, 0x9 JPEG)`, { ctl, rect: this.rect });
  }

  /** Count a decoded rectangle of `kind` (DecodeContext.tightKinds). */
  private counted(kind: string): true {
    const k = this.ctx.tightKinds;
    if (k) k.set(kind, (k.get(kind) ?? 0) + 1);
    return true;
  }

  /** Reset the zlib streams whose bits are set in the control byte. */
  private resetStreams(ctl: number): void {
    for (let i = 0; i < 4; i++) if (ctl & (1 << i)) this.ctx.tightStreams[i as 0 | 1 | 2 | 3].reset();
  }

  private decodeFill(q: ByteQueue, ctl: number): boolean {
    if (!q.has(4)) return false;
    q.skip(1);
    this.resetStreams(ctl);
    const r = q.u8();
    const g = q.u8();
    const b = q.u8();
    const { x, y, width, height } = this.rect;
    if (width > 0 && height > 0) this.ctx.sink.fill(x, y, width, height, packRgb(r, g, b));
    return this.counted('fill');
  }

  private decodeImage(q: ByteQueue, ctl: number, format: 'jpeg' | 'png'): boolean {
    const compact = peekCompactLength(q, 1);
    if (compact < 0) return false;
    const len = compact >>> 2;
    const head = 1 + (compact & 3);
    if (len === 0) throw decodeError(`${this.label} ${format.toUpperCase()} rectangle has an empty image`, { ctl, rect: this.rect });
    if (!q.has(head + len)) return false;
    q.skip(head);
    this.resetStreams(ctl);
    const data = q.readBytes(len);
    const { x, y, width, height } = this.rect;
    if (width > 0 && height > 0) this.ctx.sink.image(x, y, width, height, format, data);
    return this.counted(format);
  }

  private decodeBasic(q: ByteQueue, ctl: number, streamId: number, explicitFilter: boolean, noZlib: boolean): boolean {
    const { width: w, height: h } = this.rect;
    if (w > TIGHT_MAX_WIDTH) {
      throw decodeError(`Tight BasicCompression rectangle is ${w} pixels wide; the spec allows at most ${TIGHT_MAX_WIDTH}`, { ctl, rect: this.rect });
    }
    let off = 1;
    let filter = FILTER_COPY;
    if (explicitFilter) {
      if (!q.has(2)) return false;
      filter = q.peekU8(1);
      off = 2;
      if (filter > FILTER_GRADIENT) throw decodeError(`Tight filter id ${filter} is unknown (0 copy, 1 palette, 2 gradient)`, { ctl, filter, rect: this.rect });
    }
    let colours = 0;
    let paletteOff = 0;
    if (filter === FILTER_PALETTE) {
      if (!q.has(off + 1)) return false;
      colours = q.peekU8(off) + 1;
      paletteOff = off + 1;
      off = paletteOff + colours * 3;
      if (!q.has(off)) return false;
    }
    const rowBytes = filter === FILTER_PALETTE ? (colours <= 2 ? (w + 7) >> 3 : w) : w * 3;
    const size = rowBytes * h;

    let data: Uint8Array;
    if (size < TIGHT_MIN_TO_COMPRESS) {
      if (!q.has(off + size)) return false;
      this.loadPalette(q, paletteOff, colours);
      q.skip(off);
      this.resetStreams(ctl);
      data = q.readBytes(size);
    } else {
      const compact = peekCompactLength(q, off);
      if (compact < 0) return false;
      const len = compact >>> 2;
      const head = off + (compact & 3);
      if (!q.has(head + len)) return false;
      this.loadPalette(q, paletteOff, colours);
      q.skip(head);
      this.resetStreams(ctl);
      const blob = q.readBytes(len);
      if (noZlib) {
        if (len !== size) throw decodeError(`Tight NoZlib rectangle carries ${len} bytes, expected ${size}`, { ctl, rect: this.rect });
        data = blob;
      } else {
        data = this.ctx.tightStreams[streamId as 0 | 1 | 2 | 3].inflate(blob, size);
      }
    }

    const kind = filter === FILTER_PALETTE ? 'palette' : filter === FILTER_GRADIENT ? 'gradient' : 'copy';
    if (w === 0 || h === 0) return this.counted(kind);
    if (filter === FILTER_PALETTE) {
      if (colours <= 2) this.drawMono(data, colours, rowBytes);
      else this.drawIndexed(data, colours);
    } else if (filter === FILTER_GRADIENT) {
      this.drawGradient(data);
    } else {
      this.ctx.sink.blit(this.rect.x, this.rect.y, w, h, data, 0, rowBytes, 3);
    }
    return this.counted(kind);
  }

  /** Copy `colours` TPIXELs at `offset` into palette32 (still unconsumed in the queue). */
  private loadPalette(q: ByteQueue, offset: number, colours: number): void {
    if (colours === 0) return;
    const p = q.peekBytes(colours * 3, offset);
    for (let i = 0, s = 0; i < colours; i++, s += 3) palette32[i] = packRgb(p[s]!, p[s + 1]!, p[s + 2]!);
  }

  private paletteIndexError(index: number, colours: number): VncuaError {
    return decodeError(`Tight palette index ${index} is past the ${colours}-colour palette`, { index, colours, rect: this.rect });
  }

  /** 1 bit per pixel, MSB first, rows padded to a byte. */
  private drawMono(data: Uint8Array, colours: number, rowBytes: number): void {
    const { x, y, width: w, height: h } = this.rect;
    const c0 = palette32[0]!;
    const c1 = colours === 2 ? palette32[1]! : c0;
    const fullBytes = w >> 3;
    const tailBits = w & 7;
    const rowsPerBand = Math.max(1, Math.floor(BAND_PIXELS / w));
    const out = band32;
    for (let row0 = 0; row0 < h; row0 += rowsPerBand) {
      const rows = Math.min(rowsPerBand, h - row0);
      let o = 0;
      for (let r = 0; r < rows; r++) {
        let s = (row0 + r) * rowBytes;
        for (let i = 0; i < fullBytes; i++) {
          const bits = data[s++]!;
          if (colours === 1 && bits !== 0) throw this.paletteIndexError(1, colours);
          out[o] = bits & 0x80 ? c1 : c0;
          out[o + 1] = bits & 0x40 ? c1 : c0;
          out[o + 2] = bits & 0x20 ? c1 : c0;
          out[o + 3] = bits & 0x10 ? c1 : c0;
          out[o + 4] = bits & 0x08 ? c1 : c0;
          out[o + 5] = bits & 0x04 ? c1 : c0;
          out[o + 6] = bits & 0x02 ? c1 : c0;
          out[o + 7] = bits & 0x01 ? c1 : c0;
          o += 8;
        }
        if (tailBits !== 0) {
          const bits = data[s]!;
          for (let b = 7; b > 7 - tailBits; b--) {
            const bit = (bits >> b) & 1;
            if (bit >= colours) throw this.paletteIndexError(bit, colours);
            out[o++] = bit ? c1 : c0;
          }
        }
      }
      this.ctx.sink.blit(x, y + row0, w, rows, band8, 0, w * 4, 4);
    }
  }

  /** One index byte per pixel. */
  private drawIndexed(data: Uint8Array, colours: number): void {
    const { x, y, width: w, height: h } = this.rect;
    const rowsPerBand = Math.max(1, Math.floor(BAND_PIXELS / w));
    const out = band32;
    const pal = palette32;
    let s = 0;
    for (let row0 = 0; row0 < h; row0 += rowsPerBand) {
      const rows = Math.min(rowsPerBand, h - row0);
      const n = rows * w;
      for (let o = 0; o < n; o++) {
        const idx = data[s++]!;
        if (idx >= colours) throw this.paletteIndexError(idx, colours);
        out[o] = pal[idx]!;
      }
      this.ctx.sink.blit(x, y + row0, w, rows, band8, 0, w * 4, 4);
    }
  }

  /** Undo the gradient filter: V = (D + clamp(left + above - aboveLeft)) mod 256, per component. */
  private drawGradient(data: Uint8Array): void {
    const { x, y, width: w, height: h } = this.rect;
    const rowsPerBand = Math.max(1, Math.floor(BAND_PIXELS / w));
    const prev = gradientRow;
    prev.fill(0, 0, w * 3);
    const out = band8;
    let s = 0;
    for (let row0 = 0; row0 < h; row0 += rowsPerBand) {
      const rows = Math.min(rowsPerBand, h - row0);
      let o = 0;
      for (let r = 0; r < rows; r++) {
        let l0 = 0,
          l1 = 0,
          l2 = 0; // left
        let ul0 = 0,
          ul1 = 0,
          ul2 = 0; // above-left
        for (let p = 0; p < w * 3; p += 3, s += 3, o += 4) {
          const u0 = prev[p]!,
            u1 = prev[p + 1]!,
            u2 = prev[p + 2]!;
          let e0 = l0 + u0 - ul0;
          let e1 = l1 + u1 - ul1;
          let e2 = l2 + u2 - ul2;
          // Clamped with compares, not Math.min/max: this is the per-pixel hot loop of the gradient filter.
          // biome-ignore lint/complexity/useMathMinMax: hot loop
          e0 = e0 < 0 ? 0 : e0 > 255 ? 255 : e0;
          // biome-ignore lint/complexity/useMathMinMax: hot loop
          e1 = e1 < 0 ? 0 : e1 > 255 ? 255 : e1;
          // biome-ignore lint/complexity/useMathMinMax: hot loop
          e2 = e2 < 0 ? 0 : e2 > 255 ? 255 : e2;
          l0 = (data[s]! + e0) & 0xff;
          l1 = (data[s + 1]! + e1) & 0xff;
          l2 = (data[s + 2]! + e2) & 0xff;
          ul0 = u0;
          ul1 = u1;
          ul2 = u2;
          prev[p] = l0;
          prev[p + 1] = l1;
          prev[p + 2] = l2;
          out[o] = l0;
          out[o + 1] = l1;
          out[o + 2] = l2;
          out[o + 3] = 255;
        }
      }
      this.ctx.sink.blit(x, y + row0, w, rows, out, 0, w * 4, 4);
    }
  }
}

/** Create the decoder for one rectangle after checking it lies inside the framebuffer. */
export function createTightDecoder(rect: RectHeader, ctx: DecodeContext, variant: TightVariant): RectDecoder {
  assertInBounds(rect, ctx, variant === 'tight' ? 'Tight' : 'TightPNG');
  return new TightRectDecoder(rect, ctx, variant);
}
