/**
 * ZRLE encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** ZRLE: registered in ./index.ts by encoding number. */
export const zrleEncoding: EncodingSpec = {
  id: ENC.ZRLE,
  name: 'ZRLE',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'ZRLE is not implemented yet');
  },
};
