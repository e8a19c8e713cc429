/**
 * The coordinator of a queued suite (`vncua eval --queue URL`): it enqueues the runs, shows the same
 * progress as a local run from the workers' reports, waits for the suite and returns the same summary
 * as runSuite() (cli/eval.ts scores it the same way).
 *
 * - **The suite**: its id (manifest.ts suiteIdOf) comes from the command, so the same command is the
 *   same suite: a restarted coordinator resumes it (its manifest is in Redis already). A new suite
 *   writes its manifest (`vncua:suite:<id>`) and the marker file `<out>/.vncua-queue/<id>.json` that
 *   tells workers they see the results root; `--rerun` moves finished runs aside (`<dir>~N`) as the
 *   local runner does, only when the suite is new (a resumed suite keeps what it finished).
 * - **Disk is the truth for "finished"**, Redis for "who runs what": at the start, every
 *   `reconcileMs` and after a Redis reconnect the coordinator re-derives what is left from disk and
 *   makes sure each unfinished run has a job (deterministic job id, idempotent add; a job Redis lost
 *   is added again, as is the manifest). A job left completed or failed by an earlier invocation for
 *   a run that is not finished (an infra_error run) is replaced, as the local runner retries those.
 *   The coordinator never writes a run directory itself (workers commit them: results-sink.ts).
 * - **Progress**: job progress reports give the worker rows (`host:pid #slot`), retries and
 *   completions give the lines; a run counts as done when its job completed or its directory holds a
 *   finished run.
 * - **A configuration error** (a worker failed a job with one: worker.ts CONFIG_FAILURE_PREFIX) stops
 *   the suite: the waiting jobs are removed, the running ones end on their own.
 * - **`signal`** (Ctrl-C) detaches: the suite keeps running on the workers; the same command
 *   reattaches (summary.cancelled, detached).
 * - **The end**: the suite's jobs, manifest, marker and staging leftovers are removed.
 */
import { mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { type Job, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_MAX_STEPS } from '../../harness/agent/options.ts';
import { DEFAULT_SCREEN_SIZE, type ScreenSize } from '../../harness/desktop/size.ts';
import { VncuaError } from '../../harness/errors.ts';
import { checkOutputDir, moveAside, runExistsError, runFiles } from '../../harness/trace/out-dir.ts';
import { traceSuccess } from '../attempt.ts';
import { expandJobs, jobLabel, shardJobs, type EvalJob, type Shard } from '../jobs.ts';
import { MOVED_ASIDE_SEP, checkLayouts, readDirState, resolutionLabel, runDir, taskDir } from '../layout.ts';
import type { ProgressListener } from '../progress.ts';
import { sortOutcomes, suiteTally } from '../suite-tally.ts';
import { completeTaskJson, type ConfigError, type RunOutcome, type SuiteSummary } from '../runner.ts';
import { readJudges } from '../judges/record.ts';
import type { JudgeSpec } from '../judges/spec.ts';
import { TASK_ID_PATTERN, type EvalTask } from '../tasks.ts';
import { connectQueue, redisOptions } from './connection.ts';
import {
  QUEUE_DIR,
  QUEUE_FORMAT,
  QUEUE_NAME,
  VNCUA_VERSION,
  type RunJobData,
  type SuiteManifest,
  fileSha256,
  manifestKey,
  parseManifest,
  runJobId,
  suiteIdOf,
} from './manifest.ts';
import { stagingRoot, sweepStaging } from './results-sink.ts';
import type { QueueUrl } from './url.ts';
import { CONFIG_FAILURE_PREFIX, type RunJobProgress, type RunJobResult, markerPath } from './worker.ts';

/** Options of runQueuedSuite(). */
export interface CoordinatorOptions {
  url: QueueUrl;
  /** The selected tasks (relative URLs stay relative: each worker serves them). */
  tasks: readonly EvalTask[];
  /** Absolute path of the task file. */
  taskFile: string;
  /** --base-url the tasks were loaded with. */
  baseUrl?: string;
  /** The --only patterns that selected `tasks`. */
  only?: readonly string[];
  /** The agent: as given (--agent), its results directory name, and its module file (none for a built-in). */
  agent: { spec: string; name: string; module?: string };
  resolutions?: readonly ScreenSize[];
  repeat?: number;
  maxSteps?: number;
  retries?: number;
  successGraceMs?: number;
  live?: boolean;
  script?: string;
  args?: readonly string[];
  shard?: Shard;
  desktopTimeoutMs?: number;
  /** The navigation guard of every run (--allowed-domains / --blocked-domains). */
  allowedDomains?: readonly string[];
  blockedDomains?: readonly string[];
  /** The judges of every task without its own (--judge). */
  judges?: readonly JudgeSpec[];
  /** Every run's cost cap in USD (--max-cost). (--max-suite-cost is refused with a queue: QUEUE_ERR_SUITE_COST.) */
  maxCostUsd?: number;
  /** The Agent's needsHuman for every run (--needs-human). */
  needsHuman?: 'end' | 'ask';
  /** --secrets-file: its path goes in the manifest (made absolute), never its values; each worker reads its own copy at that path. */
  secretsFile?: string;
  /** Results root (every worker sees it, or receives uploads: `upload`). */
  out: string;
  rerun?: boolean;
  /** The coordinator's upload receiver, when it offers one (eval/queue/upload/). */
  upload?: { url: string; token: string };
  /** --rate-limit rules every worker enforces through Redis (eval/queue/rate-limit.ts); in the manifest, not in the suite id. */
  rateLimits?: readonly string[];
  /** How often disk and Redis are reconciled (default 5000 ms). */
  reconcileMs?: number;
  connectTimeoutMs?: number;
  /** Detach (see the file comment). */
  signal?: AbortSignal;
  onProgress?: ProgressListener;
  /** Told the suite id once known, and whether it was resumed. */
  onSuite?(info: { suiteId: string; resumed: boolean; queued: number }): void;
}

/** What runQueuedSuite() resolves to. */
export interface QueuedSuiteSummary extends SuiteSummary {
  suiteId: string;
  /** The coordinator detached (signal): the suite goes on on the workers. */
  detached: boolean;
}

const DEFAULT_RECONCILE_MS = 5000;
/** States of a job still to run or running. */
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

function badOption(field: string, value: unknown, why: string): VncuaError {
  return new VncuaError('EVAL_ERR_BAD_OPTIONS', `queued suite option ${field}: ${why}.`, { details: { field, value } });
}

/** The manifest identity of a suite (manifest.ts suiteIdOf hashes it). */
async function identity(o: CoordinatorOptions, out: string, resolutions: readonly ScreenSize[], n: { repeat: number; maxSteps: number; retries: number }) {
  return {
    tasks: {
      file: o.taskFile,
      sha256: await fileSha256(o.taskFile),
      ...(o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {}),
      ...(o.only && o.only.length > 0 ? { only: [...o.only] } : {}),
    },
    agent: { spec: o.agent.spec, name: o.agent.name, ...(o.agent.module ? { module: o.agent.module } : {}), sha256: o.agent.module ? await fileSha256(o.agent.module) : null },
    options: {
      resolutions: resolutions.map(resolutionLabel),
      repeat: n.repeat,
      maxSteps: n.maxSteps,
      retries: n.retries,
      ...(o.successGraceMs !== undefined ? { successGraceMs: o.successGraceMs } : {}),
      ...(o.live !== undefined ? { live: o.live } : {}),
      ...(o.script !== undefined ? { script: o.script, scriptSha256: await fileSha256(o.script).catch(() => 'unreadable') } : {}),
      args: [...(o.args ?? [])],
      ...(o.shard ? { shard: `${o.shard.i}/${o.shard.n}` } : {}),
      ...(o.desktopTimeoutMs ? { desktopTimeoutMs: o.desktopTimeoutMs } : {}),
      ...(o.allowedDomains && o.allowedDomains.length > 0 ? { allowedDomains: [...o.allowedDomains] } : {}),
      ...(o.blockedDomains && o.blockedDomains.length > 0 ? { blockedDomains: [...o.blockedDomains] } : {}),
      ...(o.judges && o.judges.length > 0 ? { judges: [...o.judges] } : {}),
      ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
      ...(o.needsHuman !== undefined ? { needsHuman: o.needsHuman } : {}),
      ...(o.secretsFile ? { secretsFile: resolve(o.secretsFile) } : {}),
    },
    out,
  };
}

/** Run a suite on the queue (see the file comment). */
export async function runQueuedSuite(o: CoordinatorOptions): Promise<QueuedSuiteSummary> {
  const repeat = o.repeat ?? 1;
  const maxSteps = o.maxSteps ?? DEFAULT_MAX_STEPS;
  const retries = o.retries ?? 2;
  for (const [field, v, min] of [
    ['repeat', repeat, 1],
    ['maxSteps', maxSteps, 1],
    ['retries', retries, 0],
  ] as const)
    if (!Number.isInteger(v) || v < min) throw badOption(field, v, `expected a whole number >= ${min}`);
  if (!TASK_ID_PATTERN.test(o.agent.name)) throw badOption('agent.name', o.agent.name, `must match ${TASK_ID_PATTERN} (it names the results directory)`);
  if (o.tasks.length === 0) throw badOption('tasks', [], 'no task to run');
  const resolutions = o.resolutions && o.resolutions.length > 0 ? o.resolutions : [DEFAULT_SCREEN_SIZE];
  const out = await checkOutputDir(resolve(o.out), 'out');
  const holding = await runFiles(out);
  if (holding.length > 0) throw runExistsError(out, holding, "It is one run's directory, not a results root (OUT/<agent>/<W>_<H>/<task id>/): give another out.");
  const jobs = shardJobs(expandJobs(o.tasks, resolutions, repeat), o.shard);
  await checkLayouts(
    jobs.map((j) => taskDir(out, o.agent.name, j.size, j.task.id)),
    repeat,
  );
  const ident = await identity(o, out, resolutions, { repeat, maxSteps, retries });
  const suiteId = suiteIdOf(ident);
  const dirOf = (j: EvalJob) => runDir(out, o.agent.name, j.size, j.task.id, j.repeat, j.repeats);
  const idOf = (j: EvalJob) => runJobId(suiteId, j.task.id, j.size, j.repeat);

  const redis: Redis = await connectQueue(o.url, { ...(o.connectTimeoutMs ? { timeoutMs: o.connectTimeoutMs } : {}), ...(o.signal ? { signal: o.signal } : {}) });
  const queue = new Queue<RunJobData, RunJobResult>(QUEUE_NAME, { connection: redisOptions(o.url) });
  const events = new QueueEvents(QUEUE_NAME, { connection: redisOptions(o.url) });
  queue.on('error', () => {});
  events.on('error', () => {});
  let reconcileTimer: NodeJS.Timeout | undefined;
  try {
    // The manifest: a resumed suite keeps its own; a new one is written (and --rerun moves finished runs aside).
    const existing = await redis.get(manifestKey(suiteId));
    const resumed = existing !== null;
    const manifest: SuiteManifest = existing
      ? parseManifest(existing, suiteId)
      : {
          format: QUEUE_FORMAT,
          vncua: VNCUA_VERSION,
          suiteId,
          createdAt: Date.now(),
          ...ident,
          results: { marker: markerPath(out, suiteId), ...(o.upload ? { upload: o.upload } : {}) },
        };
    if (resumed) {
      // A new coordinator process offers its own receiver (or none), and its own rate limits.
      if (o.upload) manifest.results.upload = o.upload;
      else delete manifest.results.upload;
    }
    if (o.rateLimits && o.rateLimits.length > 0) manifest.rateLimits = [...o.rateLimits];
    else delete manifest.rateLimits;
    const manifestText = JSON.stringify(manifest);
    await mkdir(join(out, QUEUE_DIR), { recursive: true });
    await writeFile(markerPath(out, suiteId), `${JSON.stringify({ suiteId, createdAt: manifest.createdAt, out }, null, 2)}\n`);

    // What is done on disk.
    const tally = suiteTally({ total: jobs.length, workers: [], queue: o.url.display, onProgress: o.onProgress });
    const { snapshot, emit } = tally;
    const outcomes: RunOutcome[] = [];
    const pending = new Map<string, EvalJob>();
    const skipped: EvalJob[] = [];
    for (const job of jobs) {
      const dir = dirOf(job);
      const state = await readDirState(dir);
      if (state.state === 'finished' && !(o.rerun && !resumed)) {
        await completeTaskJson(dir, state.result);
        snapshot.skipped++;
        skipped.push(job);
        outcomes.push({ taskId: job.task.id, resolution: resolutionLabel(job.size), repeat: job.repeat, dir, status: 'skipped', success: null, attempts: 0, durationMs: 0 });
        continue;
      }
      // --rerun of a new suite: the finished run is kept, moved aside to <dir>~N.
      if (state.state === 'finished') await moveAside(dir, MOVED_ASIDE_SEP);
      pending.set(idOf(job), job);
    }
    await redis.set(manifestKey(suiteId), manifestText);
    emit({ type: 'start' });
    for (const job of skipped) emit({ type: 'skip', job: jobLabel(job) });

    // Worker rows, from the workers' progress reports.
    const rows = new Map<string, number>();
    const setRow = (p: Extract<RunJobProgress, { kind: 'state' }>, job: EvalJob) => {
      const key = `${p.worker} #${p.slot + 1}`;
      let w = rows.get(key);
      if (w === undefined) {
        w = snapshot.workers.length;
        rows.set(key, w);
      }
      const idle = p.state === 'idle';
      snapshot.workers[w] = { worker: w, name: key, state: p.state, ...(idle ? {} : { job: jobLabel(job), attempt: p.attempt }), since: Date.now() };
      emit({ type: 'worker', worker: w });
    };

    let configError: ConfigError | undefined;
    let wake: () => void = () => {};
    const finishOne = async (id: string, rv: RunJobResult | undefined, failedReason?: string) => {
      const job = pending.get(id);
      if (!job) return;
      pending.delete(id);
      // No attempt of it runs any more: its staging dirs (a killed worker's half-written attempt) go (awaited below, off the progress line's path).
      const swept = rm(join(stagingRoot(out), id), { recursive: true, force: true }).catch(() => {});
      const dir = dirOf(job);
      const state = await readDirState(dir);
      const result = state.state === 'missing' ? undefined : state.result;
      let status: RunOutcome['status'];
      let error: { code: string; message: string } | undefined;
      if (result) {
        status = result.status;
        // An infra_error's own error, as the local runner reports it: the last attempt's (the worker's), not the summary in result.json.
        const e = rv?.error ?? result.error;
        if (e) error = { code: e.code, message: e.message };
      } else {
        status = 'infra_error';
        error = { code: 'QUEUE_ERR_JOB_FAILED', message: failedReason ?? 'the job ended without a run on disk' };
      }
      // The worker read the trace it committed (runAttempt's traceSuccess, as the local runner): read again only a run it did not commit here.
      const reported = rv !== undefined && !rv.alreadyFinished && rv.status === status && typeof rv.success === 'boolean' ? rv.success : undefined;
      const success = result && status !== 'infra_error' ? (reported ?? (await traceSuccess(dir))) : null;
      // The judges' verdicts, as the worker wrote them (judges.json), for the same report as a local run's.
      const jf = result ? await readJudges(dir).catch(() => null) : null;
      const judges = jf && 'verdicts' in jf ? jf.verdicts.map((v) => ({ judge: v.judge, verdict: v.verdict, ...(v.error ? { error: v.error } : {}) })) : undefined;
      const o2: RunOutcome = {
        taskId: job.task.id,
        resolution: resolutionLabel(job.size),
        repeat: job.repeat,
        dir,
        status,
        success,
        attempts: rv?.attempts || 1,
        durationMs: rv?.durationMs ?? 0,
        ...(error ? { error } : {}),
        ...(judges ? { judges } : {}),
      };
      outcomes.push(o2);
      tally.recordDone(jobLabel(job), o2);
      wake();
      await swept;
    };
    const onFailed = async (id: string, reason: string) => {
      const job = pending.get(id);
      if (!job) return;
      if (reason.startsWith(CONFIG_FAILURE_PREFIX)) {
        if (!configError) {
          let err = { code: 'CLI_ERR_BAD_AGENT', message: reason };
          try {
            err = JSON.parse(reason.slice(CONFIG_FAILURE_PREFIX.length)) as typeof err;
          } catch {
            // keep the raw reason
          }
          configError = { ...err, job: jobLabel(job) };
        }
        wake();
        return;
      }
      await finishOne(id, undefined, reason);
    };
    events.on('progress', ({ jobId, data }) => {
      const job = pending.get(jobId);
      const p = data as RunJobProgress;
      if (!job || typeof p !== 'object' || p === null) return;
      if (p.kind === 'state') setRow(p, job);
      else if (p.kind === 'retry') emit({ type: 'retry', job: jobLabel(job), attempt: p.attempt, error: p.error });
    });
    events.on('completed', ({ jobId, returnvalue }) => {
      const rv = (typeof returnvalue === 'string' ? safeJson(returnvalue) : returnvalue) as RunJobResult | undefined;
      void finishOne(jobId, rv).catch(() => {});
    });
    events.on('failed', ({ jobId, failedReason }) => {
      // A retried attempt fails too: only a job whose state is failed is over.
      if (!pending.has(jobId)) return;
      void queue
        .getJobState(jobId)
        .then((s) => (s === 'failed' ? onFailed(jobId, failedReason) : undefined))
        .catch(() => {});
    });
    await events.waitUntilReady();

    const add = async (ids: string[]) => {
      const adding = ids.flatMap((id) => {
        const j = pending.get(id);
        return j
          ? [
              {
                name: 'run',
                data: { suiteId, taskId: j.task.id, size: j.size, repeat: j.repeat } satisfies RunJobData,
                opts: { jobId: id, attempts: retries + 1, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: false, removeOnFail: false },
              },
            ]
          : [];
      });
      for (let i = 0; i < adding.length; i += 500) await queue.addBulk(adding.slice(i, i + 500));
    };
    /** Disk first, then Redis: finished runs are done, lost jobs are added again. */
    let reconciling: Promise<void> | undefined;
    const reconcile = (first: boolean) =>
      (reconciling ??= (async () => {
        try {
          if ((await redis.get(manifestKey(suiteId))) === null) await redis.set(manifestKey(suiteId), manifestText);
          const missing: string[] = [];
          for (const [id, job] of [...pending]) {
            if ((await readDirState(dirOf(job))).state === 'finished') {
              const j = await queue.getJob(id);
              await finishOne(id, j?.returnvalue ?? undefined);
              continue;
            }
            const j: Job<RunJobData, RunJobResult> | undefined = await queue.getJob(id);
            const state = j ? await j.getState() : 'missing';
            if (LIVE_STATES.has(state)) continue;
            if (j && (state === 'completed' || state === 'failed')) {
              if (first) {
                // Left by an earlier invocation for a run that is not finished (an infra_error run): run it again.
                await j.remove().catch(() => {});
                missing.push(id);
              } else if (state === 'completed') await finishOne(id, j.returnvalue ?? undefined);
              else await onFailed(id, j.failedReason ?? 'failed');
              continue;
            }
            missing.push(id);
          }
          await add(missing);
          // A dead attempt's staging dir goes with its job (finishOne); at the start, those of this suite's runs that are finished.
          if (first) await sweepStaging(out, (id) => id.startsWith(`${suiteId}.`) && !pending.has(id)).catch(() => {});
        } finally {
          reconciling = undefined;
        }
      })());
    await reconcile(true);
    o.onSuite?.({ suiteId, resumed, queued: pending.size });
    // After a reconnect (Redis restarted, maybe without its data): reconcile at once.
    redis.on('ready', () => void reconcile(false).catch(() => {}));
    const tick = () => {
      reconcileTimer = setTimeout(() => {
        void reconcile(false)
          .catch(() => {})
          .finally(() => {
            if (reconcileTimer) tick();
          });
      }, o.reconcileMs ?? DEFAULT_RECONCILE_MS);
    };
    tick();

    // Wait for the suite (or a configuration error, or detach).
    const detach = new Promise<void>((r) => {
      if (o.signal?.aborted) r();
      o.signal?.addEventListener('abort', () => r(), { once: true });
    });
    while (pending.size > 0 && !configError && !o.signal?.aborted) {
      await Promise.race([new Promise<void>((r) => (wake = r)), detach]);
    }
    clearTimeout(reconcileTimer);
    reconcileTimer = undefined;
    await reconciling?.catch(() => {});
    const detached = pending.size > 0 && !configError && o.signal?.aborted === true;
    if (configError) {
      // Stop the suite: no new run starts; the running ones end on their own.
      for (const id of pending.keys()) {
        const j = await queue.getJob(id);
        if (j && (await j.getState()) !== 'active') await j.remove().catch(() => {});
      }
    } else if (!detached) {
      // The suite is over: its jobs, manifest, marker and staging leftovers go.
      for (const job of jobs) await queue.remove(idOf(job)).catch(() => {});
      await redis.del(manifestKey(suiteId));
      await rm(markerPath(out, suiteId), { force: true });
      await sweepStaging(out, (id) => id.startsWith(`${suiteId}.`)).catch(() => {});
      await rmdir(join(out, QUEUE_DIR, 'staging')).catch(() => {});
      await rmdir(join(out, QUEUE_DIR, 'incoming')).catch(() => {}); // the results receiver's, once every upload is in (empty)
      await rmdir(join(out, QUEUE_DIR)).catch(() => {});
    }
    for (const w of snapshot.workers) w.state = 'done';
    emit({ type: 'end', cancelled: detached, ...(configError ? { configError } : {}) });
    sortOutcomes(outcomes, jobs);
    return {
      agent: o.agent.name,
      out,
      total: jobs.length,
      skipped: snapshot.skipped,
      ran: snapshot.done,
      successes: snapshot.successes,
      infraErrors: snapshot.infraErrors,
      cancelled: detached,
      ...(configError ? { configError } : {}),
      notStarted: 0,
      outcomes,
      suiteId,
      detached,
    };
  } finally {
    clearTimeout(reconcileTimer);
    reconcileTimer = undefined;
    await events.close().catch(() => {});
    await queue.close().catch(() => {});
    redis.disconnect();
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
