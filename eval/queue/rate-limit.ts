/**
 * The rate limit of model calls across a queue's workers: `RedisRateGate`, the rate gate of
 * harness/agent/rate-gate.ts kept in Redis, so `--rate-limit 60/min` holds across every worker process and machine,
 * and `pauseQueueOnBackoff()`, which passes a 429's backoff on to BullMQ so the queue stops handing out runs.
 *
 * Why not BullMQ's limiter alone: BullMQ (6.7.0) limits how many JOBS start per duration (Worker `limiter: { max,
 * duration }`, or `queue.setGlobalRateLimit(max, duration)`): the job counter is checked when a worker moves the
 * next job to active. A job here is a whole run, which makes one model call per step (up to maxSteps, 50 by default),
 * at times no one can predict; counting runs cannot hold "60 model calls a minute". So:
 * - the model calls are counted by this gate: one atomic Lua script per request in Redis (a sliding log per rule:
 *   a request is admitted when fewer than N admitted ones lie in the last period, on Redis's clock, so any span of one
 *   period holds at most N, whichever worker made them: the window rule in harness/agent/rate-gate.ts);
 * - a 429 sets a backoff key in Redis that every worker's calls for that model honour, and ALSO goes to BullMQ through
 *   `pauseQueueOnBackoff(gate, worker)`: `worker.rateLimit(ms)` sets the queue's limiter key for `ms`, so no worker
 *   starts a new run meanwhile (a run started then would only wait at the gate with its desktop up, and its budget
 *   clock going). BullMQ honours that key only when a limiter is configured (its moveToActive script checks the key
 *   against the limiter's `max`; without one, rateLimit() does nothing): the worker must be created with
 *   `limiter: QUEUE_BACKOFF_LIMITER`, a limiter so high (a billion runs a second) that it never limits by itself.
 *
 * Redis keys: `<prefix>:log:<periodMs>:<scope>` (sorted set of admitted requests, scored by Redis time in µs; it
 * expires one period after its last request) and `<prefix>:backoff:model:<name>` / `adapter:<name>` (the time until
 * when calls wait, expiring then). The prefix defaults to `vncua:rate`: limits are per Redis database, shared by every
 * suite on it (an API key's quota does not care which suite spends it). Rules of the same scope and period share one
 * log whatever their N. A lost connection is waited out (the gate retries every 250 ms, cut short by the signal);
 * an error Redis itself answers is QUEUE_ERR_RATE_GATE.
 */
import type { Redis } from 'ioredis';
import {
  BackoffListeners,
  backoffKey,
  parseRateLimits,
  ruleKey,
  rulesFor,
  waitForGrant,
  type AcquireOptions,
  type RateBackoff,
  type RateBackoffEvent,
  type RateCall,
  type RateGate,
  type RateGrant,
  type RateRule,
} from '../../harness/agent/rate-gate.ts';
import { VncuaError } from '../../harness/errors.ts';

/** A Worker's `limiter` option that never limits by itself but lets `worker.rateLimit(ms)` pause the queue. */
export const QUEUE_BACKOFF_LIMITER = Object.freeze({ max: 1_000_000_000, duration: 1000 });

/** Default key prefix of the Redis gate. */
export const DEFAULT_RATE_PREFIX = 'vncua:rate';

/** How long the gate waits before trying again when Redis cannot be reached, in ms. */
const RECONNECT_RETRY_MS = 250;

// KEYS: the backoff key, then one log per rule. ARGV: a unique member id, then limit and period (µs) per rule.
// Returns { wait µs (0: admitted), now µs }.
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local wait = 0
local b = redis.call('GET', KEYS[1])
if b then
  local w = tonumber(b) - now
  if w > wait then wait = w end
end
local n = #KEYS - 1
for i = 1, n do
  local key = KEYS[i + 1]
  local limit = tonumber(ARGV[2 * i])
  local period = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now - period))
  local count = redis.call('ZCARD', key)
  if count >= limit then
    local e = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
    local w = tonumber(e[2]) + period - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return { wait, now } end
for i = 1, n do
  local key = KEYS[i + 1]
  redis.call('ZADD', key, string.format('%.0f', now), ARGV[1])
  redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[2 * i + 1]) / 1000) + 1000)
end
return { 0, now }
`;

// KEYS: the backoff key. ARGV: the wait in ms. Sets the key to now + wait (µs) unless a later one is set.
// Returns { now µs, until µs }.
const BACKOFF_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local ms = math.max(0, tonumber(ARGV[1]))
local untilv = now + ms * 1000
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < untilv then
  redis.call('SET', KEYS[1], string.format('%.0f', untilv), 'PX', math.max(1, math.ceil(ms)))
else
  untilv = cur
end
return { now, untilv }
`;

/** Options of RedisRateGate. */
export interface RedisRateGateOptions {
  /** An ioredis connection (the worker's; not closed by the gate). Give it `maxRetriesPerRequest: null`, as BullMQ wants. */
  connection: Redis;
  /** The rules (parseRateLimits), or specs to parse; none: only 429 backoffs are shared. */
  rules?: readonly RateRule[] | string | readonly string[];
  /** Key prefix (default `vncua:rate`). */
  prefix?: string;
}

type ScriptFn = (...args: Array<string | number>) => Promise<[number, number]>;

let members = 0;

/** The rate gate kept in Redis: the limit holds, and a 429 backs off, across every process that uses the same Redis. */
export class RedisRateGate implements RateGate {
  /** The rules it enforces. */
  readonly rules: readonly RateRule[];
  /** Its key prefix. */
  readonly prefix: string;
  readonly #redis: Redis;
  readonly #listeners = new BackoffListeners();
  readonly #acquire: ScriptFn;
  readonly #backoff: ScriptFn;

  /** Define the gate's scripts on `connection` (sends nothing yet); QUEUE_ERR_BAD_RATE_LIMIT for a bad rule. */
  constructor(options: RedisRateGateOptions) {
    const r = options.rules ?? [];
    this.rules = typeof r === 'string' || (r.length > 0 && typeof r[0] === 'string') ? parseRateLimits(r as string | string[]) : (r as RateRule[]);
    this.prefix = options.prefix ?? DEFAULT_RATE_PREFIX;
    this.#redis = options.connection;
    // defineCommand: EVALSHA, falling back to EVAL after a Redis restart forgot the script.
    this.#redis.defineCommand('vncuaRateAcquire', { lua: ACQUIRE_LUA });
    this.#redis.defineCommand('vncuaRateBackoff', { lua: BACKOFF_LUA, numberOfKeys: 1 });
    const commands = this.#redis as unknown as Record<string, ScriptFn>;
    this.#acquire = commands.vncuaRateAcquire!.bind(this.#redis);
    this.#backoff = commands.vncuaRateBackoff!.bind(this.#redis);
  }

  /** Resolve when one request for `call` may go: every matching rule admits it (on Redis's clock) and no backoff holds it. */
  acquire(call: RateCall, options: AcquireOptions = {}): Promise<RateGrant> {
    const rules = rulesFor(this.rules, call);
    const keys = [`${this.prefix}:backoff:${backoffKey(call)}`, ...rules.map((r) => `${this.prefix}:log:${ruleKey(r)}`)];
    const limits = rules.flatMap((r) => [r.limit, r.periodMs * 1000]);
    const member = `${process.pid}.${++members}.${Math.random().toString(36).slice(2, 10)}`;
    return waitForGrant(
      call,
      async () => {
        try {
          const [waitUs, nowUs] = await this.#acquire(keys.length, ...keys, member, ...limits);
          return { waitMs: waitUs / 1000, at: nowUs / 1000 };
        } catch (e) {
          return { waitMs: this.#transient(e), at: 0 };
        }
      },
      options,
    );
  }

  /** Calls for the same model (or adapter) on every process wait `ms` from now (Redis's clock); this gate's listeners are told. */
  async backoff(call: RateCall, ms: number, reason: string): Promise<RateBackoff> {
    const key = `${this.prefix}:backoff:${backoffKey(call)}`;
    let out: [number, number];
    try {
      out = await this.#backoff(key, Math.max(0, Math.ceil(ms)));
    } finally {
      // BullMQ's pause does not depend on this gate's Redis answering.
      this.#listeners.emit({ call, ms, reason });
    }
    return { from: out[0] / 1000, until: out[1] / 1000 };
  }

  /** Be told of each backoff reported through this gate object (pauseQueueOnBackoff uses it). */
  onBackoff(listener: (event: RateBackoffEvent) => void): () => void {
    return this.#listeners.add(listener);
  }

  /** The wait before trying again after `e` when Redis is out of reach; QUEUE_ERR_RATE_GATE when Redis answered an error, or the connection was closed for good. */
  #transient(e: unknown): number {
    const err = e as Error;
    if (err?.name === 'ReplyError' || this.#redis.status === 'end') {
      throw new VncuaError(
        'QUEUE_ERR_RATE_GATE',
        `The rate gate's Redis ${this.#redis.status === 'end' ? 'connection was closed' : `answered an error (${err?.message})`}; the model call was not made.`,
        { cause: e, details: { status: this.#redis.status } },
      );
    }
    return RECONNECT_RETRY_MS;
  }
}

/** What pauseQueueOnBackoff() pauses: a BullMQ Worker (or Queue): its `rateLimit(ms)`. */
export interface RateLimitable {
  rateLimit(ms: number): Promise<void>;
}

/**
 * Pass every backoff reported through `gate` on to BullMQ: `target.rateLimit(ms)` stops every worker of the queue from
 * starting a run for `ms` (the worker needs `limiter: QUEUE_BACKOFF_LIMITER`, see the module comment). Runs already
 * going are not touched: their calls wait at the gate. `onError` hears a failed rateLimit (default: ignored, the gate's
 * own backoff still holds). Returns the way to stop.
 */
export function pauseQueueOnBackoff(gate: Pick<RateGate, 'onBackoff'>, target: RateLimitable, onError: (e: unknown) => void = () => {}): () => void {
  return gate.onBackoff(({ ms }) => {
    if (ms > 0) target.rateLimit(Math.ceil(ms)).catch(onError);
  });
}
