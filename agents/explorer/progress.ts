/**
 * How the explorer tells progress, from the screen and the DOM, with pure functions over RGBA frames:
 * a grid of grey means (and contrast) over a downscaled frame, a difference hash (dHash) of it with a Hamming
 * tolerance, the grid cells that changed between two frames, and the states reached (a URL and a frame, up to the
 * hash's tolerance). No I/O: the loop feeds it the framebuffer it already holds.
 */

/** An RGBA frame (4 bytes a pixel, row-major): what harness/rfb's Framebuffer holds. */
export interface RgbaFrame {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A frame reduced to `cols` x `rows` cells: each cell's grey mean (0..255) and its standard deviation. */
export interface GreyGrid {
  cols: number;
  rows: number;
  mean: Float32Array;
  std: Float32Array;
}

/** Pixels sampled per cell along each axis at most (the grid costs the same on any screen size). */
const SAMPLES = 8;

/** Reduce `frame` to a `cols` x `rows` grid of grey means and standard deviations (sampling up to 8x8 pixels a cell). */
export function greyGrid(frame: RgbaFrame, cols: number, rows: number): GreyGrid {
  const { width, height, data } = frame;
  const mean = new Float32Array(cols * rows);
  const std = new Float32Array(cols * rows);
  for (let r = 0; r < rows; r++) {
    const y0 = Math.floor((r * height) / rows);
    const y1 = Math.max(y0 + 1, Math.floor(((r + 1) * height) / rows));
    const ys = Math.max(1, Math.floor((y1 - y0) / SAMPLES));
    for (let c = 0; c < cols; c++) {
      const x0 = Math.floor((c * width) / cols);
      const x1 = Math.max(x0 + 1, Math.floor(((c + 1) * width) / cols));
      const xs = Math.max(1, Math.floor((x1 - x0) / SAMPLES));
      let sum = 0;
      let sq = 0;
      let n = 0;
      for (let y = y0; y < y1 && y < height; y += ys) {
        let i = (y * width + x0) * 4;
        for (let x = x0; x < x1 && x < width; x += xs, i += xs * 4) {
          const g = (data[i]! * 77 + data[i + 1]! * 150 + data[i + 2]! * 29) >> 8;
          sum += g;
          sq += g * g;
          n++;
        }
      }
      const m = n ? sum / n : 0;
      mean[r * cols + c] = m;
      std[r * cols + c] = n ? Math.sqrt(Math.max(0, sq / n - m * m)) : 0;
    }
  }
  return { cols, rows, mean, std };
}

/** Width of the dHash grid (17 x 16 cells give 16 x 16 = 256 bits). */
export const HASH_COLS = 17;
/** Height of the dHash grid. */
export const HASH_ROWS = 16;

/** Difference hash of a frame: one bit per horizontally adjacent cell pair of a 17x16 grey grid (left darker than right by more than 1), as 64 hex digits. */
export function frameHash(frame: RgbaFrame): string {
  return gridHash(greyGrid(frame, HASH_COLS, HASH_ROWS));
}

/** The dHash of a grid (see frameHash). */
export function gridHash(g: GreyGrid): string {
  let hex = '';
  let nibble = 0;
  let bits = 0;
  for (let r = 0; r < g.rows; r++) {
    for (let c = 0; c + 1 < g.cols; c++) {
      nibble = (nibble << 1) | (g.mean[r * g.cols + c]! + 1 < g.mean[r * g.cols + c + 1]! ? 1 : 0);
      if (++bits === 4) {
        hex += nibble.toString(16);
        nibble = 0;
        bits = 0;
      }
    }
  }
  if (bits) hex += (nibble << (4 - bits)).toString(16);
  return hex;
}

/** Bits that differ between two hex hashes (a length difference counts 4 bits a digit). */
export function hamming(a: string, b: string): number {
  let d = Math.abs(a.length - b.length) * 4;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    let x = Number.parseInt(a[i]!, 16) ^ Number.parseInt(b[i]!, 16);
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

/** Columns of the changed-region grid: 32 x 20 cells (40 x 40 pixels on a 1280x800 screen). */
export const REGION_COLS = 32;
/** Rows of the changed-region grid. */
export const REGION_ROWS = 20;

/** A cell of the region grid that changed: its column, row and box in screen pixels. */
export interface ChangedRegion {
  col: number;
  row: number;
  box: { x: number; y: number; width: number; height: number };
}

/** Cells whose grey mean moved by more than `threshold` (default 1.5) between two grids of the same shape, on a `width` x `height` screen. */
export function changedRegions(before: GreyGrid, after: GreyGrid, size: { width: number; height: number }, threshold = 1.5): ChangedRegion[] {
  if (before.cols !== after.cols || before.rows !== after.rows) throw new Error('changedRegions: grids of different shapes');
  const out: ChangedRegion[] = [];
  const cw = size.width / after.cols;
  const ch = size.height / after.rows;
  for (let r = 0; r < after.rows; r++) {
    for (let c = 0; c < after.cols; c++) {
      const i = r * after.cols + c;
      if (Math.abs(before.mean[i]! - after.mean[i]!) > threshold) {
        out.push({ col: c, row: r, box: { x: Math.round(c * cw), y: Math.round(r * ch), width: Math.round(cw), height: Math.round(ch) } });
      }
    }
  }
  return out;
}

/** A state as the tracker keeps it. */
export interface TrackedState {
  /** url + '#' + the hash it was first seen with. */
  key: string;
  url: string | null;
  frameHash: string;
  firstStep: number;
  visits: number;
}

/** Default Hamming tolerance between two frames of the same state (of 256 bits). */
export const DEFAULT_HASH_TOLERANCE = 6;

/**
 * The distinct states reached: a state is a URL and a frame hash; a frame within `tolerance` bits of a known state's
 * hash on the same URL is that state. Matching picks the nearest known hash (ties: the first seen), so the answer
 * depends only on the sequence of visits.
 */
export class StateTracker {
  readonly #states: TrackedState[] = [];
  readonly #byUrl = new Map<string, TrackedState[]>();

  constructor(readonly tolerance = DEFAULT_HASH_TOLERANCE) {}

  /** Record a visit at `step`: the state matched (visits + 1) or the new one, and whether it is new. */
  visit(url: string | null, hash: string, step: number): { state: TrackedState; isNew: boolean } {
    const list = this.#byUrl.get(url ?? '') ?? [];
    let best: TrackedState | null = null;
    let bestD = Number.POSITIVE_INFINITY;
    for (const s of list) {
      const d = hamming(s.frameHash, hash);
      if (d < bestD) {
        best = s;
        bestD = d;
      }
    }
    if (best && bestD <= this.tolerance) {
      best.visits++;
      return { state: best, isNew: false };
    }
    const state: TrackedState = { key: `${url ?? ''}#${hash}`, url, frameHash: hash, firstStep: step, visits: 1 };
    list.push(state);
    this.#byUrl.set(url ?? '', list);
    this.#states.push(state);
    return { state, isNew: true };
  }

  /** Every state, in the order first reached. */
  get states(): readonly TrackedState[] {
    return this.#states;
  }
}
