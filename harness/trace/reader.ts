/**
 * Reading a run's trace files back: `execution.json` / `partial_execution.json` written by vncua or
 * by the Python uitask harness, and `result.json`.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { VncuaError } from '../errors.ts';
import { detectSource, invalidTrace, issueField, parseExecution, parseUitaskExecution, type TraceSource } from './parse.ts';
import { runResultSchema, type RunResult, type TraceEntry } from './schema.ts';
import { TRACE_FILES } from './writer.ts';

/** A trace read from disk. */
export interface ReadTrace {
  /** Entries in order, `index` equal to position; timing undefined for uitask traces. */
  entries: TraceEntry[];
  /** Which harness wrote the file. */
  source: TraceSource;
  /** True when read from partial_execution.json (the run did not finalize: still running or crashed). */
  partial: boolean;
  /** The file that was read. */
  path: string;
}

/**
 * Reads and validates a trace. `path` is a trace file, or an output directory (then execution.json
 * is read, else partial_execution.json). Throws TRACE_ERR_NOT_FOUND if there is no such file and
 * TRACE_ERR_INVALID (file, first bad entry index and field) if it is not a valid trace.
 */
export async function readTrace(path: string): Promise<ReadTrace> {
  const file = await resolveTraceFile(path);
  const data = await readJson(file);
  const source = detectSource(data);
  const entries = source === 'vncua' ? parseExecution(data, file) : parseUitaskExecution(data, file);
  return { entries, source, partial: basename(file) === TRACE_FILES.partial, path: file };
}

/** Reads and validates result.json (`path` is the file or the output directory). */
export async function readResult(path: string): Promise<RunResult> {
  const file = (await isDirectory(path)) ? join(path, TRACE_FILES.result) : path;
  const data = await readJson(file);
  const r = runResultSchema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw invalidTrace(file, undefined, issueField(issue), issue.message);
  }
  return r.data;
}

async function resolveTraceFile(path: string): Promise<string> {
  if (!(await isDirectory(path))) return path;
  for (const name of [TRACE_FILES.execution, TRACE_FILES.partial]) {
    const candidate = join(path, name);
    if (await exists(candidate)) return candidate;
  }
  throw new VncuaError('TRACE_ERR_NOT_FOUND', `No ${TRACE_FILES.execution} or ${TRACE_FILES.partial} in ${path}; pass a run's output directory or a trace file.`, {
    details: { path },
  });
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new VncuaError('TRACE_ERR_NOT_FOUND', `No trace file at ${file}; check the path.`, { cause, details: { path: file } });
    }
    throw new VncuaError('TRACE_ERR_INVALID', `Could not read ${file}: ${(cause as Error).message}.`, { cause, details: { path: file } });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new VncuaError('TRACE_ERR_INVALID', `${file} is not valid JSON (${(cause as Error).message}); the file is corrupt or truncated.`, {
      cause,
      details: { path: file, index: undefined, field: '' },
    });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
