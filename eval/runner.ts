/**
 * `runSuite()`: every task at every resolution, each on a fresh desktop, `workers` at a time.
 *
 * Per run (task × resolution × repeat), into `OUT/<agent>/<W>_<H>/<task id>/` (with `repeat` K > 1:
 * `…/<task id>/<n>/` for n = 1..K; layout.ts):
 * 1. skip it if that directory holds a finished result; with `rerun`, move that result aside to
 *    `<dir>~N` (never deleted); else clear it (a partial directory left by a killed runner, a
 *    cancelled or infra_error run: the runner's own leftovers);
 * 2. write task.json (the task as run, plus attempt, resolution, agent, started_at);
 * 3. get a desktop from the provider at that size, opening the task's page;
 * 4. build the agent with its AgentContext and `run({ maxSteps, signal, ready })` it: it connects (and
 *    records, through the recording proxy that `ctx.agentOptions.recorder` hands the agent) while the page
 *    loads, and its first act() comes once the page is ready (the provider's `ready`: PAGE_ERR_* if never);
 * 5. check the desktop still works (its process alive, CDP answering);
 * 6. release the desktop in `finally`.
 * An infra failure (the desktop did not start, the task page never became ready, the VNC connection
 * dropped, Chromium died: infra.ts) retries the run up to `retries` times, then writes result.json
 * with status `infra_error`. A configuration error (infra.ts CONFIG_ERROR_CODES: a wrong API key, an
 * unknown model, an agent that cannot be built) stops the suite like a cancellation: no new run
 * starts, the running ones are cancelled, and `configError` says why (the CLI exits non-zero).
 * Cost caps: `maxCostUsd` is every run's own (the Agent's maxCostUsd); `maxSuiteCostUsd` is shared through one
 * CostBudget (harness/agent/cost-budget.ts) that counts what finished runs found on disk cost and every model call
 * of this invocation: once reached, the running runs end with status cost_cap before their next model call, and no
 * further run starts (`notStarted` in the summary; they run on a later invocation, like cancelled ones).
 *
 * Before anything is written: `out` is checked (harness/trace/out-dir.ts: a file, a pseudo-filesystem,
 * not writable, or itself a single run's directory are refused) and so is every task directory's layout
 * (a single run where repeats go, or the other way round: EVAL_ERR_LAYOUT_MIXED).
 *
 * eval/ does not import agents/ or byom/: the caller passes the agent as `{ name, build(ctx) }`.
 * Cancelling `signal` stops taking runs, cancels the running agents and tears their desktops down;
 * the cancelled runs' directories are removed, so a rerun redoes exactly those.
 *
 * One attempt of one run is eval/attempt.ts runAttempt(), which the queue's workers use too (eval/queue/).
 */
import { readFile, rm, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CostBudget } from '../harness/agent/cost-budget.ts';
import type { RateGate } from '../harness/agent/rate-gate.ts';
import { DEFAULT_MAX_STEPS } from '../harness/agent/options.ts';
import { DEFAULT_SCREEN_SIZE, type ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { writeFileAtomic } from '../harness/trace/atomic.ts';
import { now, roundMs } from '../harness/trace/clock.ts';
import type { RunResult, RunStatus } from '../harness/trace/schema.ts';
import { checkOutputDir, moveAside, runExistsError, runFiles } from '../harness/trace/out-dir.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { runAttempt, writeInfraError, type AttemptOptions, type InfraRecord, type JudgeVerdicts, type SuiteAgent } from './attempt.ts';
import { expandJobs, jobLabel, shardJobs, type EvalJob, type Shard } from './jobs.ts';
import { MOVED_ASIDE_SEP, TASK_FILE, checkLayouts, readDirState, resolutionLabel, runDir, taskDir } from './layout.ts';
import { desktopPool } from './desktop-pool.ts';
import { runWorkers } from './pool.ts';
import type { ProgressEvent, ProgressListener, ProgressSnapshot, WorkerStatus } from './progress.ts';
import { sortOutcomes, suiteTally } from './suite-tally.ts';
import { dockerProvider } from './providers/docker.ts';
import { localProvider } from './providers/local.ts';
import { remoteProvider, type RemoteEndpoint } from './providers/remote.ts';
import type { DesktopProvider } from './providers/types.ts';
import { TASK_ID_PATTERN, isRelativeUrl, type EvalTask } from './tasks.ts';
import type { PriceFn } from './judges/llm.ts';
import type { JudgeSpec } from './judges/spec.ts';

export type { SuiteAgent } from './attempt.ts';

/** Options of runSuite(). */
export interface RunSuiteOptions {
  /** The tasks, URLs absolute (resolve relative ones first: tasks.ts resolveTaskUrls). */
  tasks: readonly EvalTask[];
  /** Absolute path of the task file (ctx.taskFile; the replay agent finds its references beside it). */
  taskFile?: string;
  agent: SuiteAgent;
  /** Screen sizes to run every task at (default [1280x800]); a task with its own resolution runs at that one only. */
  resolutions?: readonly ScreenSize[];
  /** Runs at once (default 1). */
  workers?: number;
  /** Steps per run unless the task sets maxSteps (default DEFAULT_MAX_STEPS, the Agent's: 50). */
  maxSteps?: number;
  /** Extra attempts of a run after an infra failure (default 2). */
  retries?: number;
  /** Run again runs that already finished, moving the old ones aside to `<dir>~N` (default false: skip them). */
  rerun?: boolean;
  /** Run every task this many times (default 1); K > 1 puts repeat n into `<task id>/<n>/`. */
  repeat?: number;
  /** Run only shard i of n. */
  shard?: Shard;
  /** Results root. */
  out: string;
  /** Desktop provider: 'local' (default), 'docker', 'remote' (with `endpoints`), or a provider object. */
  provider?: 'local' | 'docker' | 'remote' | DesktopProvider;
  /** The remote provider's desktops. */
  endpoints?: readonly RemoteEndpoint[];
  /** Start timeout of each desktop, ms (provider default otherwise). */
  desktopTimeoutMs?: number;
  /**
   * Keep up to this many desktops started ahead of need (default 0: none), at the sizes of the next
   * runs in the queue (eval/desktop-pool.ts); each still serves one run. The provider must be able to
   * start desktops ahead (local, docker).
   */
  pool?: number;
  /**
   * With `pool`: a page on the tasks' own origin where spares wait (`vncua eval` passes its suite
   * server's SPARE_PAGE_PATH), so a task page opens in a renderer already up for its site; default:
   * the spares' empty page.
   */
  spareUrl?: string;
  /** ctx.script and ctx.args given to every build. */
  script?: string;
  args?: string[];
  /** The Agent's successGraceMs for every run (ctx.agentOptions; the Agent's default 1000 otherwise). */
  successGraceMs?: number;
  /** The Agent's live option for every run (ctx.agentOptions; default on: every run is watchable and can be taken over). */
  live?: boolean;
  /** The judges of every task without its own `judges` (eval/judges/): the final page is captured before the desktop goes, and judges.json written. */
  judges?: readonly JudgeSpec[];
  /** USD of an LLM judge's call (eval/ does not import byom/: the CLI passes byom/pricing.ts's table). */
  judgePrice?: PriceFn;
  /** Every run's cost cap in USD (the Agent's maxCostUsd, --max-cost). */
  maxCostUsd?: number;
  /** The suite's cost cap in USD (--max-suite-cost): see the file comment. */
  maxSuiteCostUsd?: number;
  /** The Agent's needsHuman for every run (--needs-human). */
  needsHuman?: 'end' | 'ask';
  /** The gate of model calls every run shares (--rate-limit: one LocalRateGate for the whole suite). */
  rateGate?: RateGate | null;
  /** The navigation guard for every run (--allowed-domains): a task's own allowedDomains narrows it (harness/guard mergeDomainLists). */
  allowedDomains?: readonly string[];
  /** Blocked for every run (--blocked-domains), besides each task's own blockedDomains. */
  blockedDomains?: readonly string[];
  /** The secrets file tasks' auth bindings and secrets are looked up in first (--secrets-file; harness/secrets/sources.ts). */
  secretsFile?: string;
  signal?: AbortSignal;
  onProgress?: ProgressListener;
}

/** How one run ended. */
export interface RunOutcome {
  taskId: string;
  /** `WxH`. */
  resolution: string;
  /** Which repeat (1-based). */
  repeat: number;
  dir: string;
  /** Where --rerun moved the finished run that was in `dir`. */
  movedAside?: string;
  /** The result's status; 'skipped' when an earlier invocation finished it; 'cancelled' when this one was stopped. */
  status: RunStatus | 'skipped';
  /** Whether the success check held at some step (null when unknown: skipped, no trace). */
  success: boolean | null;
  attempts: number;
  durationMs: number;
  /** The error the run ended with (for infra_error: the last attempt's infra error). */
  error?: { code: string; message: string };
  /** The last attempt's desktop overhead: ms from its start until the desktop was ready for the agent (task.json desktop_overhead_ms). */
  desktopOverheadMs?: number | null;
  /** The last attempt's desktop came from the pool. */
  pooled?: boolean;
  /** Each judge's verdict (judges.json), when the run was judged; `error` is the code of a judge that could not decide. */
  judges?: JudgeVerdicts;
}

/** A configuration error that stopped the suite, and the run that met it (`taskId@WxH`). */
export interface ConfigError {
  code: string;
  message: string;
  job: string;
}

/** What runSuite() resolves to. */
export interface SuiteSummary {
  agent: string;
  out: string;
  /** Runs in this shard. */
  total: number;
  skipped: number;
  /** Runs finished now (any status but cancelled). */
  ran: number;
  successes: number;
  infraErrors: number;
  cancelled: boolean;
  /** Set when a configuration error stopped the suite (the unfinished runs are left to a later invocation). */
  configError?: ConfigError;
  /** Runs not started because the suite's cost cap (maxSuiteCostUsd) was reached (left to a later invocation). */
  notStarted: number;
  /** With maxSuiteCostUsd: what the suite's model calls cost (the finished runs found on disk included), and the cap. */
  suiteCost?: { spentUsd: number; limitUsd: number; reached: boolean };
  outcomes: RunOutcome[];
}

const DEFAULTS = { workers: 1, maxSteps: DEFAULT_MAX_STEPS, retries: 2, repeat: 1, pool: 0 };

function badOption(field: string, value: unknown, why: string): VncuaError {
  return new VncuaError('EVAL_ERR_BAD_OPTIONS', `runSuite option ${field}: ${why}.`, { details: { field, value } });
}

function checkInt(field: string, v: number, min: number): void {
  if (!Number.isInteger(v) || v < min) throw badOption(field, v, `expected a whole number >= ${min}`);
}

/** The provider object for a name (or the object itself). */
export function resolveProvider(o: Pick<RunSuiteOptions, 'provider' | 'endpoints' | 'desktopTimeoutMs'>): DesktopProvider {
  const p = o.provider ?? 'local';
  if (typeof p !== 'string') return p;
  const timeout = o.desktopTimeoutMs !== undefined ? { timeoutMs: o.desktopTimeoutMs } : {};
  if (p === 'local') return localProvider(timeout);
  if (p === 'docker') return dockerProvider(timeout);
  if (p === 'remote') {
    if (!o.endpoints || o.endpoints.length === 0) throw badOption('endpoints', o.endpoints, 'the remote provider needs endpoints ([{ vncUrl, cdpUrl }], --endpoints FILE)');
    return remoteProvider([...o.endpoints]);
  }
  throw badOption('provider', p, "expected 'local', 'docker', 'remote' or a provider object");
}

/** Run the suite (see the file comment). Rejects only on bad options or an unusable provider; otherwise resolves with every run's outcome. */
export async function runSuite(opts: RunSuiteOptions): Promise<SuiteSummary> {
  const workers = opts.workers ?? DEFAULTS.workers;
  const maxSteps = opts.maxSteps ?? DEFAULTS.maxSteps;
  const retries = opts.retries ?? DEFAULTS.retries;
  const repeat = opts.repeat ?? DEFAULTS.repeat;
  const pool = opts.pool ?? DEFAULTS.pool;
  checkInt('workers', workers, 1);
  checkInt('pool', pool, 0);
  checkInt('maxSteps', maxSteps, 1);
  checkInt('retries', retries, 0);
  checkInt('repeat', repeat, 1);
  for (const [field, usd] of [
    ['maxCostUsd', opts.maxCostUsd],
    ['maxSuiteCostUsd', opts.maxSuiteCostUsd],
  ] as const) {
    if (usd !== undefined && !(typeof usd === 'number' && Number.isFinite(usd) && usd > 0)) throw badOption(field, usd, 'expected a positive number of USD');
  }
  const budget = opts.maxSuiteCostUsd === undefined ? null : new CostBudget(opts.maxSuiteCostUsd);
  if (!TASK_ID_PATTERN.test(opts.agent.name)) throw badOption('agent.name', opts.agent.name, `must match ${TASK_ID_PATTERN} (it names the results directory)`);
  const resolutions = opts.resolutions && opts.resolutions.length > 0 ? opts.resolutions : [DEFAULT_SCREEN_SIZE];
  if (opts.tasks.length === 0) throw badOption('tasks', [], 'no task to run');
  const relative = opts.tasks.find((t) => isRelativeUrl(t.url));
  if (relative)
    throw badOption(
      'tasks',
      relative.id,
      `task ${relative.id} has the relative URL "${relative.url}": resolve it against a base URL first (--base-url, or the suite's static server)`,
    );
  // The user's signal, or the first configuration error: either stops the suite.
  const stop = new AbortController();
  let configError: ConfigError | undefined;
  const stopSuite = (e: ConfigError) => {
    if (configError || opts.signal?.aborted) return;
    configError = e;
    stop.abort(new VncuaError('AGENT_ERR_CANCELLED', `the suite stopped on a configuration error (${e.code})`));
  };
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const inner = resolveProvider(opts);
  if (pool > 0 && !inner.start) throw badOption('pool', pool, `the ${inner.name} provider cannot start desktops ahead of need (the pool works with local and docker)`);
  const out = await checkOutputDir(resolve(opts.out), 'out');
  const holding = await runFiles(out);
  if (holding.length > 0) throw runExistsError(out, holding, "It is one run's directory, not a results root (OUT/<agent>/<W>_<H>/<task id>/): give another out.");
  const jobs = shardJobs(expandJobs(opts.tasks, resolutions, repeat), opts.shard);
  await checkLayouts(
    jobs.map((j) => taskDir(out, opts.agent.name, j.size, j.task.id)),
    repeat,
  );
  const sizes = [...new Map(jobs.map((j) => [resolutionLabel(j.size), j.size])).values()];
  await inner.prepare?.({ sizes, signal });

  const nWorkers = Math.max(1, Math.min(workers, inner.capacity ?? Infinity, jobs.length));
  const provider: DesktopProvider =
    pool > 0
      ? desktopPool(inner, {
          spares: pool,
          workers: nWorkers,
          ...(opts.spareUrl ? { standAt: opts.spareUrl } : {}),
          signal,
          ...(opts.desktopTimeoutMs ? { timeoutMs: opts.desktopTimeoutMs } : {}),
        })
      : inner;
  const tally = suiteTally({
    total: jobs.length,
    workers: Array.from({ length: nWorkers }, (_, worker): WorkerStatus => ({ worker, state: 'idle', since: Date.now() })),
    onProgress: opts.onProgress,
  });
  const { snapshot, emit } = tally;
  const setWorker = (w: number, state: WorkerStatus['state'], job?: EvalJob, attempt?: number) => {
    snapshot.workers[w] = { worker: w, state, ...(job ? { job: jobLabel(job) } : {}), ...(attempt ? { attempt } : {}), since: Date.now() };
    emit({ type: 'worker', worker: w });
  };

  // What is already done on disk.
  const outcomes: RunOutcome[] = [];
  const todo: EvalJob[] = [];
  const replace = new Set<EvalJob>();
  const skipped: EvalJob[] = [];
  for (const job of jobs) {
    const dir = jobDir(out, opts.agent.name, job);
    const state = await readDirState(dir);
    if (state.state === 'finished' && !opts.rerun) {
      // What a finished run cost counts against the suite's cap (a resumed suite spends only what is left).
      if (state.result.cost_usd !== undefined) budget?.add(state.result.cost_usd);
      await completeTaskJson(dir, state.result);
      snapshot.skipped++;
      skipped.push(job);
      outcomes.push({ taskId: job.task.id, resolution: resolutionLabel(job.size), repeat: job.repeat, dir, status: 'skipped', success: null, attempts: 0, durationMs: 0 });
    } else {
      if (state.state === 'finished') replace.add(job);
      todo.push(job);
    }
  }
  emit({ type: 'start' });
  for (const job of skipped) emit({ type: 'skip', job: jobLabel(job) });

  // Before each acquire, the provider learns what comes next: this run's size, then those of the runs
  // that have not asked for a desktop yet, in queue order (a pool starts desktops for them).
  const asked = new Set<EvalJob>();
  let firstUnasked = 0;
  const plan = (job: EvalJob) => {
    if (!provider.plan) return;
    asked.add(job);
    while (firstUnasked < todo.length && asked.has(todo[firstUnasked]!)) firstUnasked++;
    provider.plan([job.size, ...todo.slice(firstUnasked).flatMap((j) => (asked.has(j) ? [] : [j.size]))]);
  };
  const attempt: AttemptOptions = {
    agent: opts.agent,
    ...(opts.taskFile ? { taskFile: opts.taskFile } : {}),
    maxSteps,
    provider,
    ...(opts.desktopTimeoutMs ? { desktopTimeoutMs: opts.desktopTimeoutMs } : {}),
    script: opts.script,
    args: opts.args ?? [],
    ...(opts.successGraceMs !== undefined ? { successGraceMs: opts.successGraceMs } : {}),
    ...(opts.live !== undefined ? { live: opts.live } : {}),
    ...(opts.judges ? { judges: opts.judges } : {}),
    ...(opts.judgePrice ? { judgePrice: opts.judgePrice } : {}),
    ...(opts.maxCostUsd !== undefined ? { maxCostUsd: opts.maxCostUsd } : {}),
    ...(budget ? { costBudget: budget } : {}),
    ...(opts.needsHuman !== undefined ? { needsHuman: opts.needsHuman } : {}),
    ...(opts.rateGate ? { rateGate: opts.rateGate } : {}),
    ...(opts.allowedDomains ? { allowedDomains: opts.allowedDomains } : {}),
    ...(opts.blockedDomains ? { blockedDomains: opts.blockedDomains } : {}),
    ...(opts.secretsFile ? { secretsFile: opts.secretsFile } : {}),
    signal,
  };
  const ctx: JobContext = { opts, out, retries, attempt, signal, setWorker, emit, replace, stopSuite, plan };
  let notStarted = 0;
  try {
    await runWorkers(
      todo,
      nWorkers,
      async (job, w) => {
        // The suite's cost cap reached: no new run (the running ones stop before their next model call).
        if (budget?.reached) {
          notStarted++;
          return;
        }
        const o = await runJob(ctx, job, w);
        setWorker(w, 'idle');
        if (o.status === 'cancelled') return;
        outcomes.push(o);
        tally.recordDone(jobLabel(job), o);
      },
      signal,
    );
  } finally {
    await provider.close?.().catch(() => {});
    for (const w of snapshot.workers) w.state = 'done';
  }
  const cancelled = opts.signal?.aborted === true && outcomes.length < jobs.length;
  emit({ type: 'end', cancelled, ...(configError ? { configError } : {}) });
  sortOutcomes(outcomes, jobs);
  return {
    agent: opts.agent.name,
    out,
    total: jobs.length,
    skipped: snapshot.skipped,
    ran: snapshot.done,
    successes: snapshot.successes,
    infraErrors: snapshot.infraErrors,
    cancelled,
    ...(configError ? { configError } : {}),
    notStarted,
    ...(budget ? { suiteCost: { spentUsd: budget.spentUsd, limitUsd: budget.limitUsd, reached: budget.reached } } : {}),
    outcomes,
  };
}

/** The directory of one job's run. */
function jobDir(out: string, agent: string, job: EvalJob): string {
  return runDir(out, agent, job.size, job.task.id, job.repeat, job.repeats);
}

interface JobContext {
  opts: RunSuiteOptions;
  out: string;
  retries: number;
  /** What every attempt shares (eval/attempt.ts). */
  attempt: AttemptOptions;
  signal: AbortSignal | undefined;
  setWorker(w: number, state: WorkerStatus['state'], job?: EvalJob, attempt?: number): void;
  emit(e: ProgressEvent): void;
  /** Jobs whose finished run is moved aside before running (--rerun). */
  replace: ReadonlySet<EvalJob>;
  /** Stop the suite on a configuration error. */
  stopSuite(e: ConfigError): void;
  /** Tell the provider what comes next, before `job` acquires a desktop (DesktopProvider.plan). */
  plan(job: EvalJob): void;
}

/** Run one job: attempts (eval/attempt.ts) until a non-infra outcome, cancellation, or retries run out. */
async function runJob(c: JobContext, job: EvalJob, w: number): Promise<RunOutcome> {
  const { opts, signal } = c;
  const dir = jobDir(c.out, opts.agent.name, job);
  // --rerun of a finished run: keep it, moved aside to <dir>~N (the runner only ever deletes its own leftovers).
  const movedAside = c.replace.has(job) ? await moveAside(dir, MOVED_ASIDE_SEP) : undefined;
  const label = { taskId: job.task.id, resolution: resolutionLabel(job.size), repeat: job.repeat, dir, ...(movedAside ? { movedAside } : {}) };
  const infra: InfraRecord[] = [];
  const t0 = performance.now();
  const cancelled = async (attempts: number): Promise<RunOutcome> => {
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    return { ...label, status: 'cancelled', success: null, attempts, durationMs: roundMs(performance.now() - t0) };
  };
  let lastSteps = 0;
  let lastStartedAt = now();
  for (let attempt = 1; attempt <= c.retries + 1; attempt++) {
    if (signal?.aborted) return cancelled(attempt - 1);
    const a = await runAttempt({ ...c.attempt, onState: (state) => c.setWorker(w, state, job, attempt), plan: () => c.plan(job) }, job, { attempt, infra: [...infra], dir });
    if (a.kind === 'cancelled') return cancelled(attempt);
    if (a.kind === 'config') {
      c.stopSuite({ ...a.error, job: jobLabel(job) });
      return cancelled(attempt);
    }
    if (a.kind === 'infra') {
      lastStartedAt = a.startedAt;
      if (a.steps !== undefined) lastSteps = a.steps;
      infra.push(a.record);
      if (attempt <= c.retries) c.emit({ type: 'retry', job: jobLabel(job), attempt, error: { code: a.record.code, message: a.record.message } });
      continue;
    }
    return {
      ...label,
      status: a.result.status,
      success: a.success,
      attempts: attempt,
      durationMs: roundMs(performance.now() - t0),
      ...(a.result.error ? { error: a.result.error } : {}),
      desktopOverheadMs: a.desktopOverheadMs,
      pooled: a.pooled,
      ...(a.judges ? { judges: a.judges } : {}),
    };
  }
  // Every attempt hit an infra failure: the task is infra_error, never an agent failure.
  const last = infra[infra.length - 1]!;
  const result = await writeInfraError(c.attempt, job, dir, {
    attempts: c.retries + 1,
    infra,
    startedAt: lastStartedAt,
    steps: lastSteps,
    durationMs: roundMs(performance.now() - t0),
  });
  return { ...label, status: 'infra_error', success: null, attempts: c.retries + 1, durationMs: result.durationMs, error: { code: last.code, message: last.message } };
}

/**
 * A finished run whose task.json lacks its end (the runner was killed between the agent's result.json
 * and its own last task.json write, as bench/reliability.ts caught): fill in `status` from result.json and
 * `ended_at` from result.json's modification time, so task.json says how the run ended. Anything else
 * (no task.json, not JSON, already complete) is left as it is: scoring reports what it cannot read.
 */
export async function completeTaskJson(dir: string, result: Pick<RunResult, 'status'>): Promise<void> {
  const path = `${dir}/${TASK_FILE}`;
  try {
    const task = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    if (task === null || typeof task !== 'object' || Array.isArray(task) || task.status !== undefined) return;
    const ended = (await stat(`${dir}/${TRACE_FILES.result}`)).mtimeMs;
    await writeFileAtomic(path, `${JSON.stringify({ ...task, ended_at: ended, status: result.status }, null, 2)}\n`);
  } catch {
    // unreadable: left for scoring to report
  }
}
