/**
 * `reenact()`: replay a recorded trace (`execution.json` or `partial_execution.json`, written by
 * vncua or by the Python uitask harness) on a desktop through an Agent's primitives, one entry per
 * act() call, `stepWaitSeconds` apart, and record the replay as `reenact_execution.json` (same
 * entry format, with the replayed actions' own timings, errors and success checks).
 *
 * Choices:
 * - Entries that carry an `error` in the original are replayed as given (the same params, even
 *   invalid ones) and their new outcome is recorded; if they fail again the replay goes on. An
 *   entry that succeeded in the original but fails on replay ends the replay with status `error`
 *   (the screen or the page differs from the recording).
 * - An entry whose action is unknown is not rejected up front: the entries before it are replayed,
 *   then the replay ends with ACTION_ERR_UNKNOWN_ACTION (naming its index and the known actions);
 *   `reenact_execution.json` holds the replayed entries and is a valid trace. Any other invalid
 *   entry before it is TRACE_ERR_INVALID, thrown before anything is replayed.
 * - The Agent writes its files into a temporary directory inside the output directory, so the
 *   original `execution.json` / `result.json` are never overwritten; when the run ends they are
 *   moved to `reenact_execution.json`, `reenact_result.json` and (on error) `reenact_error.txt`.
 */
import { mkdir, mkdtemp, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { VncuaError } from '../errors.ts';
import { detectSource, parseExecution, parseUitaskExecution } from '../trace/parse.ts';
import type { TraceEntry } from '../trace/schema.ts';
import { TRACE_FILES } from '../trace/writer.ts';
import { Agent, type AgentRunResult } from './agent.ts';
import { applyAction, isKnownAction, unknownActionError } from './apply-action.ts';
import type { AgentOptions } from './options.ts';
import { sleep } from './round-trip.ts';

/** Files reenact() writes into its output directory. */
export const REENACT_FILES = {
  execution: 'reenact_execution.json',
  result: 'reenact_result.json',
  error: 'reenact_error.txt',
} as const;

/** Options of reenact(): the Agent's options (desktop endpoints, success check...), plus pacing and where to write. */
export interface ReenactOptions extends Omit<AgentOptions, 'outputDir'> {
  /** Seconds to wait between two replayed entries (not before the first), 0..3600. */
  stepWaitSeconds: number;
  /** Where to write reenact_execution.json (default: the directory of the trace). */
  outputDir?: string;
  /** Cancel the replay: it ends `cancelled`, the entries replayed so far stay recorded. */
  signal?: AbortSignal;
}

/** What reenact() resolves to: the run's result, and where the replay's files are. */
export interface ReenactResult extends AgentRunResult {
  /** The trace that was replayed. */
  tracePath: string;
  /** reenact_execution.json of this replay. */
  reenactPath: string;
}

/** The trace to replay: its entries up to the first unknown action, and that action if any. */
interface LoadedTrace {
  file: string;
  entries: TraceEntry[];
  unknown: { index: number; action: unknown } | undefined;
}

/** Replays the entries of a trace, one per act() call. */
class ReenactAgent extends Agent {
  #next = 0;

  constructor(
    options: AgentOptions,
    private readonly trace: LoadedTrace,
    private readonly stepWaitMs: number,
  ) {
    super(options);
  }

  /** Number of act() calls the whole replay takes. */
  get total(): number {
    return this.trace.entries.length + (this.trace.unknown ? 1 : 0);
  }

  override async act(): Promise<boolean> {
    const i = this.#next++;
    if (i > 0 && this.stepWaitMs > 0) await sleep(this.stepWaitMs, this.signal);
    const entry = this.trace.entries[i];
    if (entry === undefined) {
      if (this.trace.unknown) throw unknownActionError(this.trace.unknown.index, this.trace.unknown.action);
      return true;
    }
    try {
      await applyAction(this, entry, i);
    } catch (e) {
      // A failure the original also had is recorded (by the Agent) and the replay goes on.
      if (!('error' in entry) || entry.error === undefined || this.signal.aborted) throw e;
    }
    return this.#next >= this.total;
  }
}

/**
 * Replay `tracePath` (a trace file, or a run's output directory: its execution.json, else
 * partial_execution.json) and write reenact_execution.json. Throws TRACE_ERR_NOT_FOUND /
 * TRACE_ERR_INVALID / AGENT_ERR_BAD_OPTIONS before replaying anything; after that it never rejects
 * and resolves to the run's result (status `finished` once every entry was replayed).
 */
export async function reenact(tracePath: string, options: ReenactOptions): Promise<ReenactResult> {
  const { stepWaitSeconds, outputDir: out, signal, ...agentOptions } = options;
  if (typeof stepWaitSeconds !== 'number' || !Number.isFinite(stepWaitSeconds) || stepWaitSeconds < 0 || stepWaitSeconds > 3600) {
    throw new VncuaError('AGENT_ERR_BAD_OPTIONS', `reenact option stepWaitSeconds must be a number of seconds from 0 to 3600; got ${String(stepWaitSeconds)}.`, {
      details: { field: 'stepWaitSeconds', value: stepWaitSeconds },
    });
  }
  const trace = await loadTrace(tracePath);
  const outputDir = out ?? dirname(trace.file);
  await mkdir(outputDir, { recursive: true });
  const work = await mkdtemp(join(outputDir, '.reenact-'));
  try {
    const agent = new ReenactAgent({ ...agentOptions, outputDir: work }, trace, stepWaitSeconds * 1000);
    const result = await agent.run({ maxSteps: Math.max(1, agent.total), signal });
    const reenactPath = join(outputDir, REENACT_FILES.execution);
    await moveIfExists(join(work, TRACE_FILES.execution), reenactPath);
    await moveIfExists(join(work, TRACE_FILES.result), join(outputDir, REENACT_FILES.result));
    await rm(join(outputDir, REENACT_FILES.error), { force: true });
    await moveIfExists(join(work, TRACE_FILES.error), join(outputDir, REENACT_FILES.error));
    return { ...result, tracePath: trace.file, reenactPath };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {});
  }
}

async function moveIfExists(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Read a trace: entries validated (as readTrace does) up to the first entry with an unknown action. */
async function loadTrace(path: string): Promise<LoadedTrace> {
  const file = await resolveTraceFile(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new VncuaError('TRACE_ERR_NOT_FOUND', `No trace file at ${file}; pass an execution.json, a partial_execution.json or a run's output directory.`, {
      cause,
      details: { path: file },
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw new VncuaError('TRACE_ERR_INVALID', `${file} is not valid JSON (${(cause as Error).message}); the file is corrupt or truncated.`, {
      cause,
      details: { path: file },
    });
  }
  if (!Array.isArray(data)) return { file, entries: parseExecution(data, file), unknown: undefined }; // throws TRACE_ERR_INVALID
  const cut = data.findIndex((e: unknown) => !isKnownAction((e as { action?: unknown } | null)?.action) && typeof e === 'object' && e !== null && 'action' in e);
  const prefix = cut === -1 ? data : data.slice(0, cut);
  const entries = detectSource(data) === 'vncua' ? parseExecution(prefix, file) : parseUitaskExecution(prefix, file);
  return { file, entries, unknown: cut === -1 ? undefined : { index: cut, action: (data[cut] as { action: unknown }).action } };
}

async function resolveTraceFile(path: string): Promise<string> {
  let isDir = false;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch {
    // not there: reported when read
  }
  if (!isDir) return path;
  for (const name of [TRACE_FILES.execution, TRACE_FILES.partial]) {
    const candidate = join(path, name);
    try {
      await stat(candidate);
      return candidate;
    } catch {
      // try the next
    }
  }
  throw new VncuaError('TRACE_ERR_NOT_FOUND', `No ${TRACE_FILES.execution} or ${TRACE_FILES.partial} in ${path}; pass a run's output directory or a trace file.`, {
    details: { path },
  });
}
