/**
 * Tight decode benchmark: a 1280x800 mostly-flat web page (header bar, sidebar, text
 * paragraphs, buttons, a photo) encoded into Tight rectangles the way a server would
 * (split to at most 2048 wide and 65536 pixels; solid -> fill, 2 colours -> mono palette,
 * up to 256 -> indexed palette, more -> gradient for the photo or copy elsewhere; streams
 * 0 copy, 1 mono, 2 indexed, 3 gradient), then decoded 20 times into a fresh Framebuffer.
 * Prints the median decode time, fed whole and in 64 KiB chunks as a WebSocket delivers it.
 *
 * Run: npx tsx bench/tight-decode.ts
 */
import { performance } from 'node:perf_hooks';
import { ByteQueue } from '../harness/rfb/bytes.ts';
import { Framebuffer } from '../harness/rfb/framebuffer.ts';
import { InflateStream } from '../harness/rfb/zlib.ts';
import { tightEncoding } from '../harness/rfb/encodings/tight.ts';
import type { DecodeContext, RectHeader } from '../harness/rfb/encodings/types.ts';
import { type Rgb, TightDeflaters, tightBasic, tightFill } from '../harness/rfb/test-helpers/fixtures-tight.ts';
import { mulberry32 } from '../harness/prng.ts';

const W = 1280;
const H = 800;
const RUNS = 20;

/** The page, as R,G,B bytes. */
function renderPage(): Uint8Array {
  const img = new Uint8Array(W * H * 3);
  const rect = (x: number, y: number, w: number, h: number, c: Rgb) => {
    for (let py = y; py < y + h; py++) for (let px = x; px < x + w; px++) img.set(c, (py * W + px) * 3);
  };
  const rand = mulberry32(42);
  /** A line of pseudo-glyphs: `levels` colours blended from fg to bg (2 = crisp, more = antialiased). */
  const textLine = (x: number, y: number, w: number, fg: Rgb, bg: Rgb, levels: number) => {
    for (let gx = x; gx + 8 <= x + w; gx += 8) {
      if (rand() < 0.15) continue; // a space
      for (let py = 2; py < 14; py++) {
        for (let px = 1; px < 7; px++) {
          if (rand() < 0.55) continue;
          const k = levels === 2 ? 1 : (1 + Math.floor(rand() * (levels - 1))) / (levels - 1);
          const c: Rgb = [0, 1, 2].map((i) => Math.round(bg[i]! + (fg[i]! - bg[i]!) * k)) as Rgb;
          img.set(c, ((y + py) * W + gx + px) * 3);
        }
      }
    }
  };
  const page: Rgb = [250, 250, 250];
  rect(0, 0, W, H, page);
  rect(0, 0, W, 64, [32, 90, 200]); // header bar
  textLine(24, 24, 300, [255, 255, 255], [32, 90, 200], 2);
  rect(0, 64, 240, H - 64, [240, 240, 245]); // sidebar
  for (let i = 0; i < 12; i++) textLine(20, 90 + i * 36, 160, [40, 40, 60], [240, 240, 245], 2);
  for (let p = 0; p < 4; p++) {
    // paragraphs of antialiased text in the main column
    for (let l = 0; l < 7; l++) textLine(280, 100 + p * 170 + l * 20, 540, [20, 20, 20], page, 8);
  }
  for (let b = 0; b < 3; b++) {
    rect(280 + b * 140, 740, 120, 36, [46, 160, 90]); // buttons
    textLine(296 + b * 140, 750, 88, [255, 255, 255], [46, 160, 90], 2);
  }
  const noise = mulberry32(7);
  for (let py = 0; py < 300; py++) {
    for (let px = 0; px < 400; px++) {
      const n = Math.floor(noise() * 12) - 6;
      const c: Rgb = [
        Math.max(0, Math.min(255, 80 + (px * 150) / 400 + n)),
        Math.max(0, Math.min(255, 120 + 60 * Math.sin(py / 40) + n)),
        Math.max(0, Math.min(255, 200 - (py * 120) / 300 + n)),
      ].map(Math.round) as Rgb;
      img.set(c, ((100 + py) * W + 860 + px) * 3);
    }
  }
  return img;
}

/** Regions a server would send for a full update, before splitting. */
const REGIONS: Array<{ x: number; y: number; w: number; h: number; photo?: boolean }> = [
  { x: 0, y: 0, w: W, h: 64 },
  { x: 0, y: 64, w: 240, h: H - 64 },
  { x: 240, y: 64, w: 620, h: 676 },
  { x: 860, y: 64, w: 420, h: 36 },
  { x: 860, y: 100, w: 400, h: 300, photo: true },
  { x: 1260, y: 100, w: 20, h: 300 },
  { x: 860, y: 400, w: 420, h: 400 },
  { x: 240, y: 740, w: 620, h: 60 },
];

function encodeFrame(img: Uint8Array): { rects: Array<{ rect: RectHeader; payload: Uint8Array }>; kinds: Record<string, number> } {
  const z = new TightDeflaters(6);
  const rects: Array<{ rect: RectHeader; payload: Uint8Array }> = [];
  const kinds: Record<string, number> = {};
  const px = (x: number, y: number): Rgb => {
    const o = (y * W + x) * 3;
    return [img[o]!, img[o + 1]!, img[o + 2]!];
  };
  for (const r of REGIONS) {
    const rowsPer = Math.max(1, Math.floor(65536 / r.w));
    for (let y0 = r.y; y0 < r.y + r.h; y0 += rowsPer) {
      const h = Math.min(rowsPer, r.y + r.h - y0);
      const colours = new Map<number, number>();
      for (let y = y0; y < y0 + h && colours.size <= 256; y++) {
        for (let x = r.x; x < r.x + r.w; x++) {
          const [cr, cg, cb] = px(x, y);
          const key = (cr << 16) | (cg << 8) | cb;
          if (!colours.has(key)) colours.set(key, colours.size);
          if (colours.size > 256) break;
        }
      }
      const at = (fx: number, fy: number) => px(r.x + fx, y0 + fy);
      const index = (fx: number, fy: number) => {
        const [cr, cg, cb] = at(fx, fy);
        return colours.get((cr << 16) | (cg << 8) | cb)!;
      };
      const palette = [...colours.keys()].map((k): Rgb => [k >> 16, (k >> 8) & 255, k & 255]);
      let payload: Uint8Array;
      let kind: string;
      if (colours.size === 1) {
        payload = tightFill(palette[0]!);
        kind = 'fill';
      } else if (colours.size <= 256) {
        payload = tightBasic({ width: r.w, height: h, filter: 'palette', palette, index, stream: colours.size === 2 ? 1 : 2 }, z);
        kind = colours.size === 2 ? 'mono' : 'indexed';
      } else if (r.photo) {
        payload = tightBasic({ width: r.w, height: h, filter: 'gradient', rgb: at, stream: 3 }, z);
        kind = 'gradient';
      } else {
        payload = tightBasic({ width: r.w, height: h, filter: 'copy', rgb: at, stream: 0 }, z);
        kind = 'copy';
      }
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      rects.push({ rect: { x: r.x, y: y0, width: r.w, height: h, encoding: tightEncoding.id }, payload });
    }
  }
  return { rects, kinds };
}

function freshContext(): DecodeContext & { fb: Framebuffer } {
  const fb = new Framebuffer(W, H);
  return {
    fb,
    sink: fb,
    width: W,
    height: H,
    zrleStream: new InflateStream('ZRLE'),
    tightStreams: [new InflateStream('Tight0'), new InflateStream('Tight1'), new InflateStream('Tight2'), new InflateStream('Tight3')],
  };
}

/** Decode every rect from `chunks`, as the protocol core does. Returns milliseconds. */
function decodeOnce(ctx: DecodeContext, rects: Array<{ rect: RectHeader }>, chunks: Uint8Array[]): number {
  const t0 = performance.now();
  const q = new ByteQueue();
  let i = 0;
  let dec = tightEncoding.create(rects[0]!.rect, ctx);
  for (const c of chunks) {
    q.push(c);
    while (i < rects.length && dec.decode(q)) {
      i++;
      if (i < rects.length) dec = tightEncoding.create(rects[i]!.rect, ctx);
    }
  }
  const ms = performance.now() - t0;
  if (i !== rects.length || q.available !== 0) throw new Error(`decoded ${i}/${rects.length} rects, ${q.available} bytes left`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const img = renderPage();
const { rects, kinds } = encodeFrame(img);
const total = rects.reduce((n, r) => n + r.payload.length, 0);
const all = new Uint8Array(total);
let off = 0;
for (const r of rects) {
  all.set(r.payload, off);
  off += r.payload.length;
}
const whole = [all];
const chunked: Uint8Array[] = [];
for (let o = 0; o < total; o += 65536) chunked.push(all.slice(o, o + 65536));

// Correctness: the decoded frame must equal the page exactly (every filter here is lossless).
{
  const ctx = freshContext();
  decodeOnce(ctx, rects, chunked);
  for (let p = 0; p < W * H; p++) {
    if (ctx.fb.data[p * 4] !== img[p * 3] || ctx.fb.data[p * 4 + 1] !== img[p * 3 + 1] || ctx.fb.data[p * 4 + 2] !== img[p * 3 + 2]) {
      throw new Error(`decoded pixel (${p % W},${Math.floor(p / W)}) differs from the page`);
    }
  }
}

const results: Record<string, number[]> = { whole: [], '64KiB chunks': [] };
for (let run = 0; run < RUNS + 2; run++) {
  for (const [name, chunks] of [
    ['whole', whole],
    ['64KiB chunks', chunked],
  ] as const) {
    const ctx = freshContext();
    const ms = decodeOnce(ctx, rects, chunks);
    if (run >= 2) results[name]!.push(ms); // first two runs warm the JIT
  }
}

console.log(
  `Tight decode, ${W}x${H} page: ${rects.length} rects (${Object.entries(kinds)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ')}), ${(total / 1024).toFixed(1)} KiB on the wire`,
);
for (const [name, xs] of Object.entries(results)) {
  console.log(`  fed ${name.padEnd(13)} median ${median(xs).toFixed(2)} ms  (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}, ${RUNS} runs)`);
}
