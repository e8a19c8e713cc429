/** vncua: the package root. Everything users import comes from here. */
export { VncuaError, isVncuaError, ERROR_CODES } from './harness/errors.ts';
export type { ErrorCode } from './harness/errors.ts';
export { launchDesktop } from './harness/desktop/index.ts';
export type { Desktop, LaunchDesktopOptions, VncServerKind } from './harness/desktop/index.ts';
export { connectVnc, VncClient, DEFAULT_ENCODINGS } from './harness/rfb/index.ts';
export type { ConnectOptions, Screenshot } from './harness/rfb/index.ts';
