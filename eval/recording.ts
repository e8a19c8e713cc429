/**
 * Recording is on by default in every Agent run once the recording proxy is registered with the
 * Agent; `recorder/register.ts` registers it. The runner loads that file here, and goes on without
 * recording if the file is not there (a build without the recorder).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let loaded: Promise<boolean> | undefined;

/** Import recorder/register.ts once (or its built .js); resolves true when the recorder is registered. */
export function ensureRecorderRegistered(): Promise<boolean> {
  return (loaded ??= (async () => {
    for (const name of ['../recorder/register.ts', '../recorder/register.js']) {
      const url = new URL(name, import.meta.url);
      if (!existsSync(fileURLToPath(url))) continue;
      await import(url.href);
      return true;
    }
    return false;
  })());
}
