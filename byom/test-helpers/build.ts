/** Test-only: what the adapters' builder tests share. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentContext } from '../../harness/agent/index.ts';
import { isVncuaError, type VncuaError } from '../../harness/errors.ts';
import { tempOutputDir } from '../../harness/test-helpers/files.ts';

/** The AgentContext `vncua run|eval` would give adapter `name`'s builder, with `args` after `--` (nothing listens at its endpoints). */
export function builderContext(name: string, args: string[] = []): AgentContext {
  const outputDir = `/tmp/vncua-${name}-build`;
  const endpoints = { vncUrl: 'ws://127.0.0.1:5901', cdpUrl: 'http://127.0.0.1:9222' };
  return { task: 'Do it.', outputDir, ...endpoints, url: undefined, maxSteps: 10, script: undefined, args, agentOptions: { task: 'Do it.', outputDir, ...endpoints } };
}

/** The VncuaError `fn` throws (undefined when it throws nothing; anything else is rethrown). */
export function errorOf(fn: () => unknown): VncuaError | undefined {
  try {
    fn();
  } catch (e) {
    if (isVncuaError(e)) return e;
    throw e;
  }
  return undefined;
}

/** The code of what `fn` throws (a VncuaError's code, or "not a VncuaError: …"); undefined when it throws nothing. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isVncuaError(e) ? e.code : `not a VncuaError: ${String(e)}`;
  }
  return undefined;
}

/** A temporary JSON file holding `prices` (for `--prices FILE`); remove it after. */
export async function pricesFile(prices: unknown): Promise<{ path: string; remove(): Promise<void> }> {
  const tmp = await tempOutputDir('vncua-prices-');
  const path = join(tmp.dir, 'prices.json');
  await writeFile(path, JSON.stringify(prices));
  return { path, remove: tmp.remove };
}
