/**
 * Generates `schemas/execution.schema.json`, `schemas/result.schema.json` and `schemas/export-line.schema.json` from the zod schemas
 * in harness/trace/schema.ts and export-line.ts, and agents/explorer/report/qa-report.schema.json from the QA report's. Usage: `npx tsx scripts/gen-schemas.ts` (write) or
 * `npx tsx scripts/gen-schemas.ts --check` (exit 1 if a committed file differs from fresh output).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderQaReportJsonSchema } from '../agents/explorer/report/schema.ts';
import { renderJsonSchemas } from '../harness/trace/json-schema.ts';

const SCHEMAS_DIR = fileURLToPath(new URL('../schemas/', import.meta.url));
const QA_REPORT_SCHEMA = fileURLToPath(new URL('../agents/explorer/report/qa-report.schema.json', import.meta.url));

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const files: Array<[string, string]> = Object.entries(renderJsonSchemas()).map(([name, text]) => [join(SCHEMAS_DIR, name), text]);
  files.push([QA_REPORT_SCHEMA, renderQaReportJsonSchema()]);
  let stale = 0;
  if (!check) await mkdir(SCHEMAS_DIR, { recursive: true });
  for (const [path, text] of files) {
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === text) continue;
    if (check) {
      stale++;
      console.error(`gen-schemas: ${path} is out of date; run npx tsx scripts/gen-schemas.ts`);
    } else {
      await writeFile(path, text);
      console.log(`gen-schemas: wrote ${path}`);
    }
  }
  return stale === 0 ? 0 : 1;
}

process.exitCode = await main();
