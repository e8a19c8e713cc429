import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderJsonSchemas } from './json-schema.ts';
import { ACTION_NAMES, RUN_STATUSES, executionSchema, runResultSchema } from './schema.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { TraceWriter } from './writer.ts';

const SCHEMAS = fileURLToPath(new URL('../../schemas/', import.meta.url));
const ENTRY_REQUIRED = ['index', 'action', 'params', 'task_marked_complete', 'started_at', 'ended_at', 'duration_ms'];

type Obj = Record<string, any>;
// The published schemas checked by a real JSON Schema validator (draft 2020-12), not by our own code.
const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
/** Ajv's errors for `data` against `schema` ([] when valid). */
function validateJsonSchema(schema: Obj, data: unknown): string[] {
  const validate = ajv.compile({ ...schema, $id: undefined });
  return validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}
const load = async (name: string): Promise<Obj> => JSON.parse(await readFile(join(SCHEMAS, name), 'utf8')) as Obj;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-schema-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('generated JSON Schemas', () => {
  it('committed schemas/ files equal freshly generated output (run: npx tsx scripts/gen-schemas.ts)', async () => {
    const fresh = renderJsonSchemas();
    expect(Object.keys(fresh).sort()).toEqual(['execution.schema.json', 'export-line.schema.json', 'result.schema.json']);
    for (const [name, text] of Object.entries(fresh)) {
      expect(await readFile(join(SCHEMAS, name), 'utf8'), name).toBe(text);
    }
  });

  it('execution.schema.json: an array of ok variants (one per action) or a failed entry, all with the required fields', async () => {
    const s = await load('execution.schema.json');
    expect(s.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(s.type).toBe('array');
    const [ok, failed] = s.items.anyOf as [Obj, Obj];
    expect(s.items.anyOf).toHaveLength(2);
    const variants = ok.oneOf as Obj[];
    expect(variants.map((v) => v.properties.action.const)).toEqual([...ACTION_NAMES]);
    for (const v of [...variants, failed]) {
      expect(v.type).toBe('object');
      expect(v.required).toEqual(expect.arrayContaining(ENTRY_REQUIRED));
      expect(v.additionalProperties).toBe(false);
      expect(v.properties.task_marked_complete.type).toEqual(['boolean', 'null']);
      expect(v.properties.index.type).toBe('integer');
      expect(Object.keys(v.properties)).toContain('meta');
    }
    expect(failed.properties.action.enum).toEqual([...ACTION_NAMES]);
    expect(failed.required).toContain('error');
    expect(failed.properties.error.required).toEqual(['code', 'message']);
    const click = variants.find((v) => v.properties.action.const === 'mouse_click')!;
    expect(click.properties.params.required).toEqual(['button', 'click_type']);
    expect(click.properties.params.properties.click_type.enum).toEqual(['single', 'double', 'triple']);
  });

  it('result.schema.json: status enum and required fields', async () => {
    const s = await load('result.schema.json');
    expect(s.properties.status.enum).toEqual([...RUN_STATUSES]);
    expect(s.required).toEqual(['status', 'steps', 'durationMs']);
    expect(s.properties.error.required).toEqual(['code', 'message']);
    expect(s.additionalProperties).toBe(false);
  });

  it('a real written trace and result round-trip through zod and validate against the generated schemas', async () => {
    const w = new TraceWriter(dir);
    await w.open();
    for (let i = 0; i < 40; i++) await w.append(sampleEntry(i));
    await w.finalize();
    await w.writeResult({ status: 'max_steps', steps: 40, durationMs: 4000.125, error: { code: 'AGENT_ERR_MAX_STEPS', message: 'stopped' } });

    const trace: unknown = JSON.parse(await readFile(w.paths.execution, 'utf8'));
    expect(executionSchema.parse(trace)).toEqual(trace);
    expect(validateJsonSchema((await load('execution.schema.json')) as Obj, trace)).toEqual([]);
    const result: unknown = JSON.parse(await readFile(w.paths.result, 'utf8'));
    expect(runResultSchema.parse(result)).toEqual(result);
    expect(validateJsonSchema((await load('result.schema.json')) as Obj, result)).toEqual([]);
  });

  it('the generated schema rejects what zod rejects (bad params, missing timing, unknown key, bad result status)', async () => {
    const exec = await load('execution.schema.json');
    const input = sampleEntry(0);
    const first: Obj = { index: 0, ...input, duration_ms: input.ended_at - input.started_at };
    expect(validateJsonSchema(exec, [first])).toEqual([]);
    const { started_at: _dropped, ...untimed } = first;
    const cases: unknown[] = [
      [{ ...first, params: { position: { x: -1, y: 0 } } }],
      [untimed],
      [{ ...first, extra: 1 }],
      [{ ...first, action: 'teleport' }],
      [{ ...first, error: { code: '', message: 'x' } }],
    ];
    for (const c of cases) {
      expect(executionSchema.safeParse(c).success).toBe(false);
      expect(validateJsonSchema(exec, c).length).toBeGreaterThan(0);
    }
    const bad = { status: 'done', steps: 1, durationMs: 1 };
    expect(runResultSchema.safeParse(bad).success).toBe(false);
    expect(validateJsonSchema(await load('result.schema.json'), bad).length).toBeGreaterThan(0);
  });
});
