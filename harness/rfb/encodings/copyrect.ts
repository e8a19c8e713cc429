/**
 * CopyRect encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** CopyRect: registered in ./index.ts by encoding number. */
export const copyRectEncoding: EncodingSpec = {
  id: ENC.COPYRECT,
  name: 'CopyRect',
  pseudo: false,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'CopyRect is not implemented yet');
  },
};
