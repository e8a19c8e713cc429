/**
 * Timeouts and cancellation for the client's async operations: one helper that
 * runs a step under `{ timeoutMs, signal }`, rejects with RFB_ERR_TIMEOUT or
 * RFB_ERR_ABORTED at once, and always removes its timer and abort listener.
 */
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
    throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `${what}: timeoutMs must be a positive number of milliseconds (or Infinity), got ${String(timeoutMs)}`, { details: { timeoutMs } });
  }
}

/** The RFB_ERR_ABORTED error for an aborted signal (keeping its reason as the cause). */
export function abortError(what: string, signal: AbortSignal): VncuaError {
  const reason: unknown = signal.reason;
  if (reason instanceof VncuaError && (reason.code === 'RFB_ERR_ABORTED' || reason.code === 'RFB_ERR_TIMEOUT')) return reason;
  return new VncuaError('RFB_ERR_ABORTED', `${what} was aborted through its AbortSignal`, { cause: reason });
}

/**
 * Run `fn` with a signal that fires when `timeoutMs` (default `defaultMs`) passes or the caller's
 * signal aborts. The returned promise settles with `fn`'s result, or rejects with RFB_ERR_TIMEOUT /
 * RFB_ERR_ABORTED as soon as either happens (`fn` must then clean up what it started).
 */
export async function withDeadline<T>(what: string, opts: Cancellable, defaultMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  checkTimeout(opts.timeoutMs, what);
  const timeoutMs = opts.timeoutMs ?? defaultMs;
  const outer = opts.signal;
  if (outer?.aborted) throw abortError(what, outer);
  const inner = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    const fire = (err: VncuaError) => {
      inner.abort(err);
      reject(err);
    };
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => fire(new VncuaError('RFB_ERR_TIMEOUT', `${what} did not finish within ${timeoutMs} ms`, { details: { timeoutMs } })), timeoutMs);
    }
    if (outer) {
      onAbort = () => fire(abortError(what, outer));
      outer.addEventListener('abort', onAbort, { once: true });
    }
  });
  stop.catch(() => {});
  let work: Promise<T>;
  try {
    work = fn(inner.signal);
  } catch (e) {
    work = Promise.reject(e);
  }
  work.catch(() => {});
  try {
    return await Promise.race([work, stop]);
  } finally {
    if (timer) clearTimeout(timer);
    if (outer && onAbort) outer.removeEventListener('abort', onAbort);
  }
}

/** Wait for `promise`, or reject with the signal's reason as soon as `signal` aborts; the listener is always removed. */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(what, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(what, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
