/**
 * Ground truth from the X side: run `xwd -root` on a display and parse the XWD
 * file into RGBA, so interop tests can compare a decoded framebuffer pixel for pixel.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** An RGBA image (alpha 255). */
export interface RgbaImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/*
 * XWD file layout (X11 XWDFile.h), all CARD32 in the file's big-endian order:
 *   header_size, file_version (7), pixmap_format (2 = ZPixmap), pixmap_depth,
 *   pixmap_width, pixmap_height, xoffset, byte_order (0 LSBFirst, 1 MSBFirst),
 *   bitmap_unit, bitmap_bit_order, bitmap_pad, bits_per_pixel, bytes_per_line,
 *   visual_class (4 TrueColor, 5 DirectColor), red_mask, green_mask, blue_mask,
 *   bits_per_rgb, colormap_entries, ncolors, window_width, window_height,
 *   window_x, window_y, window_bdrwidth
 *   then the window name up to header_size, then ncolors * 12-byte XWDColor, then pixels.
 */

/** Parse an XWD (ZPixmap, TrueColor, 24/32 bpp) into RGBA. */
export function parseXwd(buf: Uint8Array): RgbaImage {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const f = (i: number) => dv.getUint32(i * 4, false);
  const headerSize = f(0);
  const version = f(1);
  const format = f(2);
  const width = f(4);
  const height = f(5);
  const byteOrder = f(7);
  const bitsPerPixel = f(11);
  const bytesPerLine = f(12);
  const visualClass = f(13);
  const masks = [f(14), f(15), f(16)];
  const ncolors = f(19);
  if (version !== 7 || format !== 2) throw new Error(`unsupported XWD: version ${version}, format ${format}`);
  if (visualClass !== 4 && visualClass !== 5) throw new Error(`unsupported XWD visual class ${visualClass} (need TrueColor)`);
  if (bitsPerPixel !== 32 && bitsPerPixel !== 24) throw new Error(`unsupported XWD bits per pixel ${bitsPerPixel}`);
  const shifts = masks.map((m) => {
    let s = 0;
    while (m !== 0 && ((m >>> s) & 1) === 0) s++;
    return s;
  });
  const pixelsStart = headerSize + ncolors * 12;
  const bpp = bitsPerPixel / 8;
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    let s = pixelsStart + y * bytesPerLine;
    let o = y * width * 4;
    for (let x = 0; x < width; x++, s += bpp, o += 4) {
      let v = 0;
      if (byteOrder === 0) for (let k = bpp - 1; k >= 0; k--) v = v * 256 + buf[s + k]!;
      else for (let k = 0; k < bpp; k++) v = v * 256 + buf[s + k]!;
      data[o] = ((v & masks[0]!) >>> shifts[0]!) & 255;
      data[o + 1] = ((v & masks[1]!) >>> shifts[1]!) & 255;
      data[o + 2] = ((v & masks[2]!) >>> shifts[2]!) & 255;
      data[o + 3] = 255;
    }
  }
  return { width, height, data };
}

/** Capture the root window of an X display with `xwd -root` and parse it (`xauthority`: the display's cookie file, when it has one). */
export async function captureRoot(display: string, xauthority?: string): Promise<RgbaImage> {
  const env = xauthority === undefined ? process.env : { ...process.env, XAUTHORITY: xauthority };
  // xwd walks the root's children (for their colormaps); a window that goes away meanwhile (a Chromium
  // popup or tooltip) makes it fail with BadWindow. That says nothing of the screen: take it again.
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await run('xwd', ['-root', '-silent', '-display', display], { encoding: 'buffer', maxBuffer: 256 * 1024 * 1024, env });
      return parseXwd(new Uint8Array(stdout));
    } catch (e) {
      const stderr = String((e as { stderr?: Buffer | string }).stderr ?? '');
      if (attempt >= 5 || !/BadWindow|BadMatch|BadDrawable/.test(stderr)) throw e;
      await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/** Differences between two RGBA images: count, first few positions, and the largest channel error. */
export function diffImages(a: RgbaImage, b: RgbaImage, tolerance = 0): { count: number; maxError: number; first: Array<{ x: number; y: number; a: number[]; b: number[] }> } {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`size differs: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  let count = 0;
  let maxError = 0;
  const first: Array<{ x: number; y: number; a: number[]; b: number[] }> = [];
  for (let i = 0; i < a.width * a.height; i++) {
    const o = i * 4;
    const e = Math.max(Math.abs(a.data[o]! - b.data[o]!), Math.abs(a.data[o + 1]! - b.data[o + 1]!), Math.abs(a.data[o + 2]! - b.data[o + 2]!));
    if (e > maxError) maxError = e;
    if (e > tolerance) {
      count++;
      if (first.length < 5) first.push({ x: i % a.width, y: Math.floor(i / a.width), a: [...a.data.subarray(o, o + 3)], b: [...b.data.subarray(o, o + 3)] });
    }
  }
  return { count, maxError, first };
}
