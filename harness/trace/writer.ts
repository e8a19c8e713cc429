/**
 * `TraceWriter`: records a run's actions into its output directory so that they survive a crash.
 *
 * - `open()` creates the directory and an empty `partial_execution.json` (`[]`). It refuses a directory
 *   that already holds a finished run (`execution.json` or `result.json`: OUTPUT_ERR_RUN_EXISTS,
 *   nothing touched) unless `{ overwrite: true }`, and a path on a pseudo-filesystem (/proc, /sys:
 *   OUTPUT_ERR_PSEUDO_FS, where Node's recursive mkdir would spin forever).
 * - `append(entry)` adds one entry and atomically replaces `partial_execution.json` with every entry
 *   so far: a `kill -9` at any instant leaves a valid JSON array holding at least every entry whose
 *   append had resolved (see atomic.ts for the no-fsync trade-off and `{ durable: true }`).
 * - `markComplete(index, check)` sets an earlier entry's `task_marked_complete` to true with the
 *   evidence of the late check that saw it (`success_check`), rewritten the same atomic way.
 * - `finalize()` waits for pending appends, writes `execution.json` atomically, then removes
 *   `partial_execution.json`.
 * - `writeResult()` / `writeError()` write `result.json` / `error.txt` atomically.
 *
 * Cost: each entry is stringified once, when appended (again only if marked complete later), and
 * kept as text; a write joins the kept lines instead of re-serializing the array. Appends are serialized on a promise chain, and one
 * write covers every entry appended before it started, so a burst of appends costs one write each
 * at most. Methods take no AbortSignal on purpose: a cancelled run must still record its trace.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { VncuaError } from '../errors.ts';
import { writeError, writeFileAtomic, removeFile, type AtomicWriteOptions } from './atomic.ts';
import { roundMs } from './clock.ts';
import { formatRunError } from './error-text.ts';
import { assertNotPseudoFs, finishedRunFiles, runExistsError } from './out-dir.ts';
import { entryIssue, invalidTrace, issueField } from './parse.ts';
import { entrySuccessSchema, runResultSchema, type EntrySuccess, type ExecutionEntry, type RunResult, type TraceEntryInput } from './schema.ts';

/** File names inside a run's output directory. */
export const TRACE_FILES = {
  execution: 'execution.json',
  partial: 'partial_execution.json',
  result: 'result.json',
  error: 'error.txt',
} as const;

/** Options of `TraceWriter`. */
export interface TraceWriterOptions {
  /** fsync each file and the directory (survives power loss, costs a few ms per write). Default false. */
  durable?: boolean;
  /** Check each entry against the zod schema before writing (TRACE_ERR_INVALID if bad). Default true. */
  validate?: boolean;
  /** Let open() write over a finished run's execution.json / result.json in the directory. Default false: OUTPUT_ERR_RUN_EXISTS. */
  overwrite?: boolean;
}

type State = 'new' | 'opening' | 'open' | 'finalizing' | 'finalized';

/** Writes execution.json / partial_execution.json / result.json / error.txt of one run. */
export class TraceWriter {
  /** The run's output directory. */
  readonly outputDir: string;
  /** Absolute-or-relative paths of the four files, inside `outputDir`. */
  readonly paths: { readonly [K in keyof typeof TRACE_FILES]: string };

  readonly #write: AtomicWriteOptions;
  readonly #validate: boolean;
  readonly #overwrite: boolean;
  #state: State = 'new';
  #opening: Promise<void> | undefined;
  #finalizing: Promise<void> | undefined;
  /** The entries, and each one serialized (stringified once, again only when marked complete). */
  #entries: ExecutionEntry[] = [];
  #lines: string[] = [];
  /** Bumped by every append and markComplete; the partial file on disk holds version #written. */
  #version = 0;
  #written = 0;
  #chain: Promise<void> = Promise.resolve();

  constructor(outputDir: string, options: TraceWriterOptions = {}) {
    this.outputDir = outputDir;
    this.paths = {
      execution: join(outputDir, TRACE_FILES.execution),
      partial: join(outputDir, TRACE_FILES.partial),
      result: join(outputDir, TRACE_FILES.result),
      error: join(outputDir, TRACE_FILES.error),
    };
    this.#write = { durable: options.durable ?? false };
    this.#validate = options.validate ?? true;
    this.#overwrite = options.overwrite ?? false;
  }

  /** Number of entries appended so far. */
  get length(): number {
    return this.#entries.length;
  }

  /** Creates the output directory and an empty partial_execution.json; idempotent. OUTPUT_ERR_RUN_EXISTS when it holds a finished run (unless overwrite). */
  open(): Promise<void> {
    if (this.#opening) return this.#opening;
    this.#state = 'opening';
    this.#opening = (async () => {
      try {
        if (!this.#overwrite) {
          const found = await finishedRunFiles(this.outputDir);
          if (found.length > 0) throw runExistsError(this.outputDir, found, 'Write into another directory, move it away, or pass overwrite: true.');
        }
        await this.#ensureDir();
        await writeFileAtomic(this.paths.partial, render([]), this.#write);
        this.#state = 'open';
      } catch (e) {
        this.#state = 'new';
        this.#opening = undefined;
        throw e;
      }
    })();
    return this.#opening;
  }

  /**
   * Appends one entry (index and duration_ms are filled in) and resolves once partial_execution.json
   * on disk holds it. The index is assigned synchronously, in call order. A failed write rejects with
   * TRACE_ERR_WRITE; the entry stays in the trace and the next successful write includes it.
   */
  async append(input: TraceEntryInput): Promise<ExecutionEntry> {
    if (this.#state !== 'open') throw this.#illegal('append');
    const entry = buildEntry(this.#entries.length, input);
    if (this.#validate) {
      const issue = entryIssue(entry);
      if (issue) throw invalidTrace(this.paths.partial, entry.index, issueField(issue), `refusing to append: ${issue.message}`);
    }
    this.#entries.push(entry);
    this.#lines.push(JSON.stringify(entry));
    await this.#save();
    return entry;
  }

  /**
   * Marks entry `index` complete after the fact: `task_marked_complete` becomes true and `success_check`
   * holds what the later check saw. Resolves once partial_execution.json on disk holds it (TRACE_ERR_WRITE
   * otherwise, as append). TRACE_ERR_INVALID for an unknown index or bad evidence; TRACE_ERR_ILLEGAL_STATE
   * after finalize() started.
   */
  async markComplete(index: number, check: EntrySuccess): Promise<ExecutionEntry> {
    if (this.#state !== 'open') throw this.#illegal('markComplete');
    const old = this.#entries[index];
    if (!Number.isInteger(index) || old === undefined) {
      throw invalidTrace(this.paths.partial, undefined, 'index', `refusing to mark entry ${String(index)} complete: the trace has ${this.#entries.length} entries`);
    }
    const parsed = entrySuccessSchema.safeParse(check);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw invalidTrace(this.paths.partial, index, `success_check.${issueField(issue)}`, `refusing to mark complete: ${issue.message}`);
    }
    const { index: _i, duration_ms: _d, ...input } = old;
    const entry = buildEntry(index, { ...input, task_marked_complete: true, success_check: parsed.data } as TraceEntryInput);
    this.#entries[index] = entry;
    this.#lines[index] = JSON.stringify(entry);
    await this.#save();
    return entry;
  }

  /** Write the partial file once more after everything changed so far (serialized with earlier writes). */
  async #save(): Promise<void> {
    const target = ++this.#version;
    const done = this.#chain.then(() => this.#flush(target));
    this.#chain = done.catch(() => undefined);
    await done;
  }

  /** Waits for pending appends, writes execution.json, removes partial_execution.json; idempotent, retryable after a failure. */
  finalize(): Promise<void> {
    if (this.#finalizing) return this.#finalizing;
    if (this.#state !== 'open') return Promise.reject(this.#illegal('finalize'));
    this.#state = 'finalizing';
    this.#finalizing = (async () => {
      try {
        await this.#chain;
        await writeFileAtomic(this.paths.execution, render(this.#lines), this.#write);
        await removeFile(this.paths.partial, this.#write);
        this.#state = 'finalized';
      } catch (e) {
        this.#state = 'open';
        this.#finalizing = undefined;
        throw e;
      }
    })();
    return this.#finalizing;
  }

  /** Validates and writes result.json atomically (creates the directory if needed). */
  async writeResult(result: RunResult): Promise<void> {
    const r = runResultSchema.safeParse(result);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      throw invalidTrace(this.paths.result, undefined, issueField(issue), issue.message);
    }
    await this.#ensureDir();
    await writeFileAtomic(this.paths.result, `${JSON.stringify(r.data, null, 2)}\n`, this.#write);
  }

  /** Writes error.txt (message, code, stack and causes of a run failure) atomically. */
  async writeError(err: unknown): Promise<void> {
    await this.#ensureDir();
    await writeFileAtomic(this.paths.error, formatRunError(err), this.#write);
  }

  async #flush(target: number): Promise<void> {
    if (this.#written >= target) return;
    const v = this.#version;
    await writeFileAtomic(this.paths.partial, render(this.#lines), this.#write);
    this.#written = v;
  }

  async #ensureDir(): Promise<void> {
    await assertNotPseudoFs(this.outputDir);
    try {
      await mkdir(this.outputDir, { recursive: true });
    } catch (cause) {
      throw writeError(this.outputDir, cause);
    }
  }

  #illegal(method: string): VncuaError {
    const why = this.#state === 'new' || this.#state === 'opening' ? 'call and await open() first' : 'the trace was already finalized';
    return new VncuaError('TRACE_ERR_ILLEGAL_STATE', `TraceWriter.${method}() on ${this.outputDir}: ${why}.`, {
      details: { state: this.#state, outputDir: this.outputDir },
    });
  }
}

/** The entry as written: fields in file order, index and duration_ms filled in. */
function buildEntry(index: number, input: TraceEntryInput): ExecutionEntry {
  const e: Record<string, unknown> = {
    index,
    action: input.action,
    ...(input.actor !== undefined ? { actor: input.actor } : {}),
    params: input.params,
    task_marked_complete: input.task_marked_complete,
    started_at: input.started_at,
    ended_at: input.ended_at,
    duration_ms: roundMs(input.ended_at - input.started_at),
  };
  if ('error' in input && input.error !== undefined) e.error = input.error;
  if (input.success_check !== undefined) e.success_check = input.success_check;
  if (input.meta !== undefined) e.meta = input.meta;
  return e as ExecutionEntry;
}

/** The file text: one entry per line inside a JSON array. */
function render(lines: readonly string[]): string {
  return lines.length === 0 ? '[]\n' : `[\n${lines.join(',\n')}\n]\n`;
}
