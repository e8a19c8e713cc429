/**
 * DesktopSize encoding (STUB: to be implemented; the RFC 6143 byte layout goes here).
 */
import { VncuaError } from '../../errors.ts';
import type { EncodingSpec } from './types.ts';
import { ENC } from './types.ts';

/** DesktopSize: registered in ./index.ts by encoding number. */
export const desktopSizeEncoding: EncodingSpec = {
  id: ENC.DESKTOP_SIZE,
  name: 'DesktopSize',
  pseudo: true,
  create() {
    throw new VncuaError('RFB_ERR_UNSUPPORTED_ENCODING', 'DesktopSize is not implemented yet');
  },
};
