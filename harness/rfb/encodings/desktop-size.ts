/**
 * DesktopSize pseudo-encoding (RFC 6143 §7.8.2), encoding number -223.
 *
 *   rectangle header: x, y ignored; width, height = the new framebuffer size
 *   payload: none
 *
 * The framebuffer is resized (its old contents kept where they still fit, as the
 * rfbproto client semantics recommend) and the context's width/height follow, so
 * later rectangles of the same update are bounds-checked against the new size.
 */
import type { EncodingSpec, RectDecoder } from './types.ts';
import { ENC, assertSaneSize } from './types.ts';

const done: RectDecoder = { decode: () => true };

/** DesktopSize: the server changed the framebuffer size. */
export const desktopSizeEncoding: EncodingSpec = {
  id: ENC.DESKTOP_SIZE,
  name: 'DesktopSize',
  pseudo: true,
  create(rect, ctx) {
    assertSaneSize(rect.width, rect.height, 'DesktopSize');
    ctx.width = rect.width;
    ctx.height = rect.height;
    ctx.sink.resize(rect.width, rect.height);
    return done;
  },
};
