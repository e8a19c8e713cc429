/** vncua: the package root. Everything users import comes from here. */
export { VncuaError, isVncuaError, ERROR_CODES } from './harness/errors.ts';
export type { ErrorCode } from './harness/errors.ts';
