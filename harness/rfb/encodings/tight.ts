/**
 * Tight encoding (rfbproto community spec "Tight Encoding"), encoding number 7.
 *
 *   | U8 compression-control | then, by its high nibble:
 *     0x8 fill   TPIXEL (R,G,B)
 *     0x9 JPEG   compact length n, U8[n] JFIF data
 *     0x0-0x7    basic: bits 0-1 zlib stream, bit 2 filter-id byte follows;
 *                [U8 filter-id] [palette: U8 count-1, TPIXEL[count]]
 *                filtered data: as is if < 12 bytes, else compact length n + U8[n] zlib data
 *     0xA/0xE    basic without zlib (TurboVNC/libvncserver NoZlib extension)
 *   low nibble: reset zlib streams 0-3 before the rectangle.
 *
 * The full byte layout and the decoder live in ./tight-common.ts (shared with TightPNG).
 */
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';
import { createTightDecoder } from './tight-common.ts';

/** Tight: fill, JPEG and zlib-compressed copy/palette/gradient rectangles over four zlib streams. */
export const tightEncoding: EncodingSpec = {
  id: ENC.TIGHT,
  name: 'Tight',
  pseudo: false,
  create(rect, ctx) {
    return createTightDecoder(rect, ctx, 'tight');
  },
};
