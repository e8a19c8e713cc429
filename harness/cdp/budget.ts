/**
 * One check's time budget: a deadline and the caller's AbortSignal, shared by every step of
 * the check. `race` rejects with `BudgetExpired` (internal; the checker turns it into `null`)
 * or VncuaError CDP_ERR_ABORTED as soon as either happens.
 */
import { VncuaError } from '../errors.ts';

/** The options every check takes. */
export interface CheckOptions {
  /** Cancel the check (it rejects with CDP_ERR_ABORTED). */
  signal?: AbortSignal | undefined;
  /** Give up after this many milliseconds (the check then returns null). `Infinity` waits forever. */
  timeoutMs?: number | undefined;
}

/** Internal: the budget's deadline passed. Never escapes SuccessChecker.check(). */
export class BudgetExpired extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'BudgetExpired';
  }
}

/** Throw CDP_ERR_BAD_ARGUMENT unless `value` is undefined or a positive number (Infinity allowed). */
export function checkPositiveMs(value: unknown, what: string): void {
  if (value !== undefined && !(typeof value === 'number' && value > 0)) {
    throw new VncuaError('CDP_ERR_BAD_ARGUMENT', `${what} must be a positive number of milliseconds (or Infinity), got ${String(value)}`, { details: { [what]: value } });
  }
}

function abortError(signal: AbortSignal): VncuaError {
  const reason: unknown = signal.reason;
  if (reason instanceof VncuaError && reason.code === 'CDP_ERR_ABORTED') return reason;
  return new VncuaError('CDP_ERR_ABORTED', 'the success check was aborted through its AbortSignal', { cause: reason });
}

/** A deadline plus an AbortSignal; call `dispose()` in `finally`. */
export class Budget {
  /** Absolute deadline (performance.now() scale); Infinity when unbounded. */
  readonly deadline: number;
  private readonly stop: Promise<never>;
  private timer: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;
  private readonly signal: AbortSignal | undefined;

  /** Start a budget of `opts.timeoutMs` (default `defaultMs`); throws CDP_ERR_ABORTED if the signal already fired. */
  constructor(opts: CheckOptions, defaultMs: number) {
    checkPositiveMs(opts.timeoutMs, 'timeoutMs');
    const timeoutMs = opts.timeoutMs ?? defaultMs;
    this.signal = opts.signal;
    if (this.signal?.aborted) throw abortError(this.signal);
    this.deadline = performance.now() + timeoutMs;
    this.stop = new Promise<never>((_, reject) => {
      if (Number.isFinite(timeoutMs)) this.timer = setTimeout(() => reject(new BudgetExpired(timeoutMs)), timeoutMs);
      const signal = this.signal;
      if (signal) {
        this.onAbort = () => reject(abortError(signal));
        signal.addEventListener('abort', this.onAbort, { once: true });
      }
    });
    this.stop.catch(() => {});
  }

  /** Milliseconds left (Infinity when unbounded, never negative). */
  get remainingMs(): number {
    return Math.max(0, this.deadline - performance.now());
  }

  /** Settle with `work`, or reject as soon as the budget expires or the signal aborts (`work` keeps running). */
  race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {});
    return Promise.race([work, this.stop]);
  }

  /** Sleep `ms` within the budget. */
  sleep(ms: number): Promise<void> {
    let t: NodeJS.Timeout | undefined;
    const done = new Promise<void>((r) => {
      t = setTimeout(r, ms);
    });
    return this.race(done).finally(() => clearTimeout(t));
  }

  /** Remove the timer and the abort listener. */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.onAbort && this.signal) this.signal.removeEventListener('abort', this.onAbort);
    this.onAbort = undefined;
  }
}
