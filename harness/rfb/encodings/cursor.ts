/**
 * Cursor encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** Cursor: registered in ./index.ts by encoding number. */
export const cursorEncoding: EncodingSpec = {
  id: ENC.CURSOR,
  name: 'Cursor',
  pseudo: true,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'Cursor is not implemented yet');
  },
};
