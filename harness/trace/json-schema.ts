/**
 * JSON Schema (draft 2020-12) of the trace files, generated from the zod schemas with zod 4's
 * `z.toJSONSchema`. `scripts/gen-schemas.ts` writes them to `schemas/`; a test keeps the committed
 * files equal to this output.
 */
import { z } from 'zod';
import { exportLineSchema } from './export-line.ts';
import { executionSchema, runResultSchema } from './schema.ts';

/** Generated schema files: name in `schemas/` → file text. */
export function renderJsonSchemas(): Record<string, string> {
  return {
    'execution.schema.json': render(z.toJSONSchema(executionSchema, { target: 'draft-2020-12' })),
    'result.schema.json': render(z.toJSONSchema(runResultSchema, { target: 'draft-2020-12' })),
    'export-line.schema.json': render(z.toJSONSchema(exportLineSchema, { target: 'draft-2020-12' })),
  };
}

function render(schema: object): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
