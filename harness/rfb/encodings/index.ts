/**
 * The encoding table: every encoding vncua decodes, keyed by its encoding number.
 * The live client and the recording post-processor both look decoders up here.
 */
import type { EncodingSpec } from './types.ts';
import { rawEncoding } from './raw.ts';
import { copyRectEncoding } from './copyrect.ts';
import { hextileEncoding } from './hextile.ts';
import { zrleEncoding } from './zrle.ts';
import { tightEncoding } from './tight.ts';
import { tightPngEncoding } from './tightpng.ts';
import { desktopSizeEncoding } from './desktop-size.ts';
import { extendedDesktopSizeEncoding } from './extended-desktop-size.ts';
import { lastRectEncoding } from './last-rect.ts';
import { cursorEncoding } from './cursor.ts';

/** Every supported encoding and pseudo-encoding, by encoding number. */
export const ENCODINGS: ReadonlyMap<number, EncodingSpec> = new Map(
  [
    rawEncoding,
    copyRectEncoding,
    hextileEncoding,
    zrleEncoding,
    tightEncoding,
    tightPngEncoding,
    desktopSizeEncoding,
    extendedDesktopSizeEncoding,
    lastRectEncoding,
    cursorEncoding,
  ].map((e) => [e.id, e]),
);

/** Names accepted by `connectVnc({ encodings })` and the tests' "force one encoding" switch. */
export type EncodingName = 'raw' | 'copyrect' | 'hextile' | 'zrle' | 'tight' | 'tightpng';

/** Encoding numbers by name. */
export const ENCODING_BY_NAME: Readonly<Record<EncodingName, number>> = {
  raw: rawEncoding.id,
  copyrect: copyRectEncoding.id,
  hextile: hextileEncoding.id,
  zrle: zrleEncoding.id,
  tight: tightEncoding.id,
  tightpng: tightPngEncoding.id,
};

export type { EncodingSpec, RectDecoder, RectHeader, DecodeContext } from './types.ts';
export { ENC } from './types.ts';
