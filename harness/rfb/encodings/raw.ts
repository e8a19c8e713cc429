/**
 * Raw encoding (RFC 6143 §7.7.1), encoding number 0.
 *
 *   width * height pixels, left to right, top to bottom, each bytesPerPixel (4) bytes:
 *   +--------------------------------------+
 *   | PIXEL[width * height]                |  (our pixel format: R, G, B, X)
 *   +--------------------------------------+
 *
 * Decoded row by row: whatever complete rows have arrived are drawn at once, so a
 * 4 MB full-screen rectangle never waits for its last byte before drawing.
 */
import type { ByteQueue } from '../bytes.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC, assertInBounds } from './types.ts';

const BPP = 4;

class RawDecoder implements RectDecoder {
  private row = 0;
  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {}

  decode(q: ByteQueue): boolean {
    const { x, y, width, height } = this.rect;
    const rowBytes = width * BPP;
    if (rowBytes === 0) return true;
    const rows = Math.min(height - this.row, Math.floor(q.available / rowBytes));
    if (rows > 0) {
      const data = q.readBytes(rows * rowBytes);
      this.ctx.sink.blit(x, y + this.row, width, rows, data, 0, rowBytes, 4);
      this.row += rows;
    }
    return this.row >= height;
  }
}

/** Raw: uncompressed pixels. */
export const rawEncoding: EncodingSpec = {
  id: ENC.RAW,
  name: 'Raw',
  pseudo: false,
  create(rect, ctx) {
    assertInBounds(rect, ctx, 'Raw');
    return new RawDecoder(rect, ctx);
  },
};
