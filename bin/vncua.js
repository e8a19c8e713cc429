#!/usr/bin/env node
// The `vncua` command: runs the TypeScript CLI through tsx, so agent modules may be .ts files too.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
