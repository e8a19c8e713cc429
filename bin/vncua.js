#!/usr/bin/env node
// The `vncua` command. An installed package runs its compiled CLI (dist/, the same modules as
// `import ... from 'vncua'`); a checkout, which has the TypeScript sources, runs them through tsx.
// Either way, agent modules may be .ts files (cli/agents.ts).
import { existsSync } from 'node:fs';

const sources = new URL('../cli/main.ts', import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import('../dist/cli/main.js'));
}
process.exitCode = await main(process.argv.slice(2));
