/**
 * `HttpPlannerAgent` for remote planners, its parts, and the builder `vncua run|eval --agent http`
 * uses (default export). Wire format: byom/http/README.md.
 *
 * The builder reads the environment and the arguments after `--` (a flag wins over its variable):
 *
 * | Flag | Environment | Option |
 * | --- | --- | --- |
 * | `--endpoint URL` | `VNCUA_PLANNER_URL` (one of the two required) | `endpoint` |
 * | | `VNCUA_PLANNER_TOKEN` (never a flag) | `token` (static bearer token) |
 * | `--auth-url URL` | `VNCUA_PLANNER_AUTH_URL` | `authUrl` (OAuth2 client credentials, with the next two) |
 * | `--client-id ID` | `VNCUA_PLANNER_CLIENT_ID` | `clientId` |
 * | | `VNCUA_PLANNER_CLIENT_SECRET` (never a flag) | `clientSecret` |
 * | `--scope SCOPE` | `VNCUA_PLANNER_SCOPE` | `scope` |
 * | `--token-cache FILE` | `VNCUA_PLANNER_TOKEN_CACHE` | `tokenCacheFile` |
 * | `--screenshot-size WxH` | `VNCUA_PLANNER_SCREENSHOT_SIZE` | `screenshotSize` (coordinates mapped back) |
 * | `--timeout-ms N` | `VNCUA_PLANNER_TIMEOUT_MS` | `requestTimeoutMs` (per attempt) |
 * | `--budget-ms N` | | `budgetMs` |
 * | `--model NAME` | `VNCUA_PLANNER_MODEL` | `model` (recorded and priced when the planner's answers name no `model`) |
 * | `--prices FILE` | `VNCUA_PRICES` | `prices` (JSON `{ "MODEL": { "input": N, "output": N } }`, USD per 1M tokens; byom/pricing.ts) |
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { adapterArgs } from '../build-args.ts';
import { HttpPlannerAgent, type HttpPlannerAgentOptions } from './agent.ts';

export { HttpPlannerAgent, type HttpPlannerAgentOptions, type HttpPlannerOptions } from './agent.ts';
export { ClientCredentialsSource, StaticTokenSource, defaultTokenCacheFile, type ClientCredentialsOptions, type TokenSource } from './auth.ts';
export { PlannerClient, type PlannerClientOptions, type PlanResult } from './client.ts';
export { withFileLock, type FileLockOptions } from './lock.ts';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryPolicy, type RetryRecord } from './retry.ts';
export {
  PLANNER_ACTION_TYPES,
  plannerActionSchema,
  plannerActionSteps,
  plannerResponseSchema,
  type PlannerAction,
  type PlannerRequest,
  type PlannerResponse,
  type PreviousStep,
} from './wire.ts';

/** The flags after `--` (each takes a value). */
export const HTTP_FLAGS = ['endpoint', 'auth-url', 'client-id', 'scope', 'token-cache', 'screenshot-size', 'timeout-ms', 'budget-ms', 'model', 'prices'] as const;

/** The HttpPlannerAgent options for `ctx`, from `env` and `ctx.args` (see the module comment). */
export function httpPlannerOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): HttpPlannerAgentOptions {
  const a = adapterArgs('http', ctx.args, HTTP_FLAGS, env);
  const endpoint = a.url('endpoint', 'VNCUA_PLANNER_URL');
  if (!endpoint) throw a.missing('endpoint', 'endpoint', ['VNCUA_PLANNER_URL'], 'the planner URL, http:// or https://');
  const options: HttpPlannerAgentOptions = { ...ctx.agentOptions, endpoint };
  const token = a.env('VNCUA_PLANNER_TOKEN')?.value;
  if (token) options.token = token;
  const authUrl = a.url('auth-url', 'VNCUA_PLANNER_AUTH_URL');
  const clientId = a.string('client-id', 'VNCUA_PLANNER_CLIENT_ID');
  const clientSecret = a.env('VNCUA_PLANNER_CLIENT_SECRET')?.value;
  if (authUrl || clientId || clientSecret) {
    // The client credentials grant needs all three.
    if (!authUrl) throw a.missing('token URL', 'auth-url', ['VNCUA_PLANNER_AUTH_URL'], 'the OAuth2 token endpoint; client credentials need it with the client id and secret');
    if (!clientId) throw a.missing('client id', 'client-id', ['VNCUA_PLANNER_CLIENT_ID'], 'client credentials need it with the token URL and the secret');
    if (!clientSecret)
      throw a.missing(
        'client secret',
        null,
        ['VNCUA_PLANNER_CLIENT_SECRET'],
        'client credentials need it with the token URL and the client id; secrets are read from the environment only',
      );
    Object.assign(options, { authUrl, clientId, clientSecret });
  }
  const scope = a.string('scope', 'VNCUA_PLANNER_SCOPE');
  if (scope) options.scope = scope;
  const cache = a.string('token-cache', 'VNCUA_PLANNER_TOKEN_CACHE');
  if (cache) options.tokenCacheFile = cache;
  const size = a.size('screenshot-size', 'VNCUA_PLANNER_SCREENSHOT_SIZE');
  if (size) options.screenshotSize = size;
  const timeout = a.positiveInt('timeout-ms', 'VNCUA_PLANNER_TIMEOUT_MS');
  if (timeout) options.requestTimeoutMs = timeout;
  const budget = a.positiveInt('budget-ms');
  if (budget) options.budgetMs = budget;
  const model = a.string('model', 'VNCUA_PLANNER_MODEL');
  if (model) options.model = model;
  const prices = a.prices('prices', 'VNCUA_PRICES');
  if (prices) options.prices = prices;
  return options;
}

/** Build an HttpPlannerAgent from the run's context, the environment and `ctx.args` (see the module comment). */
export function buildHttpPlannerAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): HttpPlannerAgent {
  return new HttpPlannerAgent(httpPlannerOptions(ctx, env));
}

/** `vncua run|eval --agent byom/http/index.ts`: an HttpPlannerAgent from the environment and the arguments after `--`. */
export default function build(ctx: AgentContext): HttpPlannerAgent {
  return buildHttpPlannerAgent(ctx, process.env);
}
