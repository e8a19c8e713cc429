/**
 * Parsing trace arrays already read from JSON: vncua's own (strict, with `index` and timing) and
 * uitask's (no index, no timing, maybe extra keys), both normalized to `TraceEntry`.
 * Every failure is a `TRACE_ERR_INVALID` naming the file, the first bad entry index and field.
 */
import type { z } from 'zod';
import { VncuaError } from '../errors.ts';
import {
  ACTION_NAMES,
  UITASK_ACTION_PARAMS,
  actionNameSchema,
  anyParamsSchema,
  failedEntrySchema,
  okEntrySchema,
  type ActionName,
  type ExecutionEntry,
  type TraceEntry,
  type TraceError,
} from './schema.ts';

type Issue = z.ZodError['issues'][number];

/** Where a trace came from: written by vncua, or by the Python uitask harness. */
export type TraceSource = 'vncua' | 'uitask';

/** Dotted field path of a zod issue (`params.position.x`), including the first unknown key if any. */
export function issueField(issue: Issue, prefix: readonly PropertyKey[] = []): string {
  const path: PropertyKey[] = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
}

/** A `TRACE_ERR_INVALID` naming the file, entry index and field. */
export function invalidTrace(file: string, index: number | undefined, field: string, problem: string): VncuaError {
  const where = [index === undefined ? '' : `entry ${index}`, field ? `field "${field}"` : ''].filter(Boolean).join(', ');
  return new VncuaError(
    'TRACE_ERR_INVALID',
    `${file}${where ? ` (${where})` : ''}: ${problem}. It does not match the trace schema (schemas/*.schema.json); fix or remove the bad part.`,
    { details: { path: file, index, field, problem } },
  );
}

/** The first zod issue of a vncua entry (strict when no `error`, lenient params when `error`), or undefined if valid. */
export function entryIssue(entry: unknown): Issue | undefined {
  const schema = isRecord(entry) && 'error' in entry ? failedEntrySchema : okEntrySchema;
  const r = schema.safeParse(entry);
  return r.success ? undefined : r.error.issues[0];
}

/** Validates a vncua trace array (entries in order, `index` equal to position); returns the parsed entries. */
export function parseExecution(data: unknown, file = '<memory>'): ExecutionEntry[] {
  if (!Array.isArray(data)) throw invalidTrace(file, undefined, '', 'expected a JSON array of entries');
  const out: ExecutionEntry[] = [];
  for (let i = 0; i < data.length; i++) {
    const raw: unknown = data[i];
    const schema = isRecord(raw) && 'error' in raw ? failedEntrySchema : okEntrySchema;
    const r = schema.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw invalidTrace(file, i, issueField(issue), issue.message);
    }
    if (r.data.index !== i) throw invalidTrace(file, i, 'index', `index is ${r.data.index}, expected ${i} (entries must be consecutive from 0)`);
    out.push(r.data);
  }
  return out;
}

/**
 * Normalizes a trace written by the Python uitask harness: entries `{ action, params, task_marked_complete }`
 * (no index, no timing). `index` becomes the position, timing stays undefined, `params` defaults to `{}`,
 * a missing `task_marked_complete` to null; an `error` (object with a message, or a string) is kept as
 * `{ code, message }` and makes params lenient; any other key is kept under `meta.uitask`.
 * Params of known fields are checked (unknown params keys are allowed).
 */
export function parseUitaskExecution(data: unknown, file = '<memory>'): TraceEntry[] {
  if (!Array.isArray(data)) throw invalidTrace(file, undefined, '', 'expected a JSON array of entries');
  return data.map((raw: unknown, i) => normalizeUitaskEntry(raw, i, file));
}

const UITASK_KNOWN_KEYS = new Set(['action', 'params', 'task_marked_complete', 'error']);

function normalizeUitaskEntry(raw: unknown, i: number, file: string): TraceEntry {
  if (!isRecord(raw)) throw invalidTrace(file, i, '', 'expected an object');
  const name = actionNameSchema.safeParse(raw.action);
  if (!name.success) throw invalidTrace(file, i, 'action', `unknown action ${JSON.stringify(raw.action)}; expected one of ${ACTION_NAMES.join(', ')}`);
  const action: ActionName = name.data;
  const error = uitaskError(raw.error, file, i);
  const paramsSchema = error ? anyParamsSchema : UITASK_ACTION_PARAMS[action];
  const params = paramsSchema.safeParse(raw.params ?? {});
  if (!params.success) {
    const issue = params.error.issues[0]!;
    throw invalidTrace(file, i, issueField(issue, ['params']), issue.message);
  }
  const tmc = raw.task_marked_complete ?? null;
  if (typeof tmc !== 'boolean' && tmc !== null) throw invalidTrace(file, i, 'task_marked_complete', 'expected true, false or null');
  const extra = Object.fromEntries(Object.entries(raw).filter(([k]) => !UITASK_KNOWN_KEYS.has(k)));
  const entry = { index: i, action, params: params.data, task_marked_complete: tmc } as TraceEntry;
  if (error) (entry as { error?: TraceError }).error = error;
  if (Object.keys(extra).length > 0) entry.meta = { uitask: extra };
  return entry;
}

function uitaskError(value: unknown, file: string, i: number): TraceError | undefined {
  if (value === undefined || value === null || value === false) return undefined;
  if (typeof value === 'string') return { code: 'UITASK_ERROR', message: value };
  if (isRecord(value) && typeof value.message === 'string') {
    return { code: typeof value.code === 'string' && value.code ? value.code : 'UITASK_ERROR', message: value.message };
  }
  throw invalidTrace(file, i, 'error', 'expected an error message string or an object with a "message" string');
}

/** Which harness wrote a parsed trace array: vncua entries carry `index` / `started_at`, uitask's never do. */
export function detectSource(data: unknown): TraceSource {
  if (!Array.isArray(data) || data.length === 0) return 'vncua';
  return data.some((e: unknown) => isRecord(e) && ('index' in e || 'started_at' in e)) ? 'vncua' : 'uitask';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
