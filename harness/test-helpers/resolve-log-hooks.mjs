// Module hooks (node:module `register(url, { data: LOG_FILE })`) appending every URL a process resolves
// to LOG_FILE, one a line: which modules an import loaded (bench/import-time.ts, cli/quick-start.desktop.test.ts).
// Plain JavaScript, so a bare `node` (an installed package, no tsx) can register it.
import { appendFileSync } from 'node:fs';

let log;

export function initialize(data) {
  log = data;
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(log, `${r.url}\n`);
  return r;
}
