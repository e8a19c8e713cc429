/**
 * `HttpPlannerAgent` for remote planners, its parts, and the builder `vncua run|eval --agent http`
 * uses (default export). Wire format: byom/http/README.md.
 *
 * Environment of the builder: VNCUA_PLANNER_URL (required); VNCUA_PLANNER_TOKEN (static bearer
 * token) or VNCUA_PLANNER_AUTH_URL + VNCUA_PLANNER_CLIENT_ID + VNCUA_PLANNER_CLIENT_SECRET
 * (+ VNCUA_PLANNER_SCOPE) for the client credentials grant; VNCUA_PLANNER_TOKEN_CACHE (cache file);
 * VNCUA_PLANNER_SCREENSHOT_SIZE ("WxH": scale screenshots, coordinates mapped back);
 * VNCUA_PLANNER_TIMEOUT_MS (per attempt).
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { badOption } from '../../harness/agent/options.ts';
import { HttpPlannerAgent, type HttpPlannerAgentOptions } from './agent.ts';

export { HttpPlannerAgent, type HttpPlannerAgentOptions, type HttpPlannerOptions } from './agent.ts';
export { ClientCredentialsSource, StaticTokenSource, defaultTokenCacheFile, type ClientCredentialsOptions, type TokenSource } from './auth.ts';
export { PlannerClient, type PlannerClientOptions, type PlanResult } from './client.ts';
export { withFileLock, type FileLockOptions } from './lock.ts';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryPolicy, type RetryRecord } from './retry.ts';
export { PLANNER_ACTION_TYPES, plannerActionSchema, plannerActionSteps, plannerResponseSchema, type PlannerAction, type PlannerRequest, type PlannerResponse, type PreviousStep } from './wire.ts';

/** Build an HttpPlannerAgent from the run's context and the environment (see the module comment). */
export function buildHttpPlannerAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): HttpPlannerAgent {
  const endpoint = env.VNCUA_PLANNER_URL;
  if (!endpoint) throw badOption('endpoint', undefined, 'set VNCUA_PLANNER_URL to the planner URL');
  const options: HttpPlannerAgentOptions = { ...ctx.agentOptions, endpoint };
  if (env.VNCUA_PLANNER_TOKEN) options.token = env.VNCUA_PLANNER_TOKEN;
  if (env.VNCUA_PLANNER_AUTH_URL) options.authUrl = env.VNCUA_PLANNER_AUTH_URL;
  if (env.VNCUA_PLANNER_CLIENT_ID) options.clientId = env.VNCUA_PLANNER_CLIENT_ID;
  if (env.VNCUA_PLANNER_CLIENT_SECRET) options.clientSecret = env.VNCUA_PLANNER_CLIENT_SECRET;
  if (env.VNCUA_PLANNER_SCOPE) options.scope = env.VNCUA_PLANNER_SCOPE;
  if (env.VNCUA_PLANNER_TOKEN_CACHE) options.tokenCacheFile = env.VNCUA_PLANNER_TOKEN_CACHE;
  const size = env.VNCUA_PLANNER_SCREENSHOT_SIZE;
  if (size) {
    const m = /^(\d+)x(\d+)$/.exec(size);
    if (!m) throw badOption('screenshotSize', size, 'VNCUA_PLANNER_SCREENSHOT_SIZE must be WxH, e.g. 1024x640');
    options.screenshotSize = { width: Number(m[1]), height: Number(m[2]) };
  }
  if (env.VNCUA_PLANNER_TIMEOUT_MS) options.requestTimeoutMs = Number(env.VNCUA_PLANNER_TIMEOUT_MS);
  return new HttpPlannerAgent(options);
}

/** `vncua run|eval --agent byom/http/index.ts`: an HttpPlannerAgent from the environment. */
export default function build(ctx: AgentContext): HttpPlannerAgent {
  return buildHttpPlannerAgent(ctx, process.env);
}
