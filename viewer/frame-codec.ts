/**
 * The seek index's pixel payloads (viewer/keyframes.ts), free of I/O: what changed between two RGB
 * screens as a few tight rectangles (diffRects / applyRects), and the compressed form stored in
 * frames.bin (encodeBlob / decodeBlob).
 *
 * Delta payload (big-endian):
 *   +-----------+------------------------------------+----------------------------------------------+
 *   | U32 count | count x (U16 x, U16 y, U16 w, U16 h)| each rectangle's rows of RGB, in that order  |
 *   +-----------+------------------------------------+----------------------------------------------+
 * Rectangles come from bands of BAND rows: in each band, the runs of COLUMN-pixel columns that
 * changed, trimmed to the exact first and last changed pixel; a band's rectangle continuing the one
 * above (same x and width, adjacent rows) extends it.
 *
 * Blob (a keyframe's RGB, or a delta payload):
 *   +-------------+-------------------------------------------------------------+
 *   | U8 method   | the payload, raw deflate (node:zlib, level 1)               |
 *   +-------------+-------------------------------------------------------------+
 * method 0: the payload as is; method 1: after PNG's "Sub" filter with a 3-byte step (each byte
 * minus the byte three before it, mod 256: one pixel's channel minus its left neighbour's), which
 * turns gradients and flat areas into runs. The encoder keeps whichever is smaller (for a large
 * payload, whichever is smaller on four samples of it).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Rows per band of diffRects(). */
const BAND = 16;
/** Column width (pixels) of diffRects()'s coarse comparison. */
const COLUMN = 32;
const LEVEL = 1;

/** A delta payload and the pixel bytes it carries (what the keyframe spacing counts). */
export interface Delta {
  bytes: Uint8Array;
  pixelBytes: number;
}

type Rect = [x: number, y: number, w: number, h: number];

const view = (a: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** The rectangles where `next` differs from `prev` (both width x height RGB) with next's pixels, or null when nothing differs. */
export function diffRects(prev: Uint8Array, next: Uint8Array, width: number, height: number): Delta | null {
  const a = view(prev);
  const b = view(next);
  const stride = width * 3;
  const cols = Math.ceil(width / COLUMN);
  const rects: Rect[] = [];
  const changed = new Uint8Array(cols);
  const rows = new Uint8Array(BAND);
  for (let y0 = 0; y0 < height; y0 += BAND) {
    const y1 = Math.min(height, y0 + BAND);
    let first = -1;
    let last = -1;
    changed.fill(0);
    rows.fill(0);
    for (let y = y0; y < y1; y++) {
      const row = y * stride;
      if (a.compare(b, row, row + stride, row, row + stride) === 0) continue;
      rows[y - y0] = 1;
      if (first < 0) first = y;
      last = y;
      for (let c = 0; c < cols; c++) {
        if (changed[c]) continue;
        const s = row + c * COLUMN * 3;
        const e = Math.min(row + stride, s + COLUMN * 3);
        if (a.compare(b, s, e, s, e) !== 0) changed[c] = 1;
      }
    }
    if (first < 0) continue;
    for (let c = 0; c < cols; ) {
      if (!changed[c]) {
        c++;
        continue;
      }
      let c2 = c;
      while (c2 + 1 < cols && changed[c2 + 1]) c2++;
      // Trim to the exact first and last changed pixel of the run's edge columns.
      let minX = Math.min(width, (c2 + 1) * COLUMN) - 1;
      let maxX = c * COLUMN;
      for (let y = first; y <= last; y++) {
        if (!rows[y - y0]) continue;
        const row = y * stride;
        for (let x = c * COLUMN; x < minX; x++) {
          const p = row + x * 3;
          if (a[p] !== b[p] || a[p + 1] !== b[p + 1] || a[p + 2] !== b[p + 2]) {
            minX = x;
            break;
          }
        }
        for (let x = Math.min(width, (c2 + 1) * COLUMN) - 1; x > maxX; x--) {
          const p = row + x * 3;
          if (a[p] !== b[p] || a[p + 1] !== b[p + 1] || a[p + 2] !== b[p + 2]) {
            maxX = x;
            break;
          }
        }
      }
      const r: Rect = [minX, first, maxX - minX + 1, last - first + 1];
      const above = rects.find((q) => q[0] === r[0] && q[2] === r[2] && q[1] + q[3] === r[1]);
      if (above) above[3] += r[3];
      else rects.push(r);
      c = c2 + 1;
    }
  }
  if (rects.length === 0) return null;
  const pixelBytes = rects.reduce((s, [, , w, h]) => s + w * h * 3, 0);
  const out = new Uint8Array(4 + rects.length * 8 + pixelBytes);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, rects.length);
  let p = 4;
  for (const [x, y, w, h] of rects) {
    dv.setUint16(p, x);
    dv.setUint16(p + 2, y);
    dv.setUint16(p + 4, w);
    dv.setUint16(p + 6, h);
    p += 8;
  }
  for (const [x, y, w, h] of rects) {
    for (let r = y; r < y + h; r++) {
      const s = (r * width + x) * 3;
      out.set(next.subarray(s, s + w * 3), p);
      p += w * 3;
    }
  }
  return { bytes: out, pixelBytes };
}

/** Apply diffRects()'s payload to `rgb` (a screen `width` pixels wide). */
export function applyRects(rgb: Uint8Array, width: number, bytes: Uint8Array): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = dv.getUint32(0);
  let p = 4 + n * 8;
  for (let i = 0; i < n; i++) {
    const q = 4 + i * 8;
    const x = dv.getUint16(q);
    const y = dv.getUint16(q + 2);
    const w = dv.getUint16(q + 4);
    const h = dv.getUint16(q + 6);
    for (let r = y; r < y + h; r++) {
      rgb.set(bytes.subarray(p, p + w * 3), (r * width + x) * 3);
      p += w * 3;
    }
  }
}

/** PNG's Sub filter over the whole payload with a 3-byte step (a new array). */
export function subFilter(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  const out = new Uint8Array(n);
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    const b0 = bytes[i]!;
    const b1 = bytes[i + 1]!;
    const b2 = bytes[i + 2]!;
    out[i] = b0 - a0;
    out[i + 1] = b1 - a1;
    out[i + 2] = b2 - a2;
    a0 = b0;
    a1 = b1;
    a2 = b2;
  }
  for (; i < n; i++) out[i] = bytes[i]! - (i >= 3 ? bytes[i - 3]! : 0);
  return out;
}

/** Undo subFilter() in place. */
export function unSubFilter(bytes: Uint8Array): Uint8Array {
  const n = bytes.length;
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  let i = 0;
  for (; i + 2 < n; i += 3) {
    a0 = (a0 + bytes[i]!) & 255;
    a1 = (a1 + bytes[i + 1]!) & 255;
    a2 = (a2 + bytes[i + 2]!) & 255;
    bytes[i] = a0;
    bytes[i + 1] = a1;
    bytes[i + 2] = a2;
  }
  for (; i < n; i++) bytes[i] = bytes[i]! + (i >= 3 ? bytes[i - 3]! : 0);
  return bytes;
}

/** Payloads above this size choose their method on samples instead of compressing the whole twice. */
const SAMPLED = 128 * 1024;
const SAMPLE = 24 * 1024;

/** 1 when the Sub filter compresses `payload` better (on four samples of a large payload), else 0. */
function chooseMethod(payload: Uint8Array): { method: 0 | 1; plain?: Buffer; sub?: Buffer } {
  if (payload.length <= SAMPLED) {
    const plain = deflateRawSync(payload, { level: LEVEL });
    const sub = deflateRawSync(subFilter(payload), { level: LEVEL });
    return sub.length < plain.length ? { method: 1, sub } : { method: 0, plain };
  }
  let plain = 0;
  let sub = 0;
  for (let k = 0; k < 4; k++) {
    const at = Math.floor(((payload.length - SAMPLE) * k) / 3 / 3) * 3;
    const part = payload.subarray(at, at + SAMPLE);
    plain += deflateRawSync(part, { level: LEVEL }).length;
    sub += deflateRawSync(subFilter(part), { level: LEVEL }).length;
  }
  return { method: sub < plain ? 1 : 0 };
}

/** The stored form of a payload: a method byte, then deflate(payload) or deflate(Sub(payload)), whichever is smaller. */
export function encodeBlob(payload: Uint8Array): Buffer {
  const c = chooseMethod(payload);
  const body = c.method === 1 ? (c.sub ?? deflateRawSync(subFilter(payload), { level: LEVEL })) : (c.plain ?? deflateRawSync(payload, { level: LEVEL }));
  const out = Buffer.allocUnsafe(1 + body.length);
  out[0] = c.method;
  body.copy(out, 1);
  return out;
}

/** The payload of encodeBlob()'s output. */
export function decodeBlob(blob: Uint8Array): Uint8Array {
  const method = blob[0];
  const payload = inflateRawSync(blob.subarray(1));
  if (method === 0) return payload;
  if (method === 1) return unSubFilter(payload);
  throw new Error(`frames.bin: unknown blob method ${method}`);
}
