/**
 * Hextile encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** Hextile: registered in ./index.ts by encoding number. */
export const hextileEncoding: EncodingSpec = {
  id: ENC.HEXTILE,
  name: 'Hextile',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'Hextile is not implemented yet');
  },
};
