/**
 * Scoring (`vncua score DIR`): per run, the uitask scorer's metrics plus ours; aggregates per agent,
 * per resolution and per task group, with pass@1 / pass@k / pass^k over repeats and the flaky tasks
 * (score-repeat.ts); written as scores.json, scores.md and scores.html (score-render.ts).
 * A run whose trace, result.json or task.json cannot be read is `invalid` (score-invalid.ts): listed
 * with its reason, excluded from every rate. The semantics are documented in eval/README.md ("Scores").
 */
import { readQaRows, type QaAppRow } from './score-qa.ts';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { VncuaError } from '../harness/errors.ts';
import { writeFileAtomic } from '../harness/trace/atomic.ts';
import { roundUsd } from '../harness/trace/model-calls.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { STOP_STATUSES, runResultSchema, type RunEvidence, type RunResult, type RunStatus, type StopStatus, type TraceEntry } from '../harness/trace/schema.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { infraErrorOf } from './infra.ts';
import { TASK_FILE, isMovedAsideName } from './layout.ts';
import { readJsonFile, runReadProblem, type InvalidReason } from './score-invalid.ts';
import { renderScoresHtml, renderScoresMarkdown } from './score-render.ts';
import { judgeDisagreements, judgeRates, runJudges, type Disagreement, type JudgeRate, type RunJudgeVerdict } from './score-judges.ts';
import { flakyTasks, passAtK, taskOutcomes, type FlakyTask, type PassAtK } from './score-repeat.ts';
import { taskGroup } from './tasks.ts';

/**
 * Statuses counted apart, like infra errors: neither a success nor a failure of the agent's skill. The stop statuses
 * (the agent said why it stopped: ambiguity, needs_human, sensitive_action, problem) and cost_cap (a cost cap stopped it).
 */
export const APART_STATUSES = [...STOP_STATUSES, 'cost_cap'] as const;

/** One of APART_STATUSES. */
export type ApartStatus = StopStatus | 'cost_cap';

/** Whether `status` is counted apart (APART_STATUSES). */
export function isApartStatus(status: unknown): status is ApartStatus {
  return (APART_STATUSES as readonly unknown[]).includes(status);
}

/** The per-run metrics. */
export interface RunMetrics {
  /** Some entry has task_marked_complete true, and no person acted before the first (a success after a person's step is `assisted_success`, not the agent's). */
  success: boolean;
  /** The task was first seen complete at or after a person's step (a takeover: entries with actor "human"). */
  assisted_success: boolean;
  /** Entries with actor "human": steps a person took during a takeover. */
  human_steps: number;
  /** Index of the first entry with task_marked_complete true (null if none), whoever took that step. */
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
  /** The run ended with a status counted apart (APART_STATUSES: the agent's stop statuses, cost_cap): excluded from rates, counted per status; null otherwise. */
  stopped: ApartStatus | null;
  /** result.json's reason (why the agent stopped, in its words or the model's refusal); null without one. */
  reason: string | null;
  /** result.json's model_calls: calls a model agent made; null when none were recorded (no model agent, or an older result.json). */
  model_calls: number | null;
  /** result.json's input_tokens (every call's prompt, cache included); null when not every call reported usage. */
  input_tokens: number | null;
  /** result.json's output_tokens; null when not every call reported usage. */
  output_tokens: number | null;
  /** result.json's cost_usd (USD at list prices); null when the run made no priced calls or some call was not priced. */
  cost_usd: number | null;
  /** result.json's domain_blocked: requests the navigation guard blocked (DOMAIN_BLOCKED); null when the run had no guard. */
  domain_blocked: number | null;
}

/** One scored run. */
export interface RunScore extends RunMetrics {
  agent: string;
  /** `WxH`, or `unknown`. */
  resolution: string;
  task_id: string;
  group: string;
  /** Which repeat of the task this run is (`<task id>/<n>/` with --repeat K; 1 for a single run). */
  repeat: number;
  /** The run directory, relative to the scored root ('/' separators). */
  dir: string;
  /** result.json's status; without one: 'partial' (only partial_execution.json: still running, or killed), 'unknown' (a final trace, e.g. uitask's); 'invalid' when a file cannot be read. */
  status: RunStatus | 'partial' | 'unknown' | 'invalid';
  /** Why the run cannot be scored (a file not JSON, failing its schema, unreadable); null when it can. Invalid runs are excluded from every rate. */
  invalid: InvalidReason | null;
  error: { code: string; message: string } | null;
  /** The step report (action_screenshots.html) if it exists, else the trace file, relative to the root. */
  link: string | null;
  /** The step report's anchor of the first successful step (`…/action_screenshots.html#step-N`, N = success_index), when the run succeeded and has a report. */
  success_link: string | null;
  /** result.json's success_at: when the check that first saw the success answered (epoch ms); null without one (or an older result.json). */
  success_at: number | null;
  /** result.json's evidence of that success: rule, pattern, matching snippet, URL, time, entry and phase (immediate, grace or final). */
  evidence: RunEvidence | null;
  /** Each judge's verdict from judges.json (eval/judges/); null when the run was not judged. */
  judges: RunJudgeVerdict[] | null;
  /** Why judges.json could not be read (the run is scored without its judges); null when it could, or there is none. */
  judges_problem: string | null;
}

/** Aggregated metrics of a set of runs (infra errors and invalid runs excluded from everything but their counts). */
export interface Aggregate {
  /** Runs counted (infra errors and invalid runs excluded). */
  runs: number;
  /** The agent's own successes (assisted ones excluded). */
  successes: number;
  /** successes / runs (null when runs is 0). */
  success_rate: number | null;
  /** Runs whose task was first seen complete after a person's step (counted in runs, not in successes). */
  assisted_successes: number;
  /** Runs in which a person took some step (a takeover). */
  human_runs: number;
  proper_stops: number;
  proper_stop_rate: number | null;
  completes: number;
  complete_rate: number | null;
  /** Mean steps_performed. */
  avg_steps: number | null;
  /** Mean duration_ms over runs that have one. */
  avg_duration_ms: number | null;
  /** Runs counted apart per status (APART_STATUSES; every status present, 0 when none): not in `runs`, not successes, not failures. */
  stopped: Record<ApartStatus, number>;
  /** USD over the runs, those counted apart included (a run that made no model calls counts 0); null when no run made model calls, or some run's calls were not all priced. */
  cost_usd: number | null;
  /** cost_usd / (runs + the runs counted apart). */
  avg_cost_usd: number | null;
  /** cost_usd / successes (null without a success). */
  cost_per_success: number | null;
  infra_errors: number;
  /** Runs that could not be read (see RunScore.invalid). */
  invalid: number;
  /** DOMAIN_BLOCKED: requests the navigation guard blocked over the counted runs; null when none of them had a guard. */
  domain_blocked: number | null;
  /** Counted runs in which the guard blocked something. */
  domain_blocked_runs: number;
}

/** One row of by_agent / by_resolution / by_group: the run aggregates and the repeat metrics. */
export type AggregateRow = Aggregate & PassAtK;

/** Everything `vncua score` writes into scores.json. */
export interface ScoreReport {
  version: 1;
  root: string;
  generated_at: string;
  agents: string[];
  resolutions: string[];
  runs: RunScore[];
  infra_errors: Array<Pick<RunScore, 'agent' | 'resolution' | 'task_id' | 'repeat' | 'dir' | 'error' | 'link'>>;
  /** Runs counted apart (APART_STATUSES), with their status and reason. */
  stopped: Array<Pick<RunScore, 'agent' | 'resolution' | 'task_id' | 'repeat' | 'dir' | 'status' | 'reason' | 'error' | 'link'>>;
  /** Runs that could not be read, with the reason (excluded from every rate). */
  invalid: Array<Pick<RunScore, 'agent' | 'resolution' | 'task_id' | 'repeat' | 'dir' | 'link'> & { reason: InvalidReason }>;
  /** Tasks whose counted repeats disagree (some succeeded, some did not). */
  flaky: FlakyTask[];
  by_agent: Array<{ agent: string } & AggregateRow>;
  by_resolution: Array<{ agent: string; resolution: string } & AggregateRow>;
  by_group: Array<{ agent: string; resolution: string; group: string } & AggregateRow>;
  /** Each judge's pass rate per agent (judges.json; empty when no run was judged). */
  judges: JudgeRate[];
  /** Runs whose judges disagree (some pass, some fail), with links. */
  disagreements: Disagreement[];
  /** One line per explored app (runs with a qa-report.json: eval/score-qa.ts); absent when there is none. */
  qa?: QaAppRow[];
}

/** What scoreRun() takes: a trace's entries, whether it was partial, and result.json when there is one. */
export interface RunInput {
  entries: ReadonlyArray<Pick<TraceEntry, 'action' | 'task_marked_complete'> & { started_at?: number; ended_at?: number; actor?: 'human' }>;
  /** True when only partial_execution.json exists (or no trace at all). */
  partial: boolean;
  result: Pick<RunResult, 'status' | 'durationMs' | 'error' | 'model_calls' | 'input_tokens' | 'output_tokens' | 'cost_usd' | 'reason' | 'domain_blocked'> | null;
  /** True when the directory holds no trace file at all (with no result.json either, the run never started: counted as infra). */
  noTrace?: boolean;
}

/** Where the run's task was first seen complete, and whether a person's step (actor "human") came at or before it (an assisted success, not the agent's). */
export function firstSuccess(entries: RunInput['entries']): { index: number; assisted: boolean } | null {
  const index = entries.findIndex((e) => e.task_marked_complete === true);
  if (index < 0) return null;
  const human = entries.findIndex((e) => e.actor === 'human');
  return { index, assisted: human >= 0 && human <= index };
}

/** The metrics of one run (see RunMetrics and eval/README.md). */
export function scoreRun(r: RunInput): RunMetrics {
  const { entries } = r;
  const first = firstSuccess(entries);
  const successIndex = first?.index ?? -1;
  const finishIndex = entries.findIndex((e) => e.action === 'finish');
  // A person's step at or before the first success: the success is theirs (or shared), not the agent's.
  const assisted = first?.assisted === true;
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
    success: successIndex >= 0 && !assisted,
    assisted_success: assisted,
    human_steps: entries.filter((e) => e.actor === 'human').length,
    success_index: successIndex >= 0 ? successIndex : null,
    finish_index: finishIndex >= 0 ? finishIndex : null,
    proper_stop: finishIndex >= 0 && successIndex >= 0 && !assisted && successIndex <= finishIndex,
    complete: !r.partial && !infra && endedOnItsOwn,
    steps_performed: entries.length,
    duration_ms: duration,
    actions_by_type: actions,
    infra_error: infra,
    stopped: !infra && isApartStatus(r.result?.status) ? r.result.status : null,
    reason: r.result?.reason ?? null,
    model_calls: r.result?.model_calls ?? null,
    input_tokens: r.result?.input_tokens ?? null,
    output_tokens: r.result?.output_tokens ?? null,
    cost_usd: r.result?.cost_usd ?? null,
    domain_blocked: r.result?.domain_blocked ?? null,
  };
}

/** Aggregate runs (infra errors, invalid runs and the APART_STATUSES counted apart). */
export function aggregate(runs: ReadonlyArray<RunMetrics & { invalid?: InvalidReason | null }>): Aggregate {
  const invalid = runs.filter((r) => r.invalid).length;
  const apart = runs.filter((r) => !r.infra_error && !r.invalid && r.stopped !== null);
  const counted = runs.filter((r) => !r.infra_error && !r.invalid && r.stopped === null);
  const stopped = Object.fromEntries(APART_STATUSES.map((s) => [s, apart.filter((r) => r.stopped === s).length])) as Record<ApartStatus, number>;
  const n = counted.length;
  const count = (f: (r: RunMetrics) => boolean) => counted.filter(f).length;
  const rate = (k: number) => (n === 0 ? null : k / n);
  const durations = counted.map((r) => r.duration_ms).filter((d): d is number => d !== null);
  const successes = count((r) => r.success);
  const proper = count((r) => r.proper_stop);
  const completes = count((r) => r.complete);
  // Cost: only when some run made model calls and every run that made any was priced (a run without calls cost nothing).
  // Runs counted apart spent money too: their cost is in the sums (not in the per-run and per-success means' denominators).
  const withCalls = [...counted, ...apart].filter((r) => r.model_calls !== null && r.model_calls > 0);
  const cost = withCalls.length > 0 && withCalls.every((r) => r.cost_usd !== null) ? roundUsd(withCalls.reduce((s, r) => s + r.cost_usd!, 0)) : null;
  return {
    runs: n,
    successes,
    success_rate: rate(successes),
    assisted_successes: count((r) => r.assisted_success),
    human_runs: count((r) => r.human_steps > 0),
    proper_stops: proper,
    proper_stop_rate: rate(proper),
    completes,
    complete_rate: rate(completes),
    avg_steps: n === 0 ? null : counted.reduce((s, r) => s + r.steps_performed, 0) / n,
    avg_duration_ms: durations.length === 0 ? null : durations.reduce((s, d) => s + d, 0) / durations.length,
    stopped,
    cost_usd: cost,
    avg_cost_usd: cost === null || n + apart.length === 0 ? null : cost / (n + apart.length),
    cost_per_success: cost === null || successes === 0 ? null : cost / successes,
    infra_errors: runs.length - n - invalid - apart.length,
    // Blocked requests over every run that was not an infra error or invalid (those counted apart included).
    domain_blocked: [...counted, ...apart].some((r) => r.domain_blocked !== null) ? [...counted, ...apart].reduce((s, r) => s + (r.domain_blocked ?? 0), 0) : null,
    domain_blocked_runs: [...counted, ...apart].filter((r) => (r.domain_blocked ?? 0) > 0).length,
    invalid,
  };
}

const RUN_FILES = [TASK_FILE, TRACE_FILES.result, TRACE_FILES.execution, TRACE_FILES.partial];
/** Directories that belong to a run and never hold another run. */
const SKIP_DIRS = new Set(['recording', 'action_screenshots', 'node_modules', '.git']);

/** Every run directory under `root` (a directory holding task.json, result.json or a trace); runs moved aside by --rerun (`<dir>~N`) are skipped. */
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
      if (SKIP_DIRS.has(name) || name.startsWith('.') || isMovedAsideName(name)) continue;
      const p = join(dir, name);
      if ((await stat(p).catch(() => null))?.isDirectory()) await walk(p);
    }
  };
  await walk(root);
  return out;
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => null)) !== null;
}

const posix = (p: string) => p.split(sep).join('/');

/** Where a run directory sits in the layout: OUT/<agent>/<W>_<H>/<task id>/, or OUT/<agent>/<W>_<H>/<task id>/<n>/ (repeats). */
function layoutOf(root: string, dir: string): { agent: string; resolution?: string; taskId: string; repeat?: number } {
  const isRes = (name: string) => /^\d+_\d+$/.test(name);
  const up = (n: number) => {
    let d = dir;
    for (let i = 0; i < n; i++) d = dirname(d);
    return d;
  };
  if (isRes(basename(up(1)))) return { agent: basename(up(2)), resolution: basename(up(1)).replace('_', 'x'), taskId: basename(dir) };
  if (/^[1-9]\d*$/.test(basename(dir)) && isRes(basename(up(2)))) {
    return { agent: basename(up(3)), resolution: basename(up(2)).replace('_', 'x'), taskId: basename(up(1)), repeat: Number(basename(dir)) };
  }
  return { agent: posix(relative(root, up(1))) || basename(root), taskId: basename(dir) };
}

/** Score one run directory. */
export async function scoreRunDir(root: string, dir: string): Promise<RunScore> {
  const rel = (p: string) => posix(relative(root, p)) || '.';
  const taskRead = await readJsonFile(join(dir, TASK_FILE));
  const task = (taskRead.state === 'ok' && typeof taskRead.data === 'object' && taskRead.data !== null ? taskRead.data : undefined) as
    | { id?: string; agent?: string; resolution?: string; group?: string; repeat?: number }
    | undefined;
  const resultRead = await readJsonFile(join(dir, TRACE_FILES.result));
  const parsed = resultRead.state === 'ok' ? runResultSchema.safeParse(resultRead.data) : undefined;
  const result = parsed?.success ? parsed.data : null;
  let entries: TraceEntry[] = [];
  let partial = true;
  let traceFile: string | null = null;
  let noTrace = false;
  let traceError: unknown;
  try {
    const t = await readTrace(dir);
    entries = t.entries;
    partial = t.partial;
    traceFile = t.path;
  } catch (e) {
    // No trace (a run that never started) is scored as empty and partial; an unreadable one is invalid.
    noTrace = (e as { code?: string }).code === 'TRACE_ERR_NOT_FOUND';
    if (!noTrace) traceError = e;
  }
  const invalid = await runReadProblem(dir, { task: taskRead, result: resultRead, resultIssue: parsed?.success === false ? parsed.error.issues[0] : undefined, traceError, rel });
  // An invalid run is not scored at all: no success, no steps, whatever parts of it could be read.
  const m = invalid ? { ...scoreRun({ entries: [], partial: true, result: null }), duration_ms: null } : scoreRun({ entries, partial, result, noTrace });
  // Layout OUT/<agent>/<W>_<H>/<task id>[/<n>]/, unless task.json says otherwise.
  const at = layoutOf(root, dir);
  const id = task?.id ?? at.taskId;
  const report = join(dir, 'action_screenshots.html');
  const hasReport = await exists(report);
  const linkFile = hasReport ? report : (traceFile ?? ((await exists(join(dir, TRACE_FILES.result))) ? join(dir, TRACE_FILES.result) : null));
  const judged = await runJudges(dir);
  return {
    agent: task?.agent ?? at.agent,
    resolution: task?.resolution ?? at.resolution ?? 'unknown',
    task_id: id,
    group: task?.group ?? taskGroup(id),
    repeat: typeof task?.repeat === 'number' ? task.repeat : (at.repeat ?? 1),
    dir: rel(dir),
    status: invalid ? 'invalid' : (result?.status ?? (partial ? 'partial' : 'unknown')),
    invalid,
    error:
      result?.error ??
      (m.infra_error ? { code: 'EVAL_ERR_DESKTOP_LOST', message: 'The run never started: no trace and no result.json (the runner was stopped while its desktop started).' } : null),
    link: linkFile ? rel(linkFile) : null,
    success_link: hasReport && m.success_index !== null ? `${rel(report)}#step-${m.success_index}` : null,
    success_at: result?.success_at ?? null,
    evidence: result?.evidence ?? null,
    judges: judged.judges,
    judges_problem: judged.problem,
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
  return pa[0]! - pb[0]! || pa[1]! - pb[1]! || a.localeCompare(b);
}

/** Score every run under `root`; EVAL_ERR_NO_RUNS when there is none. */
export async function scoreRoot(rootDir: string, opts: { signal?: AbortSignal } = {}): Promise<ScoreReport> {
  const root = resolve(rootDir);
  const dirs = await findRunDirs(root);
  opts.signal?.throwIfAborted();
  if (dirs.length === 0) {
    throw new VncuaError('EVAL_ERR_NO_RUNS', `No run directories under ${root} (looked for ${RUN_FILES.join(', ')}); give the --out directory of vncua eval.`, {
      details: { root },
    });
  }
  const runs: RunScore[] = [];
  for (const d of dirs) {
    opts.signal?.throwIfAborted();
    runs.push(await scoreRunDir(root, d));
  }
  runs.sort((a, b) => a.agent.localeCompare(b.agent) || byResolution(a.resolution, b.resolution) || a.task_id.localeCompare(b.task_id) || a.repeat - b.repeat);
  const agents = [...new Set(runs.map((r) => r.agent))].sort();
  const resolutions = [...new Set(runs.map((r) => r.resolution))].sort(byResolution);
  const row = (rs: RunScore[]): AggregateRow => ({ ...aggregate(rs), ...passAtK(taskOutcomes(rs)) });
  const by_agent = [...groupBy(runs, (r) => r.agent)].map(([agent, rs]) => ({ agent, ...row(rs) }));
  const by_resolution = [...groupBy(runs, (r) => `${r.agent}\0${r.resolution}`)].map(([k, rs]) => {
    const [agent, resolution] = k.split('\0') as [string, string];
    return { agent, resolution, ...row(rs) };
  });
  const by_group = [...groupBy(runs, (r) => `${r.agent}\0${r.resolution}\0${r.group}`)]
    .map(([k, rs]) => {
      const [agent, resolution, group] = k.split('\0') as [string, string, string];
      return { agent, resolution, group, ...row(rs) };
    })
    .sort((a, b) => a.agent.localeCompare(b.agent) || byResolution(a.resolution, b.resolution) || a.group.localeCompare(b.group));
  const qa = await readQaRows(root, runs);
  return {
    version: 1,
    root,
    generated_at: new Date().toISOString(),
    ...(qa.length ? { qa } : {}),
    agents,
    resolutions,
    runs,
    infra_errors: runs.filter((r) => r.infra_error).map(({ agent, resolution, task_id, repeat, dir, error, link }) => ({ agent, resolution, task_id, repeat, dir, error, link })),
    stopped: runs
      .filter((r) => r.stopped !== null && !r.invalid)
      .map(({ agent, resolution, task_id, repeat, dir, status, reason, error, link }) => ({ agent, resolution, task_id, repeat, dir, status, reason, error, link })),
    invalid: runs.flatMap(({ agent, resolution, task_id, repeat, dir, link, invalid }) => (invalid ? [{ agent, resolution, task_id, repeat, dir, link, reason: invalid }] : [])),
    flaky: flakyTasks(taskOutcomes(runs)),
    by_agent,
    by_resolution,
    by_group,
    judges: judgeRates(runs),
    disagreements: judgeDisagreements(runs),
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
