/**
 * LastRect pseudo-encoding (rfbproto "LastRect Pseudo-encoding"), encoding number -224.
 *
 *   rectangle header: all fields ignored
 *   payload: none
 *
 * It ends the FramebufferUpdate early (the server announced 65535 rectangles). The
 * message parser recognises the encoding number and stops reading rectangles; this
 * decoder only consumes the (empty) payload.
 */
import type { EncodingSpec, RectDecoder } from './types.ts';
import { ENC } from './types.ts';

const done: RectDecoder = { decode: () => true };

/** LastRect: no more rectangles in this update. */
export const lastRectEncoding: EncodingSpec = {
  id: ENC.LAST_RECT,
  name: 'LastRect',
  pseudo: true,
  create() {
    return done;
  },
};
