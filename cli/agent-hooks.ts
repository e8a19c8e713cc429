/**
 * Module hooks (node:module `register`) for the agent modules `vncua run|eval --agent FILE` imports;
 * they run in Node's hooks thread and pass everything else on to the next hooks (tsx's, then Node's).
 * - `import { Agent } from 'vncua'` (or from a subpath entry: `vncua/agent`, `vncua/agents`, …) resolves
 *   to the package the CLI itself runs from, so the module's Agent is the very class the runner checks
 *   (whichever copy, if any, the module's folder holds).
 * - A .ts or .mts file outside node_modules is compiled by esbuild as an ES module, whatever the nearest
 *   package.json says (or when there is none), and without esbuild's keepNames: tsx turns that on, and its
 *   `__name(fn, "fn")` wrappers do not exist in a web page, so a function given to Playwright's
 *   `page.evaluate` would throw there.
 */
import { readFile } from 'node:fs/promises';
import type { InitializeHook, LoadHook, ResolveHook } from 'node:module';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

/** What cli/agents.ts (prepareAgentImport) passes to `initialize`. */
export interface AgentHooksData {
  /**
   * URL of each entry of the package the CLI runs from, by specifier (`vncua`: dist/index.js, or index.ts
   * in a checkout; `vncua/rfb`: dist/harness/rfb/index.js, or harness/rfb/index.ts; …).
   */
  entryUrls: Record<string, string>;
}

let entryUrls: Record<string, string> = {};

/** Keep the entries' URLs. */
export const initialize: InitializeHook<AgentHooksData> = (data) => {
  entryUrls = data.entryUrls;
};

/** `vncua` and its subpath entries are the CLI's own package's; anything else goes on. */
export const resolve: ResolveHook = (specifier, context, next) => {
  const url = Object.hasOwn(entryUrls, specifier) ? entryUrls[specifier] : undefined;
  return url ? { url, shortCircuit: true } : next(specifier, context);
};

/** True for a TypeScript ES module file of the user's (not a dependency's). */
export function compilesHere(url: string): boolean {
  if (!url.startsWith('file:')) return false;
  const path = url.split(/[?#]/, 1)[0]!;
  return /\.m?ts$/.test(path) && !path.endsWith('.d.ts') && !path.includes('/node_modules/');
}

/** Compile the user's .ts/.mts files as ES modules without keepNames; anything else goes on. */
export const load: LoadHook = async (url, context, next) => {
  if (!compilesHere(url)) return next(url, context);
  const path = fileURLToPath(url.split(/[?#]/, 1)[0]!);
  const out = await transform(await readFile(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcefile: path,
    sourcemap: 'inline',
    keepNames: false,
  });
  return { format: 'module', source: out.code, shortCircuit: true };
};
