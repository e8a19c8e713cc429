/**
 * Prepares the process to import agent modules given by path (`--agent ./my-agent.ts`): registers
 * cli/agent-hooks.ts once, and, when the CLI runs compiled (an installed package), tsx's ESM hooks
 * first, for TypeScript-style resolution (`./util.js` finding util.ts, extensionless paths). A checkout
 * runs the CLI's .ts sources through tsx already (bin/vncua.js), which also loads the hooks module.
 */
import { register } from 'node:module';
import type { AgentHooksData } from './agent-hooks.ts';

let ready: Promise<void> | undefined;

/** Register the agent module hooks (once per process). */
export function prepareAgentImport(): Promise<void> {
  ready ??= (async () => {
    const fromSources = import.meta.url.endsWith('.ts');
    if (!fromSources) (await import('tsx/esm/api')).register();
    const ext = fromSources ? '.ts' : '.js';
    const data: AgentHooksData = { rootUrl: new URL(`../index${ext}`, import.meta.url).href };
    register(new URL(`./agent-hooks${ext}`, import.meta.url), { data });
  })();
  return ready;
}
