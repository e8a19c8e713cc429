/**
 * ZRLE decode speed on a realistic 1280x800 frame (desktop background, a window with a
 * gradient title bar, anti-aliased text lines, a photo-like area, toolbar icons), encoded
 * by the test fixture encoder (smallest subencoding per tile, one deflate stream) and
 * decoded into a real Framebuffer. Reports the median of 20 runs (after 5 warm-ups),
 * split into inflate and tile drawing.
 *
 *   npx tsx bench/zrle-decode.ts
 */
import { ByteQueue } from '../harness/rfb/bytes.ts';
import { drawZrleTiles, zrleEncoding } from '../harness/rfb/encodings/zrle.ts';
import { makeContext } from '../harness/rfb/test-helpers/decode.ts';
import { ZrleDeflater, zrleEncodeImage, zrleRect } from '../harness/rfb/test-helpers/fixtures-zrle.ts';
import { InflateStream } from '../harness/rfb/zlib.ts';
import { median, ms } from './stats.ts';

const W = 1280;
const H = 800;

/** Deterministic pseudo-random numbers. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Build the RGB test frame. */
function buildFrame(): Uint8Array {
  const rgb = new Uint8Array(W * H * 3);
  const rnd = lcg(42);
  const put = (x: number, y: number, r: number, g: number, b: number) => {
    const o = (y * W + x) * 3;
    rgb[o] = r;
    rgb[o + 1] = g;
    rgb[o + 2] = b;
  };
  const box = (x0: number, y0: number, w: number, h: number, f: (x: number, y: number) => [number, number, number]) => {
    for (let y = y0; y < Math.min(H, y0 + h); y++) for (let x = x0; x < Math.min(W, x0 + w); x++) put(x, y, ...f(x - x0, y - y0));
  };
  box(0, 0, W, H, () => [58, 110, 165]); // desktop
  box(0, 770, W, 30, () => [40, 40, 48]); // task bar
  box(60, 40, 1160, 720, () => [255, 255, 255]); // window
  box(60, 40, 1160, 28, (x) => [30 + (x >> 4), 60 + (x >> 5), 120 + (x >> 3)]); // gradient title bar
  box(60, 68, 1160, 36, () => [236, 236, 240]); // toolbar
  for (let i = 0; i < 14; i++) box(72 + i * 34, 74, 24, 24, (x, y) => [(i * 53 + x * 5) & 255, (i * 97 + y * 7) & 255, (i * 31 + x * y) & 255]); // icons
  // Anti-aliased text: 48 lines of random glyphs, 4 grey levels on white.
  const glyphs = Array.from({ length: 64 }, () => Array.from({ length: 7 * 12 }, () => (rnd() < 0.35 ? 1 + Math.floor(rnd() * 3) : 0)));
  const greys = [255, 170, 90, 20];
  for (let line = 0; line < 48; line++) {
    const y0 = 120 + line * 13;
    if (y0 + 12 > 740) break;
    let x = 80;
    const end = 80 + 300 + Math.floor(rnd() * 740);
    while (x + 7 < end) {
      if (rnd() < 0.15) {
        x += 7; // space
        continue;
      }
      const g = glyphs[Math.floor(rnd() * glyphs.length)]!;
      box(x, y0, 7, 12, (gx, gy) => {
        const v = greys[g[gy * 7 + gx]!]!;
        return [v, v, v];
      });
      x += 8;
    }
  }
  box(820, 420, 360, 240, (x, y) => [(x + Math.floor(rnd() * 24)) & 255, (y + Math.floor(rnd() * 24)) & 255, ((x ^ y) + Math.floor(rnd() * 24)) & 255]); // photo
  return rgb;
}

const rgb = buildFrame();
const tiles = zrleEncodeImage(rgb, W, H);
const kinds = new Map<string, number>();
for (const t of tiles) {
  const s = t[0]!;
  const k = s === 0 ? 'raw' : s === 1 ? 'solid' : s <= 16 ? 'packed' : s === 128 ? 'plainRLE' : 'paletteRLE';
  kinds.set(k, (kinds.get(k) ?? 0) + 1);
}
const payload = zrleRect(tiles, new ZrleDeflater());
const inflatedSize = tiles.reduce((n, t) => n + t.length, 0);

const rect = { x: 0, y: 0, width: W, height: H, encoding: 16 };
const total: number[] = [];
const inflate: number[] = [];
const draw: number[] = [];
for (let i = 0; i < 25; i++) {
  // Full decode through the EncodingSpec (fresh stream: the payload starts a zlib stream).
  const ctx = makeContext(W, H);
  const q = new ByteQueue();
  q.push(payload);
  let t = performance.now();
  const done = zrleEncoding.create(rect, ctx).decode(q);
  const tTotal = performance.now() - t;
  if (!done) throw new Error('decoder wanted more bytes');
  // The same, split in two parts.
  const stream = new InflateStream('bench');
  t = performance.now();
  const data = stream.inflate(payload.subarray(4));
  const tInflate = performance.now() - t;
  t = performance.now();
  drawZrleTiles(data, 0, 0, W, H, ctx.sink);
  const tDraw = performance.now() - t;
  if (i >= 5) {
    total.push(tTotal);
    inflate.push(tInflate);
    draw.push(tDraw);
  }
}

console.log(
  `frame ${W}x${H}: ${tiles.length} tiles (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}), ${inflatedSize} bytes of tile data, ${payload.length} bytes on the wire`,
);
console.log(
  `ZRLE decode, median of ${total.length}: ${ms(median(total))} ms total (inflate ${ms(median(inflate))} ms + tiles ${ms(median(draw))} ms); min ${ms(Math.min(...total))} ms, max ${ms(Math.max(...total))} ms`,
);
