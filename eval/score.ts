/**
 * Scoring (`vncua score DIR`): per run, the uitask scorer's metrics plus ours; aggregates per agent,
 * per resolution and per task group; written as scores.json, scores.md and scores.html (score-render.ts).
 * The semantics are documented in eval/README.md ("Scores").
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { VncuaError } from '../harness/errors.ts';
import { writeFileAtomic } from '../harness/trace/atomic.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { runResultSchema, type RunEvidence, type RunResult, type RunStatus, type TraceEntry } from '../harness/trace/schema.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { infraErrorOf } from './infra.ts';
import { TASK_FILE } from './layout.ts';
import { renderScoresHtml, renderScoresMarkdown } from './score-render.ts';
import { taskGroup } from './tasks.ts';

/** The per-run metrics. */
export interface RunMetrics {
  /** Some entry has task_marked_complete true. */
  success: boolean;
  /** Index of the first entry with task_marked_complete true (null if none). */
  success_index: number | null;
  /** Index of the first `finish` entry (null if none). */
  finish_index: number | null;
  /** finish was called and the task was complete at that point (success_index <= finish_index). */
  proper_stop: boolean;
  /** The run ended on its own: a final execution.json (not only partial_execution.json) and, when result.json exists, status finished or max_steps. */
  complete: boolean;
  /** Number of trace entries (failed attempts included). */
  steps_performed: number;
  /** result.json's durationMs, else last ended_at - first started_at, else null. */
  duration_ms: number | null;
  /** Entries per action name. */
  actions_by_type: Record<string, number>;
  /** The run ended infra_error (or with an infra error code): excluded from rates. */
  infra_error: boolean;
}

/** One scored run. */
export interface RunScore extends RunMetrics {
  agent: string;
  /** `WxH`, or `unknown`. */
  resolution: string;
  task_id: string;
  group: string;
  /** The run directory, relative to the scored root ('/' separators). */
  dir: string;
  /** result.json's status; without one: 'partial' (only partial_execution.json: still running, or killed), 'unknown' (a final trace, e.g. uitask's). */
  status: RunStatus | 'partial' | 'unknown';
  error: { code: string; message: string } | null;
  /** The step report (action_screenshots.html) if it exists, else the trace file, relative to the root. */
  link: string | null;
  /** The step report's anchor of the first successful step (`…/action_screenshots.html#step-N`, N = success_index), when the run succeeded and has a report. */
  success_link: string | null;
  /** result.json's success_at: when the check that first saw the success answered (epoch ms); null without one (or an older result.json). */
  success_at: number | null;
  /** result.json's evidence of that success: rule, pattern, matching snippet, URL, time, entry and phase (immediate, grace or final). */
  evidence: RunEvidence | null;
}

/** Aggregated metrics of a set of runs (infra errors excluded from everything but `infra_errors`). */
export interface Aggregate {
  /** Runs counted (infra errors excluded). */
  runs: number;
  successes: number;
  /** successes / runs (null when runs is 0). */
  success_rate: number | null;
  proper_stops: number;
  proper_stop_rate: number | null;
  completes: number;
  complete_rate: number | null;
  /** Mean steps_performed. */
  avg_steps: number | null;
  /** Mean duration_ms over runs that have one. */
  avg_duration_ms: number | null;
  infra_errors: number;
}

/** Everything `vncua score` writes into scores.json. */
export interface ScoreReport {
  version: 1;
  root: string;
  generated_at: string;
  agents: string[];
  resolutions: string[];
  runs: RunScore[];
  infra_errors: Array<Pick<RunScore, 'agent' | 'resolution' | 'task_id' | 'dir' | 'error' | 'link'>>;
  by_agent: Array<{ agent: string } & Aggregate>;
  by_resolution: Array<{ agent: string; resolution: string } & Aggregate>;
  by_group: Array<{ agent: string; resolution: string; group: string } & Aggregate>;
}

/** What scoreRun() takes: a trace's entries, whether it was partial, and result.json when there is one. */
export interface RunInput {
  entries: ReadonlyArray<Pick<TraceEntry, 'action' | 'task_marked_complete'> & { started_at?: number; ended_at?: number }>;
  /** True when only partial_execution.json exists (or no trace at all). */
  partial: boolean;
  result: Pick<RunResult, 'status' | 'durationMs' | 'error'> | null;
  /** True when the directory holds no trace file at all (with no result.json either, the run never started: counted as infra). */
  noTrace?: boolean;
}

/** The metrics of one run (see RunMetrics and eval/README.md). */
export function scoreRun(r: RunInput): RunMetrics {
  const { entries } = r;
  const successIndex = entries.findIndex((e) => e.task_marked_complete === true);
  const finishIndex = entries.findIndex((e) => e.action === 'finish');
  const actions: Record<string, number> = {};
  for (const e of entries) actions[e.action] = (actions[e.action] ?? 0) + 1;
  // No result.json and no trace: the agent never ran (killed while its desktop started).
  const infra = r.result !== null ? infraErrorOf(r.result) !== null : r.noTrace === true;
  const endedOnItsOwn = r.result === null || r.result.status === 'finished' || r.result.status === 'max_steps';
  let duration: number | null = r.result?.durationMs ?? null;
  if (duration === null && entries.length > 0) {
    const first = entries[0]!.started_at;
    const last = entries[entries.length - 1]!.ended_at;
    if (first !== undefined && last !== undefined) duration = Math.max(0, last - first);
  }
  return {
    success: successIndex >= 0,
    success_index: successIndex >= 0 ? successIndex : null,
    finish_index: finishIndex >= 0 ? finishIndex : null,
    proper_stop: finishIndex >= 0 && successIndex >= 0 && successIndex <= finishIndex,
    complete: !r.partial && !infra && endedOnItsOwn,
    steps_performed: entries.length,
    duration_ms: duration,
    actions_by_type: actions,
    infra_error: infra,
  };
}

/** Aggregate runs (infra errors counted apart). */
export function aggregate(runs: readonly RunMetrics[]): Aggregate {
  const counted = runs.filter((r) => !r.infra_error);
  const n = counted.length;
  const count = (f: (r: RunMetrics) => boolean) => counted.filter(f).length;
  const rate = (k: number) => (n === 0 ? null : k / n);
  const durations = counted.map((r) => r.duration_ms).filter((d): d is number => d !== null);
  const successes = count((r) => r.success);
  const proper = count((r) => r.proper_stop);
  const completes = count((r) => r.complete);
  return {
    runs: n,
    successes,
    success_rate: rate(successes),
    proper_stops: proper,
    proper_stop_rate: rate(proper),
    completes,
    complete_rate: rate(completes),
    avg_steps: n === 0 ? null : counted.reduce((s, r) => s + r.steps_performed, 0) / n,
    avg_duration_ms: durations.length === 0 ? null : durations.reduce((s, d) => s + d, 0) / durations.length,
    infra_errors: runs.length - n,
  };
}

const RUN_FILES = [TASK_FILE, TRACE_FILES.result, TRACE_FILES.execution, TRACE_FILES.partial];
/** Directories that belong to a run and never hold another run. */
const SKIP_DIRS = new Set(['recording', 'action_screenshots', 'node_modules', '.git']);

/** Every run directory under `root` (a directory holding task.json, result.json or a trace). */
export async function findRunDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    if (RUN_FILES.some((f) => names.includes(f))) {
      out.push(dir);
      return;
    }
    for (const name of names.sort()) {
      if (SKIP_DIRS.has(name) || name.startsWith('.')) continue;
      const p = join(dir, name);
      if ((await stat(p).catch(() => null))?.isDirectory()) await walk(p);
    }
  };
  await walk(root);
  return out;
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => null)) !== null;
}

const posix = (p: string) => p.split(sep).join('/');

/** Score one run directory. */
export async function scoreRunDir(root: string, dir: string): Promise<RunScore> {
  const task = (await readJson(join(dir, TASK_FILE))) as { id?: string; agent?: string; resolution?: string; group?: string } | undefined;
  const parsed = runResultSchema.safeParse(await readJson(join(dir, TRACE_FILES.result)));
  const result = parsed.success ? parsed.data : null;
  let entries: TraceEntry[] = [];
  let partial = true;
  let traceFile: string | null = null;
  let noTrace = false;
  try {
    const t = await readTrace(dir);
    entries = t.entries;
    partial = t.partial;
    traceFile = t.path;
  } catch (e) {
    // no trace (a run that never started, or an unreadable one): scored as empty and partial
    noTrace = (e as { code?: string }).code === 'TRACE_ERR_NOT_FOUND';
  }
  const m = scoreRun({ entries, partial, result, noTrace });
  // Layout OUT/<agent>/<W>_<H>/<task id>/, unless task.json says otherwise.
  const resDir = basename(dirname(dir));
  const resFromPath = /^\d+_\d+$/.test(resDir) ? resDir.replace('_', 'x') : undefined;
  const agentFromPath = resFromPath ? basename(dirname(dirname(dir))) : posix(relative(root, dirname(dir))) || basename(root);
  const id = task?.id ?? basename(dir);
  const report = join(dir, 'action_screenshots.html');
  const hasReport = await exists(report);
  const linkFile = hasReport ? report : (traceFile ?? ((await exists(join(dir, TRACE_FILES.result))) ? join(dir, TRACE_FILES.result) : null));
  return {
    agent: task?.agent ?? agentFromPath,
    resolution: task?.resolution ?? resFromPath ?? 'unknown',
    task_id: id,
    group: task?.group ?? taskGroup(id),
    dir: posix(relative(root, dir)) || '.',
    status: result?.status ?? (partial ? 'partial' : 'unknown'),
    error: result?.error ?? (m.infra_error ? { code: 'EVAL_ERR_DESKTOP_LOST', message: 'The run never started: no trace and no result.json (the runner was stopped while its desktop started).' } : null),
    link: linkFile ? posix(relative(root, linkFile)) : null,
    success_link: hasReport && m.success_index !== null ? `${posix(relative(root, report))}#step-${m.success_index}` : null,
    success_at: result?.success_at ?? null,
    evidence: result?.evidence ?? null,
    ...m,
  };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = m.get(k);
    if (list) list.push(x);
    else m.set(k, [x]);
  }
  return m;
}

/** Natural order for resolutions (by width then height) and names. */
function byResolution(a: string, b: string): number {
  const pa = a.split('x').map(Number);
  const pb = b.split('x').map(Number);
  return (pa[0]! - pb[0]!) || (pa[1]! - pb[1]!) || a.localeCompare(b);
}

/** Score every run under `root`; EVAL_ERR_NO_RUNS when there is none. */
export async function scoreRoot(rootDir: string, opts: { signal?: AbortSignal } = {}): Promise<ScoreReport> {
  const root = resolve(rootDir);
  const dirs = await findRunDirs(root);
  opts.signal?.throwIfAborted();
  if (dirs.length === 0) {
    throw new VncuaError('EVAL_ERR_NO_RUNS', `No run directories under ${root} (looked for ${RUN_FILES.join(', ')}); give the --out directory of vncua eval.`, { details: { root } });
  }
  const runs: RunScore[] = [];
  for (const d of dirs) {
    opts.signal?.throwIfAborted();
    runs.push(await scoreRunDir(root, d));
  }
  runs.sort((a, b) => a.agent.localeCompare(b.agent) || byResolution(a.resolution, b.resolution) || a.task_id.localeCompare(b.task_id));
  const agents = [...new Set(runs.map((r) => r.agent))].sort();
  const resolutions = [...new Set(runs.map((r) => r.resolution))].sort(byResolution);
  const by_agent = [...groupBy(runs, (r) => r.agent)].map(([agent, rs]) => ({ agent, ...aggregate(rs) }));
  const by_resolution = [...groupBy(runs, (r) => `${r.agent}\0${r.resolution}`)].map(([k, rs]) => {
    const [agent, resolution] = k.split('\0') as [string, string];
    return { agent, resolution, ...aggregate(rs) };
  });
  const by_group = [...groupBy(runs, (r) => `${r.agent}\0${r.resolution}\0${r.group}`)]
    .map(([k, rs]) => {
      const [agent, resolution, group] = k.split('\0') as [string, string, string];
      return { agent, resolution, group, ...aggregate(rs) };
    })
    .sort((a, b) => a.agent.localeCompare(b.agent) || byResolution(a.resolution, b.resolution) || a.group.localeCompare(b.group));
  return {
    version: 1,
    root,
    generated_at: new Date().toISOString(),
    agents,
    resolutions,
    runs,
    infra_errors: runs.filter((r) => r.infra_error).map(({ agent, resolution, task_id, dir, error, link }) => ({ agent, resolution, task_id, dir, error, link })),
    by_agent,
    by_resolution,
    by_group,
  };
}

/** Paths of the files writeScores() wrote. */
export interface ScoreFiles {
  json: string;
  markdown: string;
  html: string;
}

/** Score `root` and write scores.json, scores.md and scores.html into it. */
export async function writeScores(rootDir: string, opts: { signal?: AbortSignal } = {}): Promise<{ report: ScoreReport; files: ScoreFiles }> {
  const report = await scoreRoot(rootDir, opts);
  const files = { json: join(report.root, 'scores.json'), markdown: join(report.root, 'scores.md'), html: join(report.root, 'scores.html') };
  await writeFileAtomic(files.json, `${JSON.stringify(report, null, 2)}\n`);
  await writeFileAtomic(files.markdown, renderScoresMarkdown(report));
  await writeFileAtomic(files.html, renderScoresHtml(report));
  return { report, files };
}
