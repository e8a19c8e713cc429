/**
 * Tight encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** Tight: registered in ./index.ts by encoding number. */
export const tightEncoding: EncodingSpec = {
  id: ENC.TIGHT,
  name: 'Tight',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'Tight is not implemented yet');
  },
};
