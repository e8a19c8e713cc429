/**
 * PNG files written in the background while decoding goes on: sharp encodes raw RGB (level 1, no
 * adaptive filtering, as harness/rfb/screenshot.ts does) on libuv's thread pool, so the main thread keeps
 * replaying. Identical frames (same key) are encoded once. At most `maxInFlight` encodes are pending:
 * `add` waits for the oldest beyond that, which bounds memory.
 */
import { writeFile } from 'node:fs/promises';
import sharp from 'sharp';

/** An immutable RGB frame. */
export interface RgbFrame {
  rgb: Uint8Array;
  width: number;
  height: number;
  /** Equal keys mean identical pixels. */
  key: string;
}

/** Encode raw RGB as a PNG (sharp, compression level 1, no adaptive filtering). */
export function encodePng(f: RgbFrame): Promise<Buffer> {
  return sharp(f.rgb, { raw: { width: f.width, height: f.height, channels: 3 } })
    .png({ compressionLevel: 1, adaptiveFiltering: false })
    .toBuffer();
}

/** Writes PNGs concurrently with the caller's work. */
export class PngWriter {
  private readonly inFlight: Array<Promise<void>> = [];
  private readonly recent = new Map<string, Promise<Buffer>>();
  private error: unknown = null;
  /** PNG files written (or being written). */
  count = 0;
  /** Frames actually encoded (the rest reused an identical frame's PNG). */
  encoded = 0;

  constructor(private readonly maxInFlight = 4) {}

  /** Queue `frame` to be written at `path`; resolves once it is queued (the file may not be written yet). */
  async add(frame: RgbFrame, path: string): Promise<void> {
    if (this.error) throw this.error;
    let png = this.recent.get(frame.key);
    if (!png) {
      png = encodePng(frame);
      this.encoded++;
      this.recent.set(frame.key, png);
      if (this.recent.size > 4) this.recent.delete(this.recent.keys().next().value!);
    }
    this.count++;
    const job = png.then((b) => writeFile(path, b));
    const tracked = job.then(
      () => {},
      (e: unknown) => {
        this.error ??= e;
      },
    );
    this.inFlight.push(tracked);
    while (this.inFlight.length > this.maxInFlight) await this.inFlight.shift();
    if (this.error) throw this.error;
  }

  /** Wait for every queued file; throws the first error. */
  async done(): Promise<void> {
    await Promise.all(this.inFlight.splice(0));
    if (this.error) throw this.error;
  }
}
