/**
 * `HttpPlannerAgent`: a remote planner as an agent (like uitask's UiPath reference planner).
 * Each act() takes a screenshot, POSTs `{ task, screenshot, resolution, previous_steps }` to
 * `endpoint` (wire.ts, README.md) over one persistent connection (client.ts), and performs the
 * actions it gets back, in order; FINISH ends the run. Coordinates are pixels of the screenshot
 * sent: the screen's own, or `screenshotSize` (then mapped back exactly, see chat/coordinates.ts).
 *
 * Auth: a static `token` (or `apiKey`), or `authUrl` + `clientId` + `clientSecret` (OAuth2 client
 * credentials, token cached on disk under a cross-process lock; auth.ts); none for an open planner.
 */
import { z } from 'zod';
import type { AgentRunResult, RunOptions } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { ModelAgent, modelAgentOptionsSchema, type ModelAgentOptions } from '../model-agent.ts';
import { positiveMs } from '../options.ts';
import type { CoordinateFrame } from '../chat/coordinates.ts';
import { ClientCredentialsSource, StaticTokenSource, type TokenSource } from './auth.ts';
import { PLANNER_URL, PlannerClient } from './client.ts';
import { retryPolicySchema, type RetryPolicy } from './retry.ts';
import { plannerActionSteps, type PreviousStep, type PlannerAction } from './wire.ts';
import type { ActionStep } from '../../harness/agent/index.ts';

/** HttpPlannerAgent's own options (besides the Agent's and ModelAgent's). */
export interface HttpPlannerOptions {
  /** The planner's URL (http:// or https://). */
  endpoint: string;
  /** A static bearer token (else `apiKey`). */
  token?: string;
  /** OAuth2 token endpoint of the client credentials grant (with clientId and clientSecret). */
  authUrl?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  /** Token cache file (default ~/.cache/vncua/tokens.json); null for none. */
  tokenCacheFile?: string | null;
  /** Retries of each call (default 5 attempts, 500 ms base, 20 s cap). */
  retry?: Partial<RetryPolicy>;
  /** Timeout of each attempt in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Jitter source of the backoff (tests). */
  random?: () => number;
}

/** The options of HttpPlannerAgent. */
export type HttpPlannerAgentOptions = ModelAgentOptions & HttpPlannerOptions;

const optionalString = z.string({ error: 'must be a string' }).optional();

/** Schema of HttpPlannerAgent's options (AGENT_ERR_BAD_OPTIONS naming the field). */
export const httpPlannerOptionsSchema = modelAgentOptionsSchema
  .extend({
    endpoint: PLANNER_URL,
    token: optionalString,
    authUrl: optionalString,
    clientId: optionalString,
    clientSecret: optionalString,
    scope: optionalString,
    tokenCacheFile: z.string({ error: 'must be a path or null' }).nullable().optional(),
    retry: retryPolicySchema.optional(),
    requestTimeoutMs: positiveMs.optional(),
    headers: z.record(z.string(), z.string(), { error: 'must be an object of header names and string values' }).optional(),
    random: z.custom<() => number>((v) => typeof v === 'function', 'must be a function () => number').optional(),
  })
  .superRefine((o, ctx) => {
    const creds = { authUrl: o.authUrl, clientId: o.clientId, clientSecret: o.clientSecret };
    const missing = Object.entries(creds).find(([, v]) => !v);
    if (missing && Object.values(creds).some((v) => v !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [missing[0]], message: 'authUrl, clientId and clientSecret go together (OAuth2 client credentials)' });
    }
  });

/** An agent driven by a remote HTTP planner. */
export class HttpPlannerAgent extends ModelAgent<z.output<typeof httpPlannerOptionsSchema>> {
  /** The adapter's name in `--rate-limit` rules and backoffs. */
  static override adapterName = 'http';
  /** The client (one persistent connection). */
  readonly client: PlannerClient;
  /** The token source (null: no auth). */
  readonly auth: TokenSource | null;
  #previous: PreviousStep[] = [];
  #step = 0;

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field); makes no request. */
  constructor(options: HttpPlannerAgentOptions) {
    super(options, httpPlannerOptionsSchema);
    const h = this.settings;
    const token = h.token ?? h.apiKey;
    this.auth = h.authUrl
      ? new ClientCredentialsSource({
          authUrl: h.authUrl,
          clientId: h.clientId!,
          clientSecret: h.clientSecret!,
          scope: h.scope,
          cacheFile: h.tokenCacheFile,
          retry: h.retry,
          random: h.random,
        })
      : token
        ? new StaticTokenSource(token)
        : null;
    this.client = new PlannerClient({
      endpoint: h.endpoint,
      auth: this.auth,
      retry: h.retry,
      requestTimeoutMs: h.requestTimeoutMs,
      headers: h.headers,
      random: h.random,
      beforeRequest: (signal) => this.gateRequest(signal),
      onRateLimited: (ms, reason) => this.reportRateLimited(ms, reason),
    });
  }

  /** The steps sent as previous_steps so far in this run. */
  get previousSteps(): readonly PreviousStep[] {
    return this.#previous;
  }

  /** run() with previous_steps reset; the connection is closed at the end. */
  override async run(options: RunOptions = {}): Promise<AgentRunResult> {
    this.#previous = [];
    this.#step = 0;
    try {
      return await super.run(options);
    } finally {
      this.client.close();
    }
  }

  override async act(): Promise<boolean> {
    const size = this.model.screenshotSize;
    const shot = await this.observe({ format: 'png' });
    const frame: CoordinateFrame = {
      space: size ? 'resized' : 'absolute',
      screen: { width: shot.screenWidth, height: shot.screenHeight },
      image: { width: shot.width, height: shot.height },
    };
    const blocked = this.domainObservation();
    const request = {
      task: this.task ?? '',
      screenshot: shot.base64,
      resolution: { width: shot.width, height: shot.height },
      previous_steps: this.#previous,
      ...(blocked ? { observations: blocked.split('\n') } : {}),
    };
    const plan = await this.callModel({
      send: ({ signal }) => this.client.plan(request, { signal }),
      read: (p) => {
        const model = (p.response as { model?: unknown }).model;
        return {
          value: p,
          attempts: p.attempts,
          usage: p.response.usage ?? undefined,
          responseId: p.response.id || undefined,
          model: typeof model === 'string' && model ? model : undefined,
        };
      },
    });
    if (plan.retries.length > 0) this.attachMeta({ retries: plan.retries });
    if (plan.reauthenticated) this.attachMeta({ reauthenticated: true });
    // Map every action before performing any: a bad one rejects the whole plan.
    const mapped: Array<{ action: PlannerAction; steps: ActionStep[] }> = [];
    for (const [i, action] of plan.response.actions.entries()) {
      try {
        mapped.push({ action, steps: plannerActionSteps(action, frame) });
      } catch (e) {
        throw new VncuaError(
          'MODEL_ERR_BAD_RESPONSE',
          `The planner at ${this.client.endpoint.href} sent an action that cannot be performed: actions.${i}: ${(e as Error).message}`,
          {
            details: { index: i, action },
          },
        );
      }
    }
    const step = this.#step++;
    for (const { action, steps } of mapped) {
      if (action.description !== undefined) this.attachMeta({ description: action.description });
      for (const s of steps) await this.perform(s);
      this.#previous.push({ step, action });
      if (action.type === 'FINISH') return true;
    }
    return false;
  }
}
