/**
 * Renders docs/ERRORS.md from harness/errors.ts, so the list of stable error codes
 * in the docs can never drift from the code. Run: npx tsx scripts/error-docs.ts --write
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '../harness/errors.ts';

/** Path of the generated document. */
export const ERRORS_MD = fileURLToPath(new URL('../docs/ERRORS.md', import.meta.url));

/** The markdown for docs/ERRORS.md. */
export function renderErrorDocs(): string {
  const groups = new Map<string, Array<[string, string]>>();
  for (const [code, text] of Object.entries(ERROR_CODES)) {
    const prefix = code.split('_ERR_')[0]!;
    if (!groups.has(prefix)) groups.set(prefix, []);
    groups.get(prefix)!.push([code, text]);
  }
  const out = [
    '# Error codes',
    '',
    'Every error vncua raises is a `VncuaError` with a stable `code`. Match on `code`, never on the message:',
    '',
    '```ts',
    "import { isVncuaError } from 'vncua';",
    "try { await connectVnc(url, { password }); } catch (e) { if (isVncuaError(e, 'RFB_ERR_AUTH_FAILED')) { /* ask again */ } }",
    '```',
    '',
    'This file is generated from `harness/errors.ts` by `npx tsx scripts/error-docs.ts --write`; a test keeps them in sync.',
    '',
  ];
  for (const [prefix, rows] of groups) {
    out.push(`## ${prefix}`, '', '| Code | Meaning |', '| --- | --- |');
    for (const [code, text] of rows) out.push(`| \`${code}\` | ${text.replace(/\|/g, '\\|')} |`);
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--write')) writeFileSync(ERRORS_MD, renderErrorDocs());
  else process.stdout.write(renderErrorDocs());
}

/** The committed document (for the sync test). */
export function readErrorDocs(): string {
  return readFileSync(ERRORS_MD, 'utf8');
}
