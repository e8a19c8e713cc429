/**
 * `PlannerClient`: POSTs planner requests over ONE persistent connection (a keep-alive pool of
 * one socket per origin, so successive steps reuse the same TCP connection), with retries
 * (retry.ts) on 5xx, 429 (Retry-After honoured), bodies that are not JSON, timeouts and dropped
 * connections, and one re-authentication on 401.
 *
 * Outcomes: 401 twice (or once with a token that cannot be renewed), or 403 → MODEL_ERR_AUTH;
 * 404 → MODEL_ERR_NOT_FOUND; other 4xx → MODEL_ERR_REQUEST; 5xx / 429 / timeout / connection / bad JSON after the last
 * attempt → MODEL_ERR_SERVER / MODEL_ERR_RATE_LIMITED / MODEL_ERR_TIMEOUT / MODEL_ERR_CONNECT /
 * MODEL_ERR_BAD_RESPONSE; JSON that does not match the wire format → MODEL_ERR_BAD_RESPONSE at once.
 */
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';
import { httpUrl, parseOptions } from '../options.ts';
import type { TokenSource } from './auth.ts';
import { parseRetryAfter, retryPolicy, withRetries, type Attempt, type RetryPolicy, type RetryRecord } from './retry.ts';
import { httpRequest, singleSocketAgents, type HttpResponse } from './transport.ts';
import { parsePlannerResponse, type PlannerRequest, type PlannerResponse } from './wire.ts';

/** Options of PlannerClient. */
export interface PlannerClientOptions {
  /** The planner's URL (http:// or https://). */
  endpoint: string;
  /** Where the bearer token comes from; null sends no Authorization header. */
  auth: TokenSource | null;
  retry?: Partial<RetryPolicy>;
  /** Timeout of each attempt in ms (default 120 000). */
  requestTimeoutMs?: number;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /** Jitter source of the backoff (tests). */
  random?: () => number;
  /**
   * Called before each request (retries and the one after a re-authentication included): the agent's rate gate
   * (ModelAgent.gateRequest) holds it until the request may go.
   */
  beforeRequest?: (signal: AbortSignal | undefined) => Promise<void>;
  /** Called when the planner answered 429, with its Retry-After in ms (null: none): the agent tells its rate gate. */
  onRateLimited?: (retryAfterMs: number | null, reason: string) => Promise<void>;
}

/** One planned step: the validated answer and how it was obtained. */
export interface PlanResult {
  response: PlannerResponse;
  /** Wall time of the call, retries and re-authentication included, in ms. */
  latencyMs: number;
  /** Attempts of the last (authenticated) round. */
  attempts: number;
  /** Retries made, with their waits. */
  retries: RetryRecord[];
  /** True when a 401 made the client fetch a new token. */
  reauthenticated: boolean;
}

/** The endpoint's check (AGENT_ERR_BAD_OPTIONS, not a TypeError). */
export const PLANNER_URL = httpUrl('must be an http:// or https:// URL (VNCUA_PLANNER_URL)');

/** Talks to one planner endpoint over one persistent connection. */
export class PlannerClient {
  readonly endpoint: URL;
  readonly #o: PlannerClientOptions;
  readonly #retry: RetryPolicy;
  #agents = singleSocketAgents();

  constructor(options: PlannerClientOptions) {
    this.endpoint = new URL(parseOptions(z.object({ endpoint: PLANNER_URL }), { endpoint: options.endpoint }, 'PlannerClient').endpoint);
    this.#o = options;
    this.#retry = retryPolicy(options.retry);
  }

  /** POST `request` and return the validated plan (see the module comment for the errors). */
  async plan(request: PlannerRequest, options: { signal?: AbortSignal } = {}): Promise<PlanResult> {
    const t0 = performance.now();
    const body = JSON.stringify(request);
    const retries: RetryRecord[] = [];
    let token = this.#o.auth ? await this.#o.auth.token(options.signal) : null;
    let reauthenticated = false;
    for (;;) {
      const { value, attempts } = await withRetries(() => this.#attempt(body, token, options.signal), this.#retry, { signal: options.signal, random: this.#o.random, retries });
      if (value.kind === 'ok') return { response: value.response, latencyMs: performance.now() - t0, attempts, retries, reauthenticated };
      // 401
      const renewed = !reauthenticated && this.#o.auth && token !== null ? await this.#o.auth.renew(token, options.signal) : null;
      if (renewed === null) {
        throw new VncuaError(
          'MODEL_ERR_AUTH',
          reauthenticated
            ? `The planner at ${this.endpoint.href} answered 401 again with a freshly fetched token; check that the client may use this planner.`
            : `The planner at ${this.endpoint.href} answered 401 and the token cannot be renewed; check VNCUA_PLANNER_TOKEN (or give authUrl/clientId/clientSecret).`,
          { details: { url: this.endpoint.href, status: 401, reauthenticated } },
        );
      }
      token = renewed;
      reauthenticated = true;
    }
  }

  /** One POST. A 401 is a value (the caller re-authenticates); everything else is classified for withRetries. */
  async #attempt(body: string, token: string | null, signal: AbortSignal | undefined): Promise<Attempt<{ kind: 'ok'; response: PlannerResponse } | { kind: '401' }>> {
    const url = this.endpoint;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...(this.#o.headers ?? {}) };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    await this.#o.beforeRequest?.(signal);
    const res: HttpResponse = await httpRequest(url, {
      method: 'POST',
      headers,
      body,
      agent: url.protocol === 'https:' ? this.#agents.https : this.#agents.http,
      timeoutMs: this.#o.requestTimeoutMs ?? 120_000,
      signal,
    });
    const where = `The planner at ${url.href}`;
    const details = { url: url.href, status: res.status };
    if (res.status === 401) return { ok: true, value: { kind: '401' } };
    if (res.status === 403)
      return {
        ok: false,
        retryable: false,
        status: 403,
        error: new VncuaError('MODEL_ERR_AUTH', `${where} answered 403: the token is valid but may not use this planner.`, { details }),
      };
    if (res.status === 429 || res.status >= 500) {
      const code = res.status === 429 ? 'MODEL_ERR_RATE_LIMITED' : 'MODEL_ERR_SERVER';
      const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
      if (res.status === 429) await this.#o.onRateLimited?.(retryAfterMs, `HTTP 429 from ${url.href}${retryAfterMs === null ? '' : ` (retry after ${retryAfterMs} ms)`}`);
      return {
        ok: false,
        retryable: true,
        status: res.status,
        retryAfterMs,
        error: new VncuaError(code, `${where} answered HTTP ${res.status}.`, { details }),
      };
    }
    if (res.status === 404) {
      return {
        ok: false,
        retryable: false,
        status: 404,
        error: new VncuaError('MODEL_ERR_NOT_FOUND', `${where} answered 404: no planner at that URL; check --endpoint / VNCUA_PLANNER_ENDPOINT.`, { details }),
      };
    }
    if (res.status < 200 || res.status >= 300) {
      return {
        ok: false,
        retryable: false,
        status: res.status,
        error: new VncuaError('MODEL_ERR_REQUEST', `${where} rejected the request with HTTP ${res.status}: ${res.body.slice(0, 300)}`, { details }),
      };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      return {
        ok: false,
        retryable: true,
        status: res.status,
        error: new VncuaError('MODEL_ERR_BAD_RESPONSE', `${where} answered with a body that is not JSON: ${JSON.stringify(res.body.slice(0, 200))}.`, { details }),
      };
    }
    const v = parsePlannerResponse(parsed);
    if (!v.ok) {
      return {
        ok: false,
        retryable: false,
        status: res.status,
        error: new VncuaError('MODEL_ERR_BAD_RESPONSE', `${where} answered JSON that is not a plan: ${v.error}. See byom/http/README.md for the format.`, {
          details: { ...details, issues: v.error },
        }),
      };
    }
    return { ok: true, value: { kind: 'ok', response: v.value } };
  }

  /** Close the pooled connection (the next plan() opens a new one). */
  close(): void {
    this.#agents.http.destroy();
    this.#agents.https.destroy();
    this.#agents = singleSocketAgents();
  }
}
