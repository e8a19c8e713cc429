/**
 * One check's time budget: a harness/cancel.ts scope (a deadline and the caller's AbortSignal)
 * shared by every step of the check. Its `race` rejects with `BudgetExpired` (internal; the checker
 * turns it into `null`) or VncuaError CDP_ERR_ABORTED as soon as either happens.
 */
import { type MapError, type Scope, scope } from '../cancel.ts';
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

/** A timeout becomes BudgetExpired; an abort CDP_ERR_ABORTED (a CDP_ERR_ABORTED reason passes through). */
const budgetError: MapError = (c) => {
  if (c.kind === 'timeout') return new BudgetExpired(c.timeoutMs);
  if (c.reason instanceof VncuaError && c.reason.code === 'CDP_ERR_ABORTED') return c.reason;
  return new VncuaError('CDP_ERR_ABORTED', 'the success check was aborted through its AbortSignal', { cause: c.reason });
};

/** A check's budget: `race`, `sleep`, and `dispose()` (call it in `finally`). */
export type Budget = Scope;

/** Start a budget of `opts.timeoutMs` (default `defaultMs`); throws CDP_ERR_ABORTED if the signal already fired. */
export function openBudget(opts: CheckOptions, defaultMs: number): Budget {
  checkPositiveMs(opts.timeoutMs, 'timeoutMs');
  const budget = scope({ signal: opts.signal, timeoutMs: opts.timeoutMs ?? defaultMs, mapError: budgetError });
  budget.signal.throwIfAborted();
  return budget;
}
