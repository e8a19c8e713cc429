/**
 * TightPNG encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** TightPNG: registered in ./index.ts by encoding number. */
export const tightPngEncoding: EncodingSpec = {
  id: ENC.TIGHT_PNG,
  name: 'TightPNG',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'TightPNG is not implemented yet');
  },
};
