/**
 * Retries of the HTTP planner's calls: exponential backoff with full jitter, and Retry-After.
 *
 * Retry n (0-based) waits `random() * min(maxDelayMs, baseDelayMs * 2^n)` ("full jitter": clients
 * that failed together do not retry together), unless the server sent Retry-After (seconds or an
 * HTTP date), which is honoured as given; a Retry-After longer than `maxRetryAfterMs` ends the call
 * at once instead of sleeping through it. Each wait is cut short by the run's signal.
 */
import { sleep } from '../../harness/agent/round-trip.ts';
import { z } from 'zod';
import { VncuaError, isVncuaError } from '../../harness/errors.ts';
import { nonNegative, parseOptions, wholeNumber } from '../options.ts';

/** How a call is retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included (default 5). */
  maxAttempts: number;
  /** Backoff of the first retry before jitter, in ms (default 500). */
  baseDelayMs: number;
  /** Cap of the backoff before jitter, in ms (default 20 000). */
  maxDelayMs: number;
  /** Longest Retry-After honoured, in ms (default 120 000); longer ones end the call. */
  maxRetryAfterMs: number;
}

/** Default RetryPolicy. */
export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 120_000 };

/** Schema of a partial RetryPolicy (unknown keys rejected). */
export const retryPolicySchema = z.strictObject({
  maxAttempts: wholeNumber(1).optional(),
  baseDelayMs: nonNegative.optional(),
  maxDelayMs: nonNegative.optional(),
  maxRetryAfterMs: nonNegative.optional(),
});

/** The policy with `partial` applied, checked (AGENT_ERR_BAD_OPTIONS naming the field). */
export function retryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const p = parseOptions(retryPolicySchema, partial, 'retry');
  return { ...DEFAULT_RETRY, ...Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)) };
}

/** The full-jitter backoff before retry `retry` (0-based): uniform in [0, min(cap, base·2^retry)). */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** Retry-After as ms from `now`: delta-seconds or an HTTP date (null when absent or unreadable; never negative). */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  if (!/[a-z]/i.test(v)) return null; // not an HTTP date (Date.parse would read "-1" as a year)
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** The result of one attempt: a value, or an error that may be retried (after Retry-After, if the server gave one). */
export type Attempt<T> = { ok: true; value: T } | { ok: false; error: VncuaError; retryable: boolean; retryAfterMs?: number | null; status?: number };

/** One retry that was made, for the trace. */
export interface RetryRecord {
  /** The attempt that failed (1-based). */
  attempt: number;
  /** Why: the error code, and the HTTP status if there was one. */
  code: string;
  status?: number;
  /** The wait before the next attempt, in ms. */
  delay_ms: number;
  /** Whether the wait came from Retry-After. */
  retry_after: boolean;
}

/** Codes of thrown errors that are worth another attempt (the request may not have reached the server, or it hung). */
const RETRYABLE_THROWN = new Set(['MODEL_ERR_TIMEOUT', 'MODEL_ERR_CONNECT']);

/**
 * Run `attempt` until it succeeds, a non-retryable error, or `policy.maxAttempts`; wait between
 * attempts as the module comment says. The last error is thrown with `details.attempts`.
 */
export async function withRetries<T>(
  attempt: (n: number) => Promise<Attempt<T>>,
  policy: RetryPolicy,
  options: { signal?: AbortSignal; random?: () => number; retries?: RetryRecord[] } = {},
): Promise<{ value: T; attempts: number }> {
  for (let n = 1; ; n++) {
    let out: Attempt<T>;
    try {
      out = await attempt(n);
    } catch (e) {
      if (options.signal?.aborted) throw e;
      if (!isVncuaError(e) || !RETRYABLE_THROWN.has(e.code)) throw e;
      out = { ok: false, error: e, retryable: true };
    }
    if (out.ok) return { value: out.value, attempts: n };
    const give = (why?: string) =>
      new VncuaError(out.error.code, `${out.error.message}${why ? ` ${why}` : ''} (${n} attempt${n === 1 ? '' : 's'})`, {
        cause: out.error.cause ?? out.error,
        details: { ...(out.error.details ?? {}), attempts: n },
      });
    if (!out.retryable || n >= policy.maxAttempts) throw give();
    const after = out.retryAfterMs ?? null;
    if (after !== null && after > policy.maxRetryAfterMs) throw give(`Retry-After asked for ${after} ms, more than maxRetryAfterMs (${policy.maxRetryAfterMs}).`);
    const delay = after ?? backoffDelay(n - 1, policy, options.random);
    options.retries?.push({ attempt: n, code: out.error.code, status: out.status, delay_ms: delay, retry_after: after !== null });
    await sleep(delay, options.signal);
  }
}
