/**
 * ExtendedDesktopSize encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** ExtendedDesktopSize: registered in ./index.ts by encoding number. */
export const extendedDesktopSizeEncoding: EncodingSpec = {
  id: ENC.EXTENDED_DESKTOP_SIZE,
  name: 'ExtendedDesktopSize',
  pseudo: true,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'ExtendedDesktopSize is not implemented yet');
  },
};
