/**
 * The agents `vncua run|eval --agent SPEC` resolves, and how: every agent known by name (the ones
 * that ship in agents/: scripted, replay, random, explorer; the model adapters in byom/: openai-cua, anthropic,
 * chat, http; an adapter's module, and with it its SDK, is loaded only when that agent is asked for),
 * and loadAgentModule for a name or a module path. Importing a module by path first registers
 * cli/agent-hooks.ts once, and, when the CLI runs compiled (an installed package), tsx's ESM hooks
 * before them, for TypeScript-style resolution (`./util.js` finding util.ts, extensionless paths).
 * A checkout runs the CLI's .ts sources through tsx already (bin/vncua.js), which also loads the hooks module.
 */
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { basename, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILTIN_AGENTS as SHIPPED } from '../agents/index.ts';
import { Agent, type AgentBuilder, type AgentContext } from '../harness/agent/index.ts';
import { VncuaError } from '../harness/errors.ts';
import type { AgentHooksData } from './agent-hooks.ts';

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
  // The explorer with its `-- --seed …` flags and, given --model, a vision model as its Layer 2 (byom/chat/planner.ts).
  explorer: lazy(() => import('./explorer.ts')),
};

let ready: Promise<void> | undefined;

/** Register the agent module hooks (once per process). */
export function prepareAgentImport(): Promise<void> {
  ready ??= (async () => {
    const fromSources = import.meta.url.endsWith('.ts');
    if (!fromSources) (await import('tsx/esm/api')).register();
    const ext = fromSources ? '.ts' : '.js';
    const data: AgentHooksData = { entryUrls: packageEntryUrls(fromSources) };
    register(new URL(`./agent-hooks${ext}`, import.meta.url), { data });
  })();
  return ready;
}

/**
 * The URL of each of this package's entries (package.json `exports`: `vncua`, `vncua/rfb`, …) by specifier:
 * the dist/ file it names, or in a checkout (`fromSources`) the .ts source that file is built from.
 */
export function packageEntryUrls(fromSources: boolean): Record<string, string> {
  const root = new URL(fromSources ? '../' : '../../', import.meta.url);
  const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { name: string; exports: Record<string, { import: string }> };
  const urls: Record<string, string> = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = fromSources ? target.import.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts') : target.import;
    urls[subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`] = new URL(file, root).href;
  }
  return urls;
}

/** Describe a value for an error message (what a module exported). */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing (no default export)';
  if (v === null) return 'null';
  if (typeof v === 'function') return `${isClass(v) ? 'a class' : 'a function'} ${v.name ? `"${v.name}"` : '(anonymous)'}`;
  if (typeof v === 'object') return `an object with keys ${JSON.stringify(Object.keys(v))}`;
  return `a ${typeof v} (${JSON.stringify(v)})`;
}

// biome-ignore lint/complexity/noBannedTypes: any function value a module may export
function isClass(f: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(f));
}

/** True when `f` is a class whose prototype chain reaches Agent.prototype. */
export function isAgentClass(f: unknown): f is new (options: AgentContext['agentOptions']) => Agent {
  return typeof f === 'function' && typeof f.prototype === 'object' && f.prototype !== null && Object.prototype.isPrototypeOf.call(Agent.prototype, f.prototype);
}

/** A loaded agent module: its name (for --out) and how to build the agent. */
export interface LoadedAgentModule {
  name: string;
  build(ctx: AgentContext): Promise<Agent>;
}

/** Load `spec` (a built-in name or a module path resolved from the cwd); CLI_ERR_BAD_AGENT if unusable. */
export async function loadAgentModule(spec: string): Promise<LoadedAgentModule> {
  const builtin = Object.hasOwn(AGENTS, spec) ? AGENTS[spec] : undefined;
  const name = builtin ? spec : basename(spec, extname(spec));
  let exported: unknown = builtin;
  if (!builtin) {
    const file = resolve(spec);
    if (!existsSync(file)) {
      throw new VncuaError(
        'CLI_ERR_BAD_AGENT',
        `Agent module ${spec} not found (looked at ${file}); give a .ts/.js file or one of the built-in agents: ${Object.keys(AGENTS).join(', ')}.`,
        {
          details: { module: spec, path: file },
        },
      );
    }
    let mod: Record<string, unknown>;
    try {
      await prepareAgentImport();
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (cause) {
      const message = ((cause as Error)?.message ?? String(cause)).replace(/\s*\n\s*/g, ' ').replace(/\.$/, ''); // one line (esbuild's are several)
      const code = (cause as NodeJS.ErrnoException)?.code ?? '';
      // A .ts/.mts file is always an ES module (cli/agent-hooks.ts); a .js or .cts file may be loaded as CommonJS.
      const cjs = /^ERR_REQUIRE_(ESM|CYCLE_MODULE|ASYNC_MODULE)$/.test(code) || /require\(\) ES Module|import statement outside a module|exports is not defined/.test(message);
      const hint = cjs ? ' It was loaded as CommonJS: name it .ts, .mts or .mjs, or put it in a package whose package.json has "type": "module".' : '';
      throw new VncuaError('CLI_ERR_BAD_AGENT', `Agent module ${spec} could not be loaded: ${message}.${hint}`, { cause, details: { module: spec, path: file } });
    }
    exported = mod.default;
    if (typeof exported !== 'function') {
      const named = Object.keys(mod).filter((k) => k !== 'default');
      throw new VncuaError(
        'CLI_ERR_BAD_AGENT',
        `Agent module ${spec} default-exports ${describe(exported)}${named.length ? ` (named exports: ${named.join(', ')})` : ''}; export default an Agent subclass or a function (ctx) => Agent.`,
        { details: { module: spec, exported: describe(exported), named } },
      );
    }
  }
  // biome-ignore lint/complexity/noBannedTypes: any function value a module may export
  const f = exported as Function;
  if (isAgentClass(f)) {
    const AgentClass = f;
    return { name, build: async (ctx) => new AgentClass(ctx.agentOptions) };
  }
  if (isClass(f)) {
    throw new VncuaError('CLI_ERR_BAD_AGENT', `Agent module ${spec} default-exports ${describe(f)}, which does not extend Agent (import { Agent } from 'vncua').`, {
      details: { module: spec, exported: describe(f) },
    });
  }
  return {
    name,
    build: async (ctx) => {
      const agent: unknown = await (f as (ctx: AgentContext) => unknown)(ctx);
      if (!(agent instanceof Agent)) {
        throw new VncuaError('CLI_ERR_BAD_AGENT', `The builder default-exported by agent module ${spec} returned ${describe(agent)}, not an Agent.`, {
          details: { module: spec, returned: describe(agent) },
        });
      }
      return agent;
    },
  };
}
