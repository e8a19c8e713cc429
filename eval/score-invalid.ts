/**
 * Nothing is scored that could not be read. A run is `invalid` when its trace (execution.json, else
 * partial_execution.json), result.json or task.json exists but cannot be read (unreadable, not JSON,
 * failing its schema), or when its directory holds both a run and numbered repeats. An invalid run is
 * listed with its reason in every scores file, excluded from every rate, and makes `vncua score` exit
 * non-zero unless --allow-invalid.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { isVncuaError } from '../harness/errors.ts';
import { issueField } from '../harness/trace/parse.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { REPEAT_DIR, TASK_FILE } from './layout.ts';

/** Why a run cannot be scored. */
export interface InvalidReason {
  /** TRACE_ERR_INVALID (a file that cannot be read) or EVAL_ERR_LAYOUT_MIXED. */
  code: string;
  message: string;
  /** The file (or directory) at fault, relative to the scored root. */
  file: string;
}

/** A JSON file as read: absent, parsed, or present but unusable (why). */
export type JsonRead = { state: 'missing' } | { state: 'ok'; data: unknown } | { state: 'bad'; why: string };

/** Read and parse a JSON file, telling "absent" from "there but unreadable or not JSON". */
export async function readJsonFile(file: string): Promise<JsonRead> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'missing' };
    return { state: 'bad', why: `cannot be read (${code ?? (e as Error).message})` };
  }
  try {
    return { state: 'ok', data: JSON.parse(text) as unknown };
  } catch (e) {
    return { state: 'bad', why: `is not valid JSON (${(e as Error).message})` };
  }
}

/** What scoreRunDir() found, to judge the run. */
export interface RunReads {
  task: JsonRead;
  result: JsonRead;
  /** The first schema issue of result.json, when it parsed but does not match. */
  resultIssue?: z.ZodError['issues'][number] | undefined;
  /** What readTrace() threw, other than "no trace file". */
  traceError?: unknown;
  /** A path relative to the scored root. */
  rel(path: string): string;
}

const invalidFile = (file: string, message: string): InvalidReason => ({ code: 'TRACE_ERR_INVALID', message, file });

/** The reason a run directory cannot be scored, or null. */
export async function runReadProblem(dir: string, r: RunReads): Promise<InvalidReason | null> {
  if (r.traceError !== undefined) {
    const path = isVncuaError(r.traceError) ? (r.traceError.details?.path as string | undefined) : undefined;
    const file = r.rel(path ?? join(dir, TRACE_FILES.execution));
    const message = r.traceError instanceof Error ? r.traceError.message : String(r.traceError);
    // The reader's message names the absolute path: name it as the scores do, relative to the root.
    return invalidFile(file, path ? message.split(path).join(file) : `${file}: ${message}`);
  }
  const resultFile = r.rel(join(dir, TRACE_FILES.result));
  if (r.result.state === 'bad') return invalidFile(resultFile, `${resultFile} ${r.result.why}`);
  if (r.resultIssue) {
    const field = issueField(r.resultIssue) || '(the file)';
    return invalidFile(resultFile, `${resultFile} fails the result schema at "${field}": ${r.resultIssue.message}`);
  }
  const taskFile = r.rel(join(dir, TASK_FILE));
  if (r.task.state === 'bad') return invalidFile(taskFile, `${taskFile} ${r.task.why}`);
  if (r.task.state === 'ok' && (typeof r.task.data !== 'object' || r.task.data === null || Array.isArray(r.task.data))) {
    return invalidFile(taskFile, `${taskFile} is not a JSON object`);
  }
  const repeats = await repeatDirsWithRuns(dir);
  if (repeats.length > 0) {
    return {
      code: 'EVAL_ERR_LAYOUT_MIXED',
      message: `${r.rel(dir)} holds a run and also numbered repeats (${repeats.join(', ')}); only one layout can be scored: move one of them away.`,
      file: r.rel(dir),
    };
  }
  return null;
}

const RUN_NAMES = [TASK_FILE, TRACE_FILES.result, TRACE_FILES.execution, TRACE_FILES.partial];

/** Names of `<n>/` subdirectories of `dir` that hold run files. */
async function repeatDirsWithRuns(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || !REPEAT_DIR.test(e.name)) continue;
    const names = await readdir(join(dir, e.name)).catch(() => [] as string[]);
    if (RUN_NAMES.some((n) => names.includes(n))) out.push(e.name);
  }
  return out.sort((a, b) => Number(a) - Number(b));
}
