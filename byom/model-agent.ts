/**
 * `ModelAgent`: the base of every model adapter in byom/. It adds to `Agent` what all adapters
 * share — the model options, one way to call a model (`callModel`), and the loop guards:
 * - a wall-clock budget (`budgetMs`): past it the run ends at once with status `timeout` (time the loop is
 *   paused, or taken over by a person, does not count);
 * - stuck detection: the same action (same name and params) performed `stuckRepeats` times in a
 *   row, or `stuckScreens` identical screens in a row with actions in between, ends the run with
 *   status `stuck` instead of burning tokens;
 * - max steps is run()'s own `maxSteps`.
 *
 * Adapters observe with `observe()`, act with `perform({ action, params })` (trace action names and
 * params, snake_case), and call their model with `callModel({ send, read, mapError })`: it gives
 * `send` a per-call signal linked to the run's, maps what `send` throws, and puts the call's
 * latency, usage, response id, model and attempts into the next trace entry's `meta.model_calls`
 * (and the request's size into `meta.request_bytes`) when its requests went through `modelFetch()`,
 * with the usage read into `tokens` and priced into `cost_usd` (byom/pricing.ts; the `prices` option
 * first): result.json sums them (harness/trace/model-calls.ts).
 *
 * Rate limit: when the Agent options carry a `rateGate` (harness/agent/rate-gate.ts; `--rate-limit`, shared by every
 * run of a suite or of a queue's workers), every HTTP request to the model goes through it: callModel acquires before
 * `send` (outside the SDK's request timeout), and modelFetch() acquires again for each retry the SDK makes within the
 * call, so each request is counted once. A 429 seen by modelFetch() reports a backoff to the gate (Retry-After /
 * retry-after-ms when the API sent one, else 1 s), so every run sharing the gate waits. Adapters with their own HTTP
 * client call `gateRequest()` before each request and `reportRateLimited()` on a 429 (byom/http). Calls are keyed by `rateCall()`: the class's
 * `adapterName` and the model. Time spent waiting at the gate is noted as the call's `rate_wait_ms` and, like time
 * paused, does not count against `budgetMs` (it depends on the other runs, not on this one).
 *
 * Cost caps: callModel first checks the run's `maxCostUsd` and the suite's `costBudget` (Agent options; Agent.stopAtCostCap):
 * once the calls recorded so far reach one, the run ends with status `cost_cap` instead of making the call.
 *
 * Options: each adapter's options are a zod schema that extends `modelAgentOptionsSchema` (itself
 * the Agent's `agentOptionsSchema` plus ModelOptions) and is handed to this constructor, which
 * validates them (AGENT_ERR_BAD_OPTIONS naming the field, unknown keys included) and keeps the
 * parsed result in `this.settings`.
 */
import { registerSecret } from '../harness/secrets/registry.ts';
import { z } from 'zod';
import { follow } from '../harness/cancel.ts';
import {
  Agent,
  agentOptionsSchema,
  applyAction,
  type AgentOptions,
  type AgentRunResult,
  type CaptureScreenOptions,
  type RunOptions,
  type ScreenCapture,
} from '../harness/agent/index.ts';
import type { ActionStep } from '../harness/agent/index.ts';
import { DEFAULT_BACKOFF_MS, type RateCall } from '../harness/agent/rate-gate.ts';
import type { ScreenSize } from '../harness/desktop/size.ts';
import { nonNegative, parseOptions, screenshotSizeSchema } from './options.ts';
import { parseRetryAfter } from './http/retry.ts';
import { costUsd, findPrice, pricesProblem, traceTokens, usageTokens, type Prices } from './pricing.ts';

/** Options shared by every model adapter (besides the Agent's). */
export interface ModelOptions {
  /** The model name sent to the API. */
  model?: string;
  /** The API key (adapters also read their provider's environment variable). */
  apiKey?: string;
  /** Base URL of the API, to point the adapter at any compatible server. */
  baseURL?: string;
  /** Wall-clock budget of one run in ms; past it the run ends with status `timeout` (default: none). Time paused or taken over by a person does not count. */
  budgetMs?: number;
  /** The same action this many times in a row ends the run as `stuck` (default 5; 0 disables). */
  stuckRepeats?: number;
  /** This many identical screens in a row, with actions in between, end the run as `stuck` (default 5; 0 disables). */
  stuckScreens?: number;
  /** Scale screenshots to this size before sending them (coordinates are mapped back by the adapter). */
  screenshotSize?: ScreenSize;
  /** Your rates per model (USD per 1M tokens), before byom/pricing.ts's table: `{ "my-model": { input: 1, output: 4 } }`. */
  prices?: Prices;
}

/** The options of a ModelAgent: the Agent's plus ModelOptions. */
export type ModelAgentOptions = AgentOptions & ModelOptions;

/** One model call, for the trace (`meta.model_calls`). */
export interface ModelCallInfo {
  /** Wall time of the call in ms. */
  latencyMs: number;
  /** Token usage as the API returned it. */
  usage?: unknown;
  /** The API's id of the response, if any. */
  responseId?: string;
  /** The model that answered. */
  model?: string;
  /** Attempts made (1 when the first succeeded). */
  attempts?: number;
  /** Time the call waited at the rate gate, in ms (its requests, retries included). */
  rateWaitMs?: number;
}

/** What callModel gives `send`. */
export interface ModelCallContext {
  /** Aborts (with the run's reason) when the run is cancelled; a fresh signal per call, since the SDKs never remove the listener they add to it. */
  signal: AbortSignal;
}

/** What an adapter reads from a model's answer: the value callModel returns, and the call's accounting for the trace. */
export interface ModelReply<T> {
  value: T;
  usage?: unknown;
  responseId?: string;
  model?: string;
  /** Attempts, when the client counts them itself (else those counted by modelFetch(), if it was used). */
  attempts?: number;
}

/** One model call for callModel: send the request, read (and check) the answer, map errors. */
export interface ModelCall<R, T> {
  /** Send the request with `ctx.signal`. */
  send(ctx: ModelCallContext): Promise<R>;
  /** Check the raw answer and pick out what the adapter needs; a throw here is not noted as a call. */
  read(raw: R): ModelReply<T>;
  /** Map what `send` threw (default: rethrown as is); `runSignal` is the run's signal. */
  mapError?(e: unknown, runSignal: AbortSignal): unknown;
}

/** A `fetch` as the SDK clients take it. */
export type FetchFn = (url: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** Schema of a ModelAgent's options: the Agent's schema (strict: unknown keys rejected) plus ModelOptions. Adapters extend it. */
export const modelAgentOptionsSchema = agentOptionsSchema.extend({
  model: z.string({ error: 'must be a non-empty string' }).min(1, 'must be a non-empty string').optional(),
  apiKey: z.string({ error: 'must be a string' }).optional(),
  baseURL: z.string({ error: 'must be a URL' }).min(1, 'must be a URL').optional(),
  budgetMs: nonNegative.optional(),
  stuckRepeats: nonNegative.optional(),
  stuckScreens: nonNegative.optional(),
  screenshotSize: screenshotSizeSchema.optional(),
  prices: z
    .custom<Prices>()
    .superRefine((v, ctx) => {
      const problem = pricesProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
});

/** Settings of model adapters that hold a credential (registered secret: harness/secrets/registry.ts). */
const SECRET_SETTINGS = ['apiKey', 'token', 'clientSecret'];
/** Environment variables the shipped adapters read credentials from. */
const API_KEY_ENV = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'VNCUA_CHAT_API_KEY', 'VNCUA_PLANNER_TOKEN', 'VNCUA_PLANNER_CLIENT_SECRET'];

/** The Agent's keys (handed to `super`) and the ModelAgent's own (kept in `model`). */
const AGENT_KEYS = Object.keys(agentOptionsSchema.shape);
const MODEL_KEYS = Object.keys(modelAgentOptionsSchema.shape).filter((k) => !AGENT_KEYS.includes(k));
/** The entries of `o` under `keys` that are defined. */
function pick(o: object, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k, v]) => keys.includes(k) && v !== undefined));
}

/** Default of stuckRepeats and stuckScreens. */
export const DEFAULT_STUCK_LIMIT = 5;

/** Base class of the model adapters: Agent + model options + one way to call a model + loop guards. `S`: the adapter's parsed options. */
export abstract class ModelAgent<S extends ModelOptions = ModelOptions> extends Agent {
  /** The adapter's name for rate-limit rules (`--rate-limit 60/min:openai-cua`) and backoffs; each adapter sets its own. */
  static adapterName = 'model';
  /** The model options as given. */
  readonly model: Readonly<ModelOptions>;
  /** All the options as the adapter's schema parsed them (the Agent's and the ModelAgent's included). */
  protected readonly settings: Readonly<S>;
  #lastAction = '';
  #sameActions = 0;
  #lastScreen = '';
  #sameScreens = 0;
  #actedSinceObserve = false;
  #budgetTimer: NodeJS.Timeout | undefined;
  /** Requests sent through modelFetch() during the current call, and the size of the last one's body. */
  #attempts = 0;
  #requestBytes = 0;
  /** Models (or '' for calls that named none) already noted as unpriced in this run. */
  #unpriced = new Set<string>();
  /** callModel acquired the gate for the request `send` is about to make (modelFetch() must not acquire it again). */
  #preAcquired = false;
  /** Time waited at the rate gate: during the current call, in this run, and since when a wait is going on. */
  #callRateWaitMs = 0;
  #runRateWaitMs = 0;
  #rateWaitSince: number | null = null;

  /**
   * Validates `options` with `schema` (an extension of modelAgentOptionsSchema; AGENT_ERR_BAD_OPTIONS naming the field and
   * the class), hands the Agent its options and keeps the rest. Connects nothing.
   */
  constructor(options: ModelAgentOptions, schema: z.ZodType<S> = modelAgentOptionsSchema as unknown as z.ZodType<S>) {
    const settings = parseOptions(schema, options, new.target.name);
    super(pick(settings, AGENT_KEYS) as unknown as AgentOptions);
    this.model = Object.freeze(pick(settings, MODEL_KEYS) as ModelOptions);
    this.settings = Object.freeze(settings);
    // API keys (the option, or the environment variables the adapters read) are secrets: never written, never printed.
    const given = settings as Record<string, unknown>;
    for (const k of SECRET_SETTINGS) if (typeof given[k] === 'string') registerSecret(k, given[k]);
    for (const k of API_KEY_ENV) if (process.env[k]) registerSecret(k, process.env[k]);
  }

  /** run() with the wall-clock budget armed; the guards start afresh each run. */
  override async run(options: RunOptions = {}): Promise<AgentRunResult> {
    this.#lastAction = '';
    this.#sameActions = 0;
    this.#lastScreen = '';
    this.#sameScreens = 0;
    this.#actedSinceObserve = false;
    this.#unpriced.clear();
    this.#runRateWaitMs = 0;
    const budget = this.model.budgetMs;
    if (budget !== undefined && budget > 0) {
      // Wall-clock time the loop spends paused (pause(), askForHelp(), a person's takeover) is not the model's: it
      // does not count, nor does time waiting at the rate gate. The timer re-arms for what is left until that much time has passed.
      const t0 = performance.now();
      const check = () => {
        const now = performance.now();
        const gated = this.#runRateWaitMs + (this.#rateWaitSince === null ? 0 : now - this.#rateWaitSince);
        const left = budget - (now - t0 - this.pausedMs - gated);
        if (left > 0) this.#budgetTimer = setTimeout(check, Math.ceil(left));
        else
          this.endRun('timeout', {
            code: 'AGENT_ERR_BUDGET_EXCEEDED',
            message: `The run used up its wall-clock budget of ${budget} ms (budgetMs; time paused or taken over by a person not counted).`,
          });
      };
      this.#budgetTimer = setTimeout(check, budget);
    }
    try {
      return await super.run(options);
    } finally {
      clearTimeout(this.#budgetTimer);
      this.#budgetTimer = undefined;
    }
  }

  /**
   * Capture the screen for the model (scaled to `screenshotSize` unless `options.size` says otherwise). Seeing the same
   * screen `stuckScreens` times in a row, with actions in between, ends the run as `stuck`.
   */
  protected async observe(options: CaptureScreenOptions = {}): Promise<ScreenCapture> {
    const size = options.size ?? this.model.screenshotSize;
    const shot = await this.captureScreen(size ? { ...options, size } : options);
    const limit = this.model.stuckScreens ?? DEFAULT_STUCK_LIMIT;
    if (shot.hash === this.#lastScreen) {
      if (this.#actedSinceObserve) this.#sameScreens++;
    } else {
      this.#lastScreen = shot.hash;
      this.#sameScreens = 1;
    }
    this.#actedSinceObserve = false;
    if (limit > 0 && this.#sameScreens >= limit) {
      this.endRun('stuck', {
        code: 'AGENT_ERR_STUCK',
        message: `The screen stayed the same over ${this.#sameScreens} observations in a row with actions in between (stuckScreens: ${limit}).`,
      });
    }
    return shot;
  }

  /**
   * The navigation guard's notices since the last prompt, as text for the next one: "domain not allowed: URL (rule)"
   * lines and a hint to take another path; '' when nothing was blocked (or no allowedDomains / blockedDomains).
   */
  protected domainObservation(): string {
    const notices = this.takeDomainNotices();
    if (notices.length === 0) return '';
    return `${notices.join('\n')}\nThe browser blocked these requests (allowedDomains / blockedDomains): choose another way to do the task.`;
  }

  /**
   * Perform one action given as a trace step (`{ action: 'mouse_click', params: { position, button, click_type } }`).
   * The same action `stuckRepeats` times in a row ends the run as `stuck` after it is performed.
   */
  protected async perform(step: ActionStep, index = 0): Promise<void> {
    await applyAction(this, step, index);
    this.#actedSinceObserve = true;
    const key = JSON.stringify([step.action, step.params ?? {}]);
    if (key === this.#lastAction) this.#sameActions++;
    else {
      this.#lastAction = key;
      this.#sameActions = 1;
    }
    const limit = this.model.stuckRepeats ?? DEFAULT_STUCK_LIMIT;
    if (limit > 0 && this.#sameActions >= limit) {
      this.endRun('stuck', { code: 'AGENT_ERR_STUCK', message: `The model asked for the same action ${this.#sameActions} times in a row: ${key} (stuckRepeats: ${limit}).` });
    }
  }

  /**
   * A fetch for an SDK client (over `base`, default the global fetch) that counts each request and its body size for
   * callModel, passes each request through the rate gate (the first of a call was let through by callModel; the SDK's
   * retries are not) and reports a 429 to it.
   */
  protected modelFetch(base?: FetchFn): FetchFn {
    return async (url, init) => {
      await this.gateRequest(init?.signal ?? undefined);
      const body = init?.body;
      this.#attempts++;
      this.#requestBytes = typeof body === 'string' ? Buffer.byteLength(body) : 0;
      const res = await (base ?? fetch)(url, init);
      if (res.status === 429) {
        const ms = retryAfterMs(res.headers);
        const where = typeof url === 'string' ? url : url instanceof URL ? url.href : url.url;
        await this.reportRateLimited(ms, `HTTP 429 from ${where.split('?')[0]}${ms === null ? '' : ` (retry after ${ms} ms)`}`);
      }
      return res;
    };
  }

  /** What this agent's model calls are keyed by at the rate gate: its class's `adapterName` and the model option. */
  protected rateCall(): RateCall {
    return { adapter: (this.constructor as typeof ModelAgent).adapterName, model: this.model.model };
  }

  /**
   * Call before each HTTP request to the model inside callModel's `send` (modelFetch() does): the first request of a
   * call was let through by callModel already, every later one (a retry) waits at the rate gate.
   */
  protected async gateRequest(signal?: AbortSignal): Promise<void> {
    if (this.#preAcquired) this.#preAcquired = false;
    else await this.awaitRateGate(signal);
  }

  /**
   * Wait at the rate gate (AgentOptions.rateGate) until one request to the model may go; at once without a gate.
   * callModel does it before `send`, gateRequest() for each retry. Rejects with the signal's reason when it aborts.
   */
  protected async awaitRateGate(signal?: AbortSignal): Promise<void> {
    const gate = this.options.rateGate;
    if (!gate) return;
    const t0 = performance.now();
    this.#rateWaitSince = t0;
    try {
      await gate.acquire(this.rateCall(), { signal });
    } finally {
      const waited = performance.now() - t0;
      this.#rateWaitSince = null;
      this.#callRateWaitMs += waited;
      this.#runRateWaitMs += waited;
    }
  }

  /**
   * The model API answered 429: tell the rate gate, so that every run sharing it waits `retryAfterMs` (the API's
   * Retry-After; null: 1 s). Never throws (a gate that cannot record it leaves the call's own retries to cope).
   */
  protected async reportRateLimited(retryAfterMs: number | null, reason: string): Promise<void> {
    const gate = this.options.rateGate;
    if (!gate) return;
    try {
      await gate.backoff(this.rateCall(), retryAfterMs ?? DEFAULT_BACKOFF_MS, reason);
    } catch {
      // the call's own retry still waits as the SDK (or client) decides
    }
  }

  /**
   * Call the model once: `send` gets a signal linked to the run's; what it throws goes through `mapError`; `read` checks
   * the answer. The call's latency, usage, response id, model and attempts go into the next trace entry's `meta.model_calls`,
   * and the request's size into `meta.request_bytes` when it went through modelFetch(). Returns `read`'s value.
   */
  protected async callModel<R, T>(call: ModelCall<R, T>): Promise<T> {
    // A cost cap reached (maxCostUsd, or the suite's costBudget): the run ends `cost_cap` and no call is made.
    if (this.stopAtCostCap()) throw this.signal.reason;
    this.#attempts = 0;
    this.#requestBytes = 0;
    this.#callRateWaitMs = 0;
    const run = this.signal;
    const own = new AbortController();
    const unfollow = follow(run, own);
    let raw: R;
    let t0 = performance.now();
    try {
      // The gate's wait comes before the call's clock (latency) and the SDK's request timeout start.
      await this.awaitRateGate(own.signal);
      this.#preAcquired = this.options.rateGate != null;
      t0 = performance.now();
      raw = await call.send({ signal: own.signal });
    } catch (e) {
      throw call.mapError ? call.mapError(e, run) : e;
    } finally {
      this.#preAcquired = false;
      unfollow();
    }
    const latencyMs = performance.now() - t0;
    const { value, ...reply } = call.read(raw);
    const counted = this.#attempts > 0;
    const waited = this.#callRateWaitMs;
    this.noteModelCall({
      latencyMs,
      ...reply,
      ...(reply.attempts === undefined && counted ? { attempts: this.#attempts } : {}),
      ...(waited > 0 && this.options.rateGate ? { rateWaitMs: waited } : {}),
    });
    if (counted) this.attachMeta({ request_bytes: [this.#requestBytes] });
    return value;
  }

  /**
   * Record one model call into the next trace entry's `meta.model_calls` (callModel does it for its calls): latency,
   * usage, response id, model, attempts, and from the usage `tokens` and, when the model has a price (the `prices`
   * option, else byom/pricing.ts's table), `cost_usd`. A model with no price gets a note in `meta.price_notes`, once a run.
   */
  protected noteModelCall(info: ModelCallInfo): void {
    const call: Record<string, unknown> = { latency_ms: Math.round(info.latencyMs * 1000) / 1000 };
    if (info.usage !== undefined) call.usage = info.usage;
    if (info.responseId !== undefined) call.response_id = info.responseId;
    if (info.model !== undefined) call.model = info.model;
    if (info.attempts !== undefined) call.attempts = info.attempts;
    if (info.rateWaitMs !== undefined) call.rate_wait_ms = Math.round(info.rateWaitMs * 1000) / 1000;
    const tokens = info.usage === undefined ? null : usageTokens(info.usage);
    if (tokens) {
      call.tokens = traceTokens(tokens);
      const model = info.model ?? this.model.model;
      const found = model === undefined ? null : findPrice(model, this.model.prices);
      if (found) call.cost_usd = costUsd(tokens, found.price);
      else this.#noteUnpriced(model);
    }
    this.attachMeta({ model_calls: [call] });
  }

  /** Once a run per model: why its calls have no cost_usd, and how to give a price. */
  #noteUnpriced(model: string | undefined): void {
    if (this.#unpriced.has(model ?? '')) return;
    this.#unpriced.add(model ?? '');
    const example = JSON.stringify({ [model ?? 'MODEL']: { input: 1, output: 4 } });
    const how = `give one with the prices option or \`-- --prices FILE\` (JSON, e.g. ${example} in USD per 1M tokens)`;
    this.attachMeta({
      price_notes: [
        model === undefined
          ? `A model call named no model, so its cost is unknown (cost_usd left out): set the model option and ${how}.`
          : `No price known for model ${JSON.stringify(model)}: its calls have no cost_usd and result.json no cost_usd; ${how}.`,
      ],
    });
  }
}

/** The wait a 429 asks for, in ms: `retry-after-ms` (OpenAI), else `retry-after` (seconds or an HTTP date); null when neither. */
export function retryAfterMs(headers: Headers): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  return parseRetryAfter(headers.get('retry-after') ?? undefined);
}
