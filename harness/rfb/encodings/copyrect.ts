/**
 * CopyRect encoding (RFC 6143 §7.7.2), encoding number 1.
 *
 *   +--------------+--------------+
 *   | U16 src-x    | U16 src-y    |   copy the rectangle's width x height pixels
 *   +--------------+--------------+   from (src-x, src-y) of the framebuffer itself
 */
import { VncuaError } from '../../errors.ts';
import type { ByteQueue } from '../bytes.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC, assertInBounds } from './types.ts';

class CopyRectDecoder implements RectDecoder {
  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {}

  decode(q: ByteQueue): boolean {
    if (!q.has(4)) return false;
    const srcX = q.u16();
    const srcY = q.u16();
    const { x, y, width, height } = this.rect;
    if (srcX + width > this.ctx.width || srcY + height > this.ctx.height) {
      throw new VncuaError('RFB_ERR_DECODE', `CopyRect source ${width}x${height}+${srcX}+${srcY} lies outside the ${this.ctx.width}x${this.ctx.height} framebuffer`);
    }
    if (width > 0 && height > 0) this.ctx.sink.copyRect(srcX, srcY, x, y, width, height);
    return true;
  }
}

/** CopyRect: copy a block already on screen. */
export const copyRectEncoding: EncodingSpec = {
  id: ENC.COPYRECT,
  name: 'CopyRect',
  pseudo: false,
  create(rect, ctx) {
    assertInBounds(rect, ctx, 'CopyRect');
    return new CopyRectDecoder(rect, ctx);
  },
};
