/**
 * Every agent `vncua run|eval --agent NAME` knows by name: the ones that ship in agents/ (scripted,
 * replay, random) and the model adapters in byom/ (openai-cua, anthropic, chat, http). An adapter's
 * module, and with it its SDK, is loaded only when that agent is asked for.
 */
import { BUILTIN_AGENTS as SHIPPED } from '../agents/index.ts';
import type { AgentBuilder, AgentContext } from '../harness/agent/index.ts';

/** A builder that imports its module's default-exported builder on first use. */
function lazy(load: () => Promise<{ default: AgentBuilder }>): AgentBuilder {
  return async (ctx: AgentContext) => (await load()).default(ctx);
}

/** Built-in agents by name. */
export const AGENTS: Readonly<Record<string, AgentBuilder>> = {
  ...SHIPPED,
  'openai-cua': lazy(() => import('../byom/openai-cua/build.ts')),
  anthropic: lazy(() => import('../byom/anthropic/build.ts')),
  chat: lazy(() => import('../byom/chat/index.ts')),
  http: lazy(() => import('../byom/http/index.ts')),
};
