/**
 * Raw encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** Raw: registered in ./index.ts by encoding number. */
export const rawEncoding: EncodingSpec = {
  id: ENC.RAW,
  name: 'Raw',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'Raw is not implemented yet');
  },
};
