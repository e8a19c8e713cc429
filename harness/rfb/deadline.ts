/**
 * The RFB client's errors for cancellation (harness/cancel.ts does the waiting): `rfbCancel(what)`
 * maps an abort to RFB_ERR_ABORTED (an RFB_ERR_ABORTED / RFB_ERR_TIMEOUT reason passes through) and
 * a timeout to RFB_ERR_TIMEOUT, naming the operation.
 */
import { type MapError, race } from '../cancel.ts';
import { VncuaError } from '../errors.ts';

/** The options every async client operation takes. */
export interface Cancellable {
  /** Abort the operation (it rejects with RFB_ERR_ABORTED). */
  signal?: AbortSignal | undefined;
  /** Give up after this many milliseconds (RFB_ERR_TIMEOUT). `Infinity` waits forever. */
  timeoutMs?: number | undefined;
}

/** Throw RFB_ERR_BAD_ARGUMENT unless `timeoutMs` is a positive number (or Infinity). */
export function checkTimeout(timeoutMs: unknown, what: string): void {
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs > 0)) {
    throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `${what}: timeoutMs must be a positive number of milliseconds (or Infinity), got ${String(timeoutMs)}`, {
      details: { timeoutMs },
    });
  }
}

/** The RFB_ERR_ABORTED error for an abort with `reason` (kept as the cause; RFB_ERR_ABORTED / RFB_ERR_TIMEOUT reasons pass through). */
function abortError(what: string, reason: unknown): VncuaError {
  if (reason instanceof VncuaError && (reason.code === 'RFB_ERR_ABORTED' || reason.code === 'RFB_ERR_TIMEOUT')) return reason;
  return new VncuaError('RFB_ERR_ABORTED', `${what} was aborted through its AbortSignal`, { cause: reason });
}

/** The error mapper of the operation `what`: RFB_ERR_ABORTED or RFB_ERR_TIMEOUT. */
export function rfbCancel(what: string): MapError {
  return (c) =>
    c.kind === 'timeout'
      ? new VncuaError('RFB_ERR_TIMEOUT', `${what} did not finish within ${c.timeoutMs} ms`, { details: { timeoutMs: c.timeoutMs } })
      : abortError(what, c.reason);
}

/**
 * Run `fn` with a signal that fires when `timeoutMs` (default `defaultMs`) passes or the caller's
 * signal aborts; reject with RFB_ERR_TIMEOUT / RFB_ERR_ABORTED as soon as either happens.
 */
export function withDeadline<T>(what: string, opts: Cancellable, defaultMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  checkTimeout(opts.timeoutMs, what);
  return race(fn, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? defaultMs, mapError: rfbCancel(what) });
}
