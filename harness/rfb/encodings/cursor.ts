/**
 * Cursor pseudo-encoding (RFC 6143 §7.8.1), encoding number -239.
 *
 *   rectangle header: x, y = the hotspot; width, height = the cursor image size
 *   payload:
 *   +------------------------------------------+
 *   | PIXEL[width * height]    cursor-pixels    |  (our pixel format: R, G, B, X)
 *   +------------------------------------------+
 *   | U8[floor((width + 7) / 8) * height] mask |  rows padded to a byte, MSB = leftmost
 *   +------------------------------------------+  pixel, 1 = opaque
 *
 * The header is not a framebuffer position, so it is not bounds-checked against the
 * framebuffer. An empty (0-wide or 0-high) cursor means "no cursor": sink.cursor(null).
 * Resumable: nothing is consumed until the whole payload has arrived.
 */
import { VncuaError } from '../../errors.ts';
import type { ByteQueue } from '../bytes.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC } from './types.ts';

/** Largest cursor side accepted. */
export const MAX_CURSOR_SIDE = 512;

class CursorDecoder implements RectDecoder {
  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {}

  decode(q: ByteQueue): boolean {
    const { x: hotX, y: hotY, width, height } = this.rect;
    if (width === 0 || height === 0) {
      this.ctx.sink.cursor(null);
      return true;
    }
    const pixelBytes = width * height * 4;
    const maskRow = (width + 7) >> 3;
    if (!q.has(pixelBytes + maskRow * height)) return false;
    const px = q.readBytes(pixelBytes);
    const rgba = new Uint8Array(pixelBytes);
    rgba.set(px);
    const mask = q.readBytes(maskRow * height);
    for (let row = 0, o = 3; row < height; row++) {
      const m = row * maskRow;
      for (let col = 0; col < width; col++, o += 4) rgba[o] = (mask[m + (col >> 3)]! >> (7 - (col & 7))) & 1 ? 255 : 0;
    }
    this.ctx.sink.cursor({ hotX, hotY, width, height, rgba });
    return true;
  }
}

/** Cursor: the server's cursor image, drawn locally. */
export const cursorEncoding: EncodingSpec = {
  id: ENC.CURSOR,
  name: 'Cursor',
  pseudo: true,
  create(rect, ctx) {
    if (rect.width > MAX_CURSOR_SIDE || rect.height > MAX_CURSOR_SIDE) {
      throw new VncuaError('RFB_ERR_DECODE', `Cursor image ${rect.width}x${rect.height} exceeds ${MAX_CURSOR_SIDE}x${MAX_CURSOR_SIDE}; the stream is likely corrupt, reconnect`, {
        details: { width: rect.width, height: rect.height },
      });
    }
    return new CursorDecoder(rect, ctx);
  },
};
