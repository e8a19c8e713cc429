/**
 * The one cancellation primitive: every wait in the harness that a caller's AbortSignal or a timeout
 * can cut short goes through `race()`, `sleep()` or `scope()`. Each module keeps its own error codes
 * by passing a `mapError` that turns the cancellation (the signal's reason, or the timeout) into the
 * error to reject with (RFB_ERR_ABORTED / RFB_ERR_TIMEOUT, CDP_ERR_ABORTED, AGENT_ERR_CANCELLED, …).
 *
 * Guarantees: an already-aborted signal rejects at once (the promise is not awaited); the first of
 * settle / abort / timeout wins and later ones do nothing; every abort listener and timer added is
 * removed as soon as the race is decided (a long-lived run signal collects nothing).
 *
 * Timeouts use a clearable `setTimeout` (not `AbortSignal.timeout()`, whose unref'd timer cannot be
 * cleared and does not keep the process alive). `timeoutSignal()` combines a signal with a timeout
 * through `AbortSignal.any()` for APIs that only take a signal (fetch, PageSocket.send).
 */

/** Why an operation was cut short: the caller's signal fired (with its reason), or its timeout passed. */
export type Cancellation = { kind: 'aborted'; reason: unknown } | { kind: 'timeout'; timeoutMs: number };

/** Turns a cancellation into the error the operation rejects with. */
export type MapError = (c: Cancellation) => unknown;

/** Options shared by race() and scope(). */
export interface CancelOptions {
  /** The caller's signal (optional). */
  signal?: AbortSignal | undefined;
  /** Give up after this many ms; undefined or Infinity waits forever. */
  timeoutMs?: number | undefined;
  /** The error to reject with (default: the signal's reason as it is, or a DOMException TimeoutError). */
  mapError?: MapError | undefined;
}

/** Options of race(). */
export interface RaceOptions extends CancelOptions {
  /** Runs once when the race is lost to the signal or the timeout, with the error it rejects with (stop the work here). */
  onAbort?: ((error: unknown) => void) | undefined;
}

/** The default mapping: the signal's reason, or a TimeoutError (what AbortSignal.timeout() gives). */
export const passReason: MapError = (c) => (c.kind === 'aborted' ? c.reason : new DOMException(`the operation did not finish within ${c.timeoutMs} ms`, 'TimeoutError'));

/** A signal combining the caller's signal and a timeout, plus the way to release both. */
export interface Scope {
  /** Fires with the mapped error when the caller's signal fires or the timeout passes. */
  readonly signal: AbortSignal;
  /** Settle with `p`, or reject with the scope's error as soon as it fires (`onAbort` runs then). */
  race<T>(p: Promise<T>, onAbort?: (error: unknown) => void): Promise<T>;
  /** Wait `ms`, or reject with the scope's error as soon as it fires. */
  sleep(ms: number): Promise<void>;
  /** Remove the timer and the listener on the caller's signal. Idempotent. */
  dispose(): void;
}

/**
 * Open a scope: a signal that fires (with `mapError`'s error) when `signal` fires or `timeoutMs`
 * passes. Call `dispose()` when the work is done. An already-aborted `signal` gives an aborted scope.
 */
export function scope(opts: CancelOptions = {}): Scope {
  const map = opts.mapError ?? passReason;
  const outer = opts.signal;
  const timeoutMs = opts.timeoutMs ?? Infinity;
  const ctl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onOuterAbort = () => {
    dispose();
    ctl.abort(map({ kind: 'aborted', reason: outer!.reason }));
  };
  const dispose = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    outer?.removeEventListener('abort', onOuterAbort);
  };
  if (outer?.aborted) onOuterAbort();
  else {
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => {
        dispose();
        ctl.abort(map({ kind: 'timeout', timeoutMs }));
      }, timeoutMs);
    }
  }
  const signal = ctl.signal;
  return {
    signal,
    race: (p, onAbort) => race(p, { signal, onAbort }),
    sleep: (ms) => sleep(ms, signal),
    dispose,
  };
}

/**
 * Settle with `p`, or reject with the mapped error as soon as `signal` fires or `timeoutMs` passes
 * (then `onAbort` runs; `p` keeps running and its rejection is handled). `p` may be a function: it is
 * called with a signal that fires at that moment, so the work can stop itself.
 */
export function race<T>(p: Promise<T> | ((signal: AbortSignal) => Promise<T>), opts: RaceOptions = {}): Promise<T> {
  const s = scope(opts);
  if (s.signal.aborted) {
    if (typeof p !== 'function') p.catch(() => {});
    opts.onAbort?.(s.signal.reason);
    return Promise.reject(s.signal.reason);
  }
  let work: Promise<T>;
  try {
    work = typeof p === 'function' ? p(s.signal) : p;
  } catch (e) {
    work = Promise.reject(e);
  }
  work.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      opts.onAbort?.(s.signal.reason);
      reject(s.signal.reason);
    };
    if (s.signal.aborted) return onAbort();
    s.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      s.signal.removeEventListener('abort', onAbort);
      s.dispose();
    };
    work.then(
      (v) => {
        done();
        resolve(v);
      },
      (e: unknown) => {
        done();
        reject(e);
      },
    );
  });
}

/** Wait `ms`, or reject with the mapped error as soon as `signal` fires; the timer and listener are always removed. */
export function sleep(ms: number, signal?: AbortSignal, mapError?: MapError): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  const slept = new Promise<void>((r) => (t = setTimeout(r, ms)));
  return race(slept, { signal, mapError, onAbort: () => clearTimeout(t) });
}

/**
 * Abort `controller` with `mapReason(signal.reason)` when `signal` fires (at once if it already did);
 * returns the function that stops following it (call it in `finally`). No-op without a signal.
 */
export function follow(signal: AbortSignal | undefined, controller: AbortController, mapReason: (reason: unknown) => unknown = (r) => r): () => void {
  if (!signal) return () => {};
  const onAbort = () => controller.abort(mapReason(signal.reason));
  if (signal.aborted) {
    onAbort();
    return () => {};
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * `signal` combined with a timeout of `timeoutMs`: for APIs that take a signal and clean up after themselves
 * (fetch). The reason is a TimeoutError DOMException on timeout, as AbortSignal.timeout() gives.
 *
 * Not `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the composite holds its sources weakly
 * and AbortSignal.timeout()'s own timer holds its signal weakly, so after a garbage collection the timeout
 * signal is gone and never fires (0 of 200 fired in a test with gc(), even with the composite held). Calls
 * "bounded" by it then hung forever, at random, more often on a loaded machine (the findings monitor's test
 * timing out at 120 s). Here the timeout's controller is held by its (unref'd) timer until it fires.
 */
export function timeoutSignal(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const t = new AbortController();
  setTimeout(() => t.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), Math.max(1, Math.round(timeoutMs))).unref();
  return signal ? AbortSignal.any([signal, t.signal]) : t.signal;
}
