/**
 * Parsing trace arrays already read from JSON: vncua's own (strict, with `index` and timing) and
 * uitask's (no index, no timing, params nested as uitask records them), both normalized to `TraceEntry`.
 * Every failure is a `TRACE_ERR_INVALID` naming the file, the first bad entry index and field.
 */
import type { z } from 'zod';
import { VncuaError } from '../errors.ts';
import { failedEntrySchema, okEntrySchema, type ExecutionEntry, type TraceEntry } from './schema.ts';
import { normalizeUitaskEntry } from './uitask.ts';

type Issue = z.ZodError['issues'][number];

/** Where a trace came from: written by vncua, or by the Python uitask harness. */
export type TraceSource = 'vncua' | 'uitask';

/** Dotted field path of a zod issue (`params.position.x`), including the first unknown key if any. */
export function issueField(issue: Issue, prefix: readonly PropertyKey[] = []): string {
  const path: PropertyKey[] = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** What a TRACE_ERR_INVALID message ends with for a vncua trace. */
const VNCUA_HINT = 'It does not match the trace schema (schemas/*.schema.json); fix or remove the bad part.';
/** ... and for a trace without vncua's index and timing, read as uitask's. */
const UITASK_HINT = 'The trace has no "index" / "started_at" (a vncua trace has them), and this is not what uitask writes either; fix or remove the bad part.';

/** A `TRACE_ERR_INVALID` naming the file, entry index and field. */
export function invalidTrace(file: string, index: number | undefined, field: string, problem: string, hint = VNCUA_HINT): VncuaError {
  const where = [index === undefined ? '' : `entry ${index}`, field ? `field "${field}"` : ''].filter(Boolean).join(', ');
  return new VncuaError('TRACE_ERR_INVALID', `${file}${where ? ` (${where})` : ''}: ${problem}. ${hint}`, { details: { path: file, index, field, problem } });
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
 * Normalizes a trace written by the Python uitask harness (harness/trace/uitask.ts has its exact
 * shapes): entries `{ action, params, task_marked_complete }`, no index, no timing, params nested
 * as uitask binds them. Each becomes a `TraceEntry` with vncua's flat params, `index` = position
 * and timing undefined; a missing `task_marked_complete` is null; other top-level keys are kept
 * under `meta.uitask`. An entry whose params are not exactly uitask's is TRACE_ERR_INVALID naming
 * the file, the entry and the field (with uitask's shape for that action in the message).
 */
export function parseUitaskExecution(data: unknown, file = '<memory>'): TraceEntry[] {
  if (!Array.isArray(data)) throw invalidTrace(file, undefined, '', 'expected a JSON array of entries');
  return data.map((raw: unknown, i) => {
    const r = normalizeUitaskEntry(raw, i);
    if ('issue' in r) throw invalidTrace(file, i, r.issue.field, r.issue.problem, UITASK_HINT);
    return r.entry;
  });
}

/** Which harness wrote a parsed trace array: vncua entries carry `index` / `started_at`, uitask's never do. */
export function detectSource(data: unknown): TraceSource {
  if (!Array.isArray(data) || data.length === 0) return 'vncua';
  return data.some((e: unknown) => isRecord(e) && ('index' in e || 'started_at' in e)) ? 'vncua' : 'uitask';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
