/**
 * Blank-screen detection, free of I/O: a frame is blank when (nearly) every pixel has one colour, up to a small
 * per-channel tolerance (anti-aliasing, a one-pixel border, a blinking caret do not make a page "not blank").
 */

/** What isBlankFrame takes: packed pixels, 3 (RGB) or 4 (RGBA / BGRA: the 4th byte is ignored) bytes each. */
export interface FramePixels {
  width: number;
  height: number;
  /** width × height × channels bytes, row-major. */
  data: Uint8Array;
  channels: 3 | 4;
}

/** How isBlankFrame decides. */
export interface BlankOptions {
  /** Largest per-channel difference from the dominant colour still counted as that colour (default 8). */
  tolerance?: number;
  /** Share of pixels that must have the dominant colour (default 0.9995: a page with one short line of text is not blank). */
  share?: number;
  /** Look at every `stride`-th pixel of every `stride`-th row (default: about 40 000 samples). */
  stride?: number;
}

/** The verdict: whether the frame is blank, its dominant colour (#rrggbb) and the share of pixels that have it. */
export interface BlankVerdict {
  blank: boolean;
  colour: string;
  share: number;
}

const hex = (n: number) => n.toString(16).padStart(2, '0');

/** Is the frame (nearly) one colour? The dominant colour is the most frequent of the sampled pixels, quantized to 16 levels a channel. */
export function isBlankFrame(frame: FramePixels, opts: BlankOptions = {}): BlankVerdict {
  const { width, height, data, channels } = frame;
  if (width <= 0 || height <= 0 || data.length < width * height * channels)
    throw new RangeError(`frame of ${width}x${height}x${channels} needs ${width * height * channels} bytes, got ${data.length}`);
  const tolerance = opts.tolerance ?? 8;
  const share = opts.share ?? 0.9995;
  const stride = Math.max(1, opts.stride ?? Math.floor(Math.sqrt((width * height) / 40_000)));
  // Pass 1: the most frequent quantized colour, and the mean of its members as the dominant colour.
  const counts = new Map<number, { n: number; r: number; g: number; b: number }>();
  let samples = 0;
  for (let y = 0; y < height; y += stride) {
    for (let x = 0; x < width; x += stride) {
      const i = (y * width + x) * channels;
      const r = data[i]!;
      const g = data[i + 1]!;
      const b = data[i + 2]!;
      const q = ((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4);
      const c = counts.get(q);
      if (c) {
        c.n++;
        c.r += r;
        c.g += g;
        c.b += b;
      } else counts.set(q, { n: 1, r, g, b });
      samples++;
    }
  }
  let top = { n: 0, r: 0, g: 0, b: 0 };
  for (const c of counts.values()) if (c.n > top.n) top = c;
  const dr = Math.round(top.r / top.n);
  const dg = Math.round(top.g / top.n);
  const db = Math.round(top.b / top.n);
  // Pass 2: the share of sampled pixels within the tolerance of it (a colour split across two buckets still counts).
  let same = 0;
  for (let y = 0; y < height; y += stride) {
    for (let x = 0; x < width; x += stride) {
      const i = (y * width + x) * channels;
      if (Math.abs(data[i]! - dr) <= tolerance && Math.abs(data[i + 1]! - dg) <= tolerance && Math.abs(data[i + 2]! - db) <= tolerance) same++;
    }
  }
  const s = same / samples;
  return { blank: s >= share, colour: `#${hex(dr)}${hex(dg)}${hex(db)}`, share: s };
}
