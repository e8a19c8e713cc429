/**
 * TightPNG encoding (rfbproto community spec "Tight PNG Encoding"), encoding number -260.
 *
 *   | U8 compression-control | then, by its high nibble:
 *     0x8 fill   TPIXEL (R,G,B)
 *     0x9 JPEG   compact length n, U8[n] JFIF data
 *     0xA PNG    compact length n, U8[n] PNG data
 *     0x0-0x7 Tight's BasicCompression: forbidden by the spec, but QEMU (lossy=on) sends
 *            gradient-filtered rectangles this way, so they are decoded as Tight decodes them
 *     anything else is invalid: RFB_ERR_DECODE
 *   low nibble: reset zlib streams 0-3 before the rectangle (kept for Tight compatibility).
 *
 * The full byte layout and the decoder live in ./tight-common.ts (shared with Tight).
 */
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';
import { createTightDecoder } from './tight-common.ts';

/** TightPNG: Tight with BasicCompression replaced by PNG images. */
export const tightPngEncoding: EncodingSpec = {
  id: ENC.TIGHT_PNG,
  name: 'TightPNG',
  pseudo: false,
  create(rect, ctx) {
    return createTightDecoder(rect, ctx, 'tightpng');
  },
};
