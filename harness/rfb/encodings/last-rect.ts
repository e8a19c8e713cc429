/**
 * LastRect encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** LastRect: registered in ./index.ts by encoding number. */
export const lastRectEncoding: EncodingSpec = {
  id: ENC.LAST_RECT,
  name: 'LastRect',
  pseudo: true,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'LastRect is not implemented yet');
  },
};
