/**
 * The rate gate: the one door every model API request of an agent goes through, so that a limit like
 * `--rate-limit 60/min` holds for all the runs sharing the gate, and a 429 from the API makes them all wait.
 *
 * - `acquire(call, { signal })` resolves when one request for `call` (its adapter and model) may go.
 *   The byom adapters call it before each HTTP request to the model, retries included (byom/model-agent.ts).
 * - `backoff(call, ms, reason)`: the API answered 429 (wait `ms`, from Retry-After when the API sent one):
 *   every later acquire for the same model (or, for calls that name none, the same adapter) waits until then.
 * - `onBackoff(listener)`: told of each backoff reported through this gate object (the queue worker passes it
 *   on to BullMQ, so the queue stops handing out runs: eval/queue/rate-limit.ts).
 *
 * Rules (`parseRateLimit`): `N/s`, `N/min`, `N/h`, optionally `:NAME` (the rule then counts only the calls
 * whose model or adapter is NAME: `60/min:gpt-5`, `100/min:anthropic`). A call is admitted when every rule
 * that matches it admits it, and then counts against all of them.
 *
 * The window rule (exact, both gates): a rule "N per P" admits a request at time t only when fewer than N
 * requests it admitted lie in (t - P, t]. So any span of length P (half-open, [a, a + P)) holds at most N of
 * them: when the last one in it was admitted, all the others were in (t - P, t]. A sliding log, not a token
 * bucket: a token bucket (or GCRA with a burst of N) lets 2N - 1 through in some window of length P.
 *
 * `LocalRateGate` keeps the log in this process (for `vncua eval` without a queue: its runs share one gate);
 * the Redis gate (eval/queue/rate-limit.ts) keeps it in Redis, so it holds across every worker process and machine.
 * The harness imports no Redis client: a gate is any object with these methods (AgentOptions.rateGate).
 */
import { type MapError, sleep } from '../cancel.ts';
import { VncuaError } from '../errors.ts';

/** What a model request is keyed by: the adapter that makes it and the model it names. */
export interface RateCall {
  /** The adapter's name as `--agent` spells it (`openai-cua`, `anthropic`, `chat`, `http`), or a custom agent's. */
  adapter: string;
  /** The model name sent to the API, when the call names one. */
  model?: string | undefined;
}

/** One rule of a rate limit: at most `limit` requests per `periodMs`, for the calls `scope` names (null: every call). */
export interface RateRule {
  limit: number;
  periodMs: number;
  /** A model or adapter name; null for a rule over every call. */
  scope: string | null;
  /** The rule as written (`60/min:gpt-5`). */
  spec: string;
}

/** What acquire() resolves with. */
export interface RateGrant {
  /** When the gate admitted the request, in ms on the gate's clock (Redis server time for the Redis gate). */
  at: number;
  /** How long acquire() waited, in ms (this process's clock). */
  waitedMs: number;
}

/** A backoff as the gate recorded it, on the gate's clock (ms). */
export interface RateBackoff {
  /** When it was set. */
  from: number;
  /** Until when calls wait (the later of this one and any backoff already set). */
  until: number;
}

/** What an onBackoff listener gets. */
export interface RateBackoffEvent {
  call: RateCall;
  /** The wait asked for, in ms. */
  ms: number;
  reason: string;
}

/** Options of acquire(). */
export interface AcquireOptions {
  /** Stop waiting: acquire rejects with the signal's reason (AGENT_ERR_CANCELLED unless it is a VncuaError). */
  signal?: AbortSignal | undefined;
  /** Give up after this many ms of waiting: QUEUE_ERR_RATE_LIMIT_TIMEOUT (default: wait as long as it takes). */
  timeoutMs?: number | undefined;
}

/** The seam between agents and a rate limit (see the module comment). */
export interface RateGate {
  /** Resolve when one request for `call` may go. */
  acquire(call: RateCall, options?: AcquireOptions): Promise<RateGrant>;
  /** The API answered 429: calls for the same model (or adapter) wait `ms` from now. */
  backoff(call: RateCall, ms: number, reason: string): Promise<RateBackoff>;
  /** Be told of each backoff reported through this gate; returns the way to stop listening. */
  onBackoff(listener: (event: RateBackoffEvent) => void): () => void;
}

/** The wait after a 429 that named none (no Retry-After), in ms. */
export const DEFAULT_BACKOFF_MS = 1000;

const UNITS: Record<string, number> = { s: 1000, sec: 1000, second: 1000, m: 60_000, min: 60_000, minute: 60_000, h: 3_600_000, hr: 3_600_000, hour: 3_600_000 };
const EXAMPLES = 'e.g. 60/min, 10/s, 3600/h, or 60/min:gpt-5 for one model (or adapter)';
/** Largest N accepted in N/unit. */
export const MAX_RATE_LIMIT = 1_000_000;

/** QUEUE_ERR_BAD_RATE_LIMIT for `spec`: what was wrong, and examples that work. */
function badRate(spec: string, why: string): VncuaError {
  return new VncuaError('QUEUE_ERR_BAD_RATE_LIMIT', `Bad --rate-limit ${JSON.stringify(spec)}: ${why}; ${EXAMPLES}.`, { details: { spec } });
}

/** Parse one rule: `N/s`, `N/min`, `N/h`, optionally `:NAME` (a model or adapter); QUEUE_ERR_BAD_RATE_LIMIT when malformed. */
export function parseRateLimit(spec: string): RateRule {
  const s = spec.trim();
  const m = /^([^/:]*)\/([^:]*)(?::(.*))?$/s.exec(s);
  if (!m) return fail(spec, 'expected N/unit');
  const [, n, unit, scope] = m as unknown as [string, string, string, string | undefined];
  if (!/^\d+$/.test(n)) return fail(spec, `the count ${JSON.stringify(n)} is not a whole number`);
  const limit = Number(n);
  if (limit < 1 || limit > MAX_RATE_LIMIT) return fail(spec, `the count must be 1..${MAX_RATE_LIMIT}`);
  const periodMs = UNITS[unit.toLowerCase()];
  if (periodMs === undefined) return fail(spec, `the unit ${JSON.stringify(unit)} is not s, min or h`);
  if (scope !== undefined && !/^[^\s,]+$/.test(scope)) return fail(spec, 'the name after ":" must be a model or adapter name, without spaces');
  return { limit, periodMs, scope: scope ?? null, spec: s };
}

function fail(spec: string, why: string): never {
  throw badRate(spec, why);
}

/** Parse every rule of `specs` (each may hold several, comma-separated: `60/min,10/s:gpt-5`); QUEUE_ERR_BAD_RATE_LIMIT on the first bad one. */
export function parseRateLimits(specs: string | readonly string[]): RateRule[] {
  const all = (typeof specs === 'string' ? [specs] : specs).flatMap((s) => s.split(','));
  return all.map((s) => {
    if (s.trim() === '') throw badRate(s, 'an empty rule');
    return parseRateLimit(s);
  });
}

/** The rules that count `call`: those over every call, and those naming its model or adapter. */
export function rulesFor(rules: readonly RateRule[], call: RateCall): RateRule[] {
  return rules.filter((r) => r.scope === null || r.scope === call.model || r.scope === call.adapter);
}

/** The name of a rule's log (rules with the same scope and period share one, whatever their N). */
export function ruleKey(rule: RateRule): string {
  return `${rule.periodMs}:${rule.scope ?? '*'}`;
}

/** The name of the backoff a 429 on `call` sets and its later calls honour: its model's, else its adapter's. */
export function backoffKey(call: RateCall): string {
  return call.model ? `model:${call.model}` : `adapter:${call.adapter}`;
}

/** QUEUE_ERR_RATE_LIMIT_TIMEOUT: acquire waited `timeoutMs` in vain. */
export function rateWaitTimeout(call: RateCall, timeoutMs: number): VncuaError {
  return new VncuaError(
    'QUEUE_ERR_RATE_LIMIT_TIMEOUT',
    `A ${call.model ?? call.adapter} call waited ${timeoutMs} ms for the rate limit (--rate-limit, or a 429's backoff) in vain; raise the limit or the timeout.`,
    { details: { ...call, timeoutMs } },
  );
}

/** The cancellation of a gate's wait: the signal's reason when it is a VncuaError, else AGENT_ERR_CANCELLED. */
export const gateCancel: MapError = (c) => {
  const reason = c.kind === 'aborted' ? c.reason : undefined;
  return reason instanceof VncuaError
    ? reason
    : new VncuaError('AGENT_ERR_CANCELLED', "the wait for the rate limit was cancelled through the run's AbortSignal", { cause: reason });
};

/** The listeners of onBackoff(), for gate implementations. */
export class BackoffListeners {
  readonly #listeners = new Set<(event: RateBackoffEvent) => void>();

  /** Add a listener; returns the way to remove it. */
  add(listener: (event: RateBackoffEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Tell every listener (a listener that throws is skipped: a backoff is never undone by one). */
  emit(event: RateBackoffEvent): void {
    for (const l of this.#listeners) {
      try {
        l(event);
      } catch {
        // a listener's own failure is its business
      }
    }
  }
}

/**
 * Wait until `tryOnce` admits: it answers the wait in ms (0: admitted, with `at`). Shared by the gates: sleeps
 * are cut short by `signal` (its reason) and by `timeoutMs` (QUEUE_ERR_RATE_LIMIT_TIMEOUT).
 */
export async function waitForGrant(
  call: RateCall,
  tryOnce: () => Promise<{ waitMs: number; at: number }> | { waitMs: number; at: number },
  options: AcquireOptions = {},
): Promise<RateGrant> {
  const t0 = performance.now();
  const { signal } = options;
  const timeoutMs = options.timeoutMs ?? Infinity;
  for (;;) {
    if (signal?.aborted) throw gateCancel({ kind: 'aborted', reason: signal.reason });
    const { waitMs, at } = await tryOnce();
    if (waitMs <= 0) return { at, waitedMs: performance.now() - t0 };
    const left = timeoutMs - (performance.now() - t0);
    if (left <= 0) throw rateWaitTimeout(call, timeoutMs);
    await sleep(Math.max(1, Math.min(Math.ceil(waitMs), Math.ceil(left))), signal, gateCancel);
  }
}

/** The in-process gate: the sliding logs and backoffs live in this process (every runner of one `vncua eval` shares it). */
export class LocalRateGate implements RateGate {
  /** The rules it enforces. */
  readonly rules: readonly RateRule[];
  readonly #logs = new Map<string, number[]>();
  readonly #backoffs = new Map<string, number>();
  readonly #listeners = new BackoffListeners();
  readonly #now: () => number;

  /** `rules`: parsed rules (parseRateLimits), or specs to parse. */
  constructor(rules: readonly RateRule[] | string | readonly string[] = [], options: { now?: () => number } = {}) {
    this.rules = typeof rules === 'string' || (rules.length > 0 && typeof rules[0] === 'string') ? parseRateLimits(rules as string | string[]) : (rules as RateRule[]);
    this.#now = options.now ?? (() => performance.now());
  }

  /** Resolve when one request for `call` may go (every matching rule admits it, no backoff holds it). */
  acquire(call: RateCall, options: AcquireOptions = {}): Promise<RateGrant> {
    const rules = rulesFor(this.rules, call);
    const bk = backoffKey(call);
    return waitForGrant(call, () => this.#try(rules, bk), options);
  }

  /** One admission attempt: the wait in ms, or 0 and the request logged in every matching rule. */
  #try(rules: readonly RateRule[], bk: string): { waitMs: number; at: number } {
    const now = this.#now();
    let wait = (this.#backoffs.get(bk) ?? 0) - now;
    for (const r of rules) {
      const key = ruleKey(r);
      const log = this.#logs.get(key) ?? [];
      // Keep (now - period, now]: an entry at exactly now - period has left the window.
      let drop = 0;
      while (drop < log.length && log[drop]! <= now - r.periodMs) drop++;
      if (drop > 0) log.splice(0, drop);
      this.#logs.set(key, log);
      if (log.length >= r.limit) wait = Math.max(wait, log[log.length - r.limit]! + r.periodMs - now);
    }
    if (wait > 0) return { waitMs: wait, at: now };
    for (const r of rules) this.#logs.get(ruleKey(r))!.push(now);
    return { waitMs: 0, at: now };
  }

  /** Requests admitted in the current window of the busiest rule that counts `call` (0 when none does). */
  admitted(call: RateCall): number {
    const now = this.#now();
    return Math.max(0, ...rulesFor(this.rules, call).map((r) => (this.#logs.get(ruleKey(r)) ?? []).filter((t) => t > now - r.periodMs).length));
  }

  /** Calls for the same model (or adapter) wait `ms` from now; listeners are told. */
  async backoff(call: RateCall, ms: number, reason: string): Promise<RateBackoff> {
    const now = this.#now();
    const bk = backoffKey(call);
    const until = Math.max(this.#backoffs.get(bk) ?? 0, now + Math.max(0, ms));
    this.#backoffs.set(bk, until);
    this.#listeners.emit({ call, ms, reason });
    return { from: now, until };
  }

  /** Be told of each backoff; returns the way to stop listening. */
  onBackoff(listener: (event: RateBackoffEvent) => void): () => void {
    return this.#listeners.add(listener);
  }
}
