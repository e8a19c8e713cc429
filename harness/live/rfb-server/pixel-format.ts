/**
 * Writing Framebuffer pixels (RGBA bytes, alpha ignored) in the pixel format a watcher asked for
 * (RFC 6143 §7.4). noVNC asks for 32 bpp, depth 24, little-endian true colour with red at shift 0,
 * green 8, blue 16: exactly the Framebuffer's byte order, so those rows are copied as they are (the
 * alpha byte goes out as the padding byte). Any other 32 bpp true-colour format (other shifts, maxima,
 * big-endian) is converted pixel by pixel through per-channel tables. Anything else (8 or 16 bpp, a
 * colour map) is refused with LIVE_ERR_PIXEL_FORMAT. No I/O here.
 */
import { VncuaError } from '../../errors.ts';
import { CLIENT_PIXEL_FORMAT, type PixelFormat } from '../../rfb/client-messages.ts';
import { describePixelFormat } from '../../rfb/client-stream.ts';

/** The pixel format the endpoint announces in ServerInit: the Framebuffer's own (what vncua's client also asks for). */
export const SERVER_PIXEL_FORMAT: Readonly<PixelFormat> = CLIENT_PIXEL_FORMAT;

/** Bytes a pixel takes on the wire in every format the endpoint serves. */
export const BYTES_PER_PIXEL = 4;

/** Writes RGBA pixels in one watcher's pixel format. */
export interface PixelWriter {
  /** The format written. */
  readonly format: Readonly<PixelFormat>;
  /** True when rows are copied as they are (the format is the Framebuffer's byte order). */
  readonly copy: boolean;
  /** Write the w x h pixels at (x, y) of `src` (RGBA, `srcWidth` pixels a row) into `out` from `offset`, row after row. */
  rect(src: Uint8Array, srcWidth: number, x: number, y: number, w: number, h: number, out: Uint8Array, offset: number): void;
}

/** Number of bits `max` (2^n - 1) needs. */
const bitsOf = (max: number): number => 32 - Math.clz32(max);

/** A PixelWriter for `pf`, or LIVE_ERR_PIXEL_FORMAT when the endpoint cannot serve it. */
export function pixelWriter(pf: PixelFormat): PixelWriter {
  const refuse = (why: string): never => {
    throw new VncuaError(
      'LIVE_ERR_PIXEL_FORMAT',
      `the watcher asked for pixel format ${describePixelFormat(pf)}, which the live endpoint does not serve (${why}); ask for 32 bpp true colour (noVNC's default does)`,
      { details: { format: { ...pf } } },
    );
  };
  if (!pf.trueColour) refuse('a colour map: only true colour is served');
  if (pf.bitsPerPixel !== 32) refuse(`${pf.bitsPerPixel} bits per pixel: only 32 are served`);
  for (const [name, max, shift] of [
    ['red', pf.redMax, pf.redShift],
    ['green', pf.greenMax, pf.greenShift],
    ['blue', pf.blueMax, pf.blueShift],
  ] as const) {
    if (max < 1 || shift + bitsOf(max) > 32) refuse(`${name} max ${max} at shift ${shift} does not fit in 32 bits`);
  }
  const byteOf = (shift: number): number => (pf.bigEndian ? 3 - shift / 8 : shift / 8);
  const bytewise = pf.redMax === 255 && pf.greenMax === 255 && pf.blueMax === 255 && [pf.redShift, pf.greenShift, pf.blueShift].every((s) => s % 8 === 0);
  if (bytewise && byteOf(pf.redShift) === 0 && byteOf(pf.greenShift) === 1 && byteOf(pf.blueShift) === 2) {
    return { format: { ...pf }, copy: true, rect: copyRect };
  }
  return { format: { ...pf }, copy: false, rect: convertingRect(pf) };
}

/** Rows of RGBA copied as they are: R, G, B at bytes 0, 1, 2; the alpha byte is the padding. */
function copyRect(src: Uint8Array, srcWidth: number, x: number, y: number, w: number, h: number, out: Uint8Array, offset: number): void {
  const rowBytes = w * 4;
  if (x === 0 && w === srcWidth) {
    out.set(src.subarray(y * rowBytes, (y + h) * rowBytes), offset);
    return;
  }
  for (let row = 0; row < h; row++) {
    const s = ((y + row) * srcWidth + x) * 4;
    out.set(src.subarray(s, s + rowBytes), offset + row * rowBytes);
  }
}

/** A converter through per-channel tables: value = R[r] | G[g] | B[b], written in the format's byte order. */
function convertingRect(pf: PixelFormat): PixelWriter['rect'] {
  const table = (max: number, shift: number): Uint32Array => Uint32Array.from({ length: 256 }, (_, c) => (Math.round((c * max) / 255) << shift) >>> 0);
  const tr = table(pf.redMax, pf.redShift);
  const tg = table(pf.greenMax, pf.greenShift);
  const tb = table(pf.blueMax, pf.blueShift);
  const big = pf.bigEndian;
  return (src, srcWidth, x, y, w, h, out, offset) => {
    let o = offset;
    for (let row = 0; row < h; row++) {
      let s = ((y + row) * srcWidth + x) * 4;
      for (let i = 0; i < w; i++, s += 4, o += 4) {
        const v = (tr[src[s]!]! | tg[src[s + 1]!]! | tb[src[s + 2]!]!) >>> 0;
        if (big) {
          out[o] = v >>> 24;
          out[o + 1] = (v >>> 16) & 255;
          out[o + 2] = (v >>> 8) & 255;
          out[o + 3] = v & 255;
        } else {
          out[o] = v & 255;
          out[o + 1] = (v >>> 8) & 255;
          out[o + 2] = (v >>> 16) & 255;
          out[o + 3] = v >>> 24;
        }
      }
    }
  };
}
