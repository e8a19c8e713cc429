/**
 * A queue worker (`vncua worker --queue URL`): one BullMQ Worker taking run jobs with `concurrency`
 * at once until stopped. For each job:
 * 1. the suite's manifest (Redis, cached per suite) is checked once against this worker: queue format
 *    and vncua version (QUEUE_ERR_VERSION), its own task file's and agent module's sha256
 *    (QUEUE_ERR_MISMATCH), the results root (shared when the coordinator's marker file is there and
 *    writable; else the upload sink when the coordinator offers one; else QUEUE_ERR_RESULTS_UNWRITABLE).
 *    Any of these is fatal to this worker: the job goes back to the queue (not an attempt), the worker
 *    says why in one line and stops;
 * 2. a run already finished on disk is not run again (completes at once);
 * 3. ONE attempt of the run (eval/attempt.ts, as the local runner) into a staging directory
 *    (results-sink.ts); relative task URLs are served by this worker's own static server;
 * 4. a final result is committed (never over a finished run: exactly once to completion); an infra
 *    failure goes back to the queue (BullMQ attempts = retries + 1, exponential backoff, the failure
 *    kept in the job's data for task.json), and the last attempt commits `infra_error` as locally;
 *    a configuration error fails the job at once (the coordinator stops the suite).
 * Progress (the attempt's state, retries) goes to the coordinator through job.updateProgress.
 *
 * Stopping (`signal`): no new job is taken; running ones get `graceMs` to finish, then are cancelled
 * and go back to the queue (not counted as an attempt). A worker killed outright holds its jobs' locks
 * until they expire: BullMQ's stalled check (lockDuration, stalledInterval from `stallTimeoutMs`) gives
 * them to another worker; the dead attempt's staging directory is never scored, and swept.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DelayedError, type Job, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { DEFAULT_SCREEN_SIZE, type ScreenSize } from '../../harness/desktop/size.ts';
import { preloadCdp } from '../../harness/cdp/connection.ts';
import { VncuaError } from '../../harness/errors.ts';
import { readSecretsFile } from '../../harness/secrets/sources.ts';
import { type AttemptOptions, type InfraRecord, type SuiteAgent, runAttempt, writeInfraError } from '../attempt.ts';
import { desktopPool } from '../desktop-pool.ts';
import { jobLabel, type EvalJob } from '../jobs.ts';
import { readDirState, resolutionDir } from '../layout.ts';
import type { WorkerStatus } from '../progress.ts';
import { suiteHostForDocker } from '../providers/docker.ts';
import type { DesktopProvider } from '../providers/types.ts';
import { resolveProvider } from '../runner.ts';
import { SPARE_PAGE_PATH, startStaticServer, type StaticServer } from '../static-server.ts';
import { type EvalTask, isRelativeUrl, loadTaskFile, resolveTaskUrls } from '../tasks.ts';
import { connectQueue, redisOptions } from './connection.ts';
import { QUEUE_DIR, QUEUE_NAME, type RunJobData, type SuiteManifest, checkManifest, fileSha256, manifestKey, parseManifest } from './manifest.ts';
import { type ResultsSink, sharedSink, stagingRoot } from './results-sink.ts';
import type { QueueUrl } from './url.ts';
import type { PriceFn } from '../judges/llm.ts';
import { QUEUE_BACKOFF_LIMITER, RedisRateGate, pauseQueueOnBackoff } from './rate-limit.ts';

/** Default time for a dead worker's job to run elsewhere. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;
/** How long a run waits in the queue while the coordinator's results receiver is gone (upload mode). */
const RECEIVER_WAIT_MS = 2000;

/** Whether a failed upload commit says the coordinator's receiver is gone (no answer) or is another one now (its token refused). */
function receiverGone(e: unknown): boolean {
  if (!(e instanceof VncuaError) || e.code !== 'QUEUE_ERR_UPLOAD') return false;
  const d = e.details as { last?: unknown; status?: unknown } | undefined;
  return d?.status === 401 || (typeof d?.last === 'string' && d.last.startsWith('no answer'));
}

/** Default time running jobs get to finish after a stop. */
export const DEFAULT_GRACE_MS = 60_000;
/** Codes that stop a worker (its setup cannot run this suite). */
export const WORKER_FATAL_CODES: ReadonlySet<string> = new Set([
  'QUEUE_ERR_VERSION',
  'QUEUE_ERR_MISMATCH',
  'QUEUE_ERR_RESULTS_UNWRITABLE',
  'QUEUE_ERR_TLS',
  'CLI_ERR_BAD_AGENT',
  'EVAL_ERR_BAD_TASKS',
  'SECRET_ERR_FILE',
]);

/** An agent loaded for a suite, and the module file it came from (none for a built-in). */
export interface LoadedSuiteAgent {
  agent: SuiteAgent;
  file?: string;
}

/** Options of runWorker(). */
export interface WorkerOptions {
  url: QueueUrl;
  /** Jobs at once (default 1). */
  concurrency?: number;
  /** This worker's name in the coordinator's display (default host:pid). */
  name?: string;
  provider?: 'local' | 'docker' | DesktopProvider;
  /** Desktops started ahead of need (eval/desktop-pool.ts), at the sizes of the suite's resolutions. */
  pool?: number;
  desktopTimeoutMs?: number;
  /** This worker's copy of the task file (default: the path in the manifest). */
  tasksFile?: string;
  /** Load the agent of a manifest (cli/agents.ts, as `vncua eval` does: eval/ does not import agents/). */
  loadAgent(spec: string, module: string | undefined): Promise<LoadedSuiteAgent>;
  /** USD of an LLM judge's call (eval/ does not import byom/: cli/worker.ts passes byom/pricing.ts's table). */
  judgePrice?: PriceFn;
  /** Results sink when the results root is not visible here (the upload sink, eval/queue/upload/); undefined: none offered. */
  uploadSink?(m: SuiteManifest): Promise<ResultsSink | undefined>;
  /** Time for a dead worker's job to run elsewhere (default 30 000 ms). */
  stallTimeoutMs?: number;
  /** Time running jobs get to finish once `signal` fires (default 60 000 ms). */
  graceMs?: number;
  /** Stop taking jobs (see the file comment). */
  signal?: AbortSignal;
  /** Connection timeout of the first connection (default connection.ts CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** A line of log (default: none). */
  log?(line: string): void;
  /** Called once the worker takes jobs. */
  onReady?(): void;
}

/** What runWorker() resolves to. */
export interface WorkerSummary {
  /** Attempts this worker ran. */
  attempts: number;
  /** Runs it committed. */
  committed: number;
  /** Jobs it returned to the queue (stop, stall). */
  returned: number;
}

/** What a job's processor returns (BullMQ returnvalue): how the run ended here. */
export interface RunJobResult {
  status: string;
  success: boolean | null;
  attempts: number;
  durationMs: number;
  worker: string;
  error?: { code: string; message: string };
  /** The run was already finished on disk: nothing ran. */
  alreadyFinished?: boolean;
}

/** Progress a worker reports on a job (job.updateProgress). */
export type RunJobProgress =
  | { kind: 'state'; worker: string; slot: number; state: WorkerStatus['state']; attempt: number }
  | { kind: 'retry'; worker: string; attempt: number; error: { code: string; message: string } };

/** The prefix of a failed job's reason when a configuration error failed it (the coordinator stops the suite). */
export const CONFIG_FAILURE_PREFIX = 'VNCUA_CONFIG_ERROR ';

/** A suite as this worker runs it. */
interface PreparedSuite {
  m: SuiteManifest;
  tasks: Map<string, EvalTask>;
  taskFile: string;
  agent: SuiteAgent;
  sink: ResultsSink;
  shared: boolean;
  /** Upload mode: the receiver the sink uploads to (from the manifest; a restarted coordinator writes a new one). */
  upload?: { url: string; token: string };
  /** Upload mode: the last commit found the receiver gone; runs wait for it (followReceiver) instead of running. */
  receiverDown?: boolean;
  sizes: ScreenSize[];
  server?: StaticServer;
  spareUrl?: string;
  /** The suite's --rate-limit gate in Redis (manifest rateLimits), shared by every run of every worker. */
  rateGate?: RedisRateGate;
  /** Stop passing the gate's 429 backoffs on to BullMQ. */
  unpause?: () => void;
}

/** A run's directory relative to the results root (layout.ts runDir). */
export function runRel(agent: string, size: ScreenSize, taskId: string, repeat: number, repeats: number): string {
  const base = join(agent, resolutionDir(size), taskId);
  return repeats > 1 ? join(base, String(repeat)) : base;
}

/** The marker file of a suite under its results root. */
export function markerPath(out: string, suiteId: string): string {
  return join(out, QUEUE_DIR, `${suiteId}.json`);
}

/** Whether the results root of `m` is here and writable: null if so, else why not. */
async function sharedRootProblem(m: SuiteManifest): Promise<string | null> {
  const marker = markerPath(m.out, m.suiteId);
  try {
    const data = JSON.parse(await readFile(marker, 'utf8')) as { suiteId?: string };
    if (data.suiteId !== m.suiteId) return `${marker} names another suite`;
  } catch {
    return `${m.out} is not visible here (no ${marker})`;
  }
  const root = stagingRoot(m.out);
  const probe = join(m.out, QUEUE_DIR, `.probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await mkdir(root, { recursive: true });
    await writeFile(probe, '');
    await rm(probe, { force: true });
    return null;
  } catch (e) {
    return `${m.out} is not writable here (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
}

/**
 * BullMQ's lock duration L and stalled-check interval I for a stall timeout T. A job is handed on by the second
 * stalled check that finds it unlocked-or-unrenewed: a check first puts every active job in the stalled set (a lock
 * renewal takes it out again), and the next check after the lock expired moves it to wait. Two things stretch that:
 * the lock expires up to L after the last renewal (renewed every L / 2), and with several workers a check is skipped
 * while another worker's check key (which lives I) exists, so real checks can be up to 2 I apart. With 2 I < L the
 * first check after the last renewal comes before the lock expires, and the job moves at the latest 2 I after the
 * expiry: L + 2 I after the kill. L = T / 2 and I = 0.2 T keep that at 0.9 T (the pickup is at once: the move
 * writes the queue's marker). I = 0.4 T, used before, allowed 1.6 T (bench/queue.ts saw 15.2 s for T = 10 s). A live
 * worker must be late by T / 4 with its renewal before its job counts as stalled.
 */
export function stallSettings(stallTimeoutMs: number): { lockDuration: number; stalledInterval: number } {
  return { lockDuration: Math.max(500, Math.floor(stallTimeoutMs / 2)), stalledInterval: Math.max(250, Math.floor(stallTimeoutMs * 0.2)) };
}

/** Run a queue worker until `signal` fires; rejects with the fatal setup error that stopped it (WORKER_FATAL_CODES); see the file comment. */
export async function runWorker(o: WorkerOptions): Promise<WorkerSummary> {
  const concurrency = o.concurrency ?? 1;
  const name = o.name ?? `${hostname()}:${process.pid}`;
  const log = o.log ?? (() => {});
  const summary: WorkerSummary = { attempts: 0, committed: 0, returned: 0 };
  let fatal: VncuaError | undefined;
  const warm = preloadCdp().catch((e) => log(`could not preload playwright-core (${(e as Error).message}); the first run will try again`));
  const redis: Redis = await connectQueue(o.url, { ...(o.connectTimeoutMs ? { timeoutMs: o.connectTimeoutMs } : {}), ...(o.signal ? { signal: o.signal } : {}) });
  const stop = new AbortController();
  const stopped = new Promise<void>((r) => stop.signal.addEventListener('abort', () => r(), { once: true }));
  const onStop = () => stop.abort();
  o.signal?.addEventListener('abort', onStop, { once: true });
  if (o.signal?.aborted) stop.abort();
  const suites = new Map<string, Promise<PreparedSuite | null>>();
  const inner = resolveProvider({ provider: o.provider ?? 'local', ...(o.desktopTimeoutMs ? { desktopTimeoutMs: o.desktopTimeoutMs } : {}) });
  const poolAbort = new AbortController();
  let provider: DesktopProvider | undefined;
  const providerFor = (s: PreparedSuite): DesktopProvider => {
    if (provider) return provider;
    if (o.pool && o.pool > 0) {
      if (!inner.start)
        throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `the ${inner.name} provider cannot start desktops ahead of need (--pool works with local and docker).`, {
          details: { field: 'pool' },
        });
      provider = desktopPool(inner, {
        spares: o.pool,
        workers: concurrency,
        signal: poolAbort.signal,
        ...(s.spareUrl ? { standAt: s.spareUrl } : {}),
        ...(o.desktopTimeoutMs ? { timeoutMs: o.desktopTimeoutMs } : {}),
      });
    } else provider = inner;
    return provider;
  };
  const freeSlots = Array.from({ length: concurrency }, (_, i) => i);
  // The rate gates' connection (made with the first suite that has --rate-limit): a reconnecting one, as BullMQ's.
  let gateRedis: Redis | undefined;
  const gateConnection = (): Redis => {
    if (!gateRedis) {
      gateRedis = new Redis(redisOptions(o.url));
      gateRedis.on('error', () => {}); // ioredis reconnects; the gate waits a lost connection out
    }
    return gateRedis;
  };

  /** Resolves to null when the suite has no manifest (yet: the coordinator rewrites one Redis lost). */
  const prepare = async (suiteId: string): Promise<PreparedSuite | null> => {
    const text = await redis.get(manifestKey(suiteId));
    if (text === null) return null;
    const m = parseManifest(text, suiteId);
    const taskFile = resolve(o.tasksFile ?? m.tasks.file);
    const loaded = await o.loadAgent(m.agent.spec, m.agent.module);
    const local = { tasksSha256: await fileSha256(taskFile).catch(() => 'missing'), agentSha256: loaded.file ? await fileSha256(loaded.file) : null };
    checkManifest(m, local, { tasks: taskFile, ...(loaded.file ? { agent: loaded.file } : {}) });
    // --secrets-file of the coordinator's command: this worker's own copy at that path must be readable
    // (SECRET_ERR_FILE stops the worker before it takes a run); each run's Agent reads it again.
    if (m.options.secretsFile !== undefined) readSecretsFile(m.options.secretsFile);
    const file = await loadTaskFile(taskFile, m.tasks.baseUrl !== undefined ? { baseUrl: m.tasks.baseUrl } : {});
    let tasks = file.tasks;
    let server: StaticServer | undefined;
    let spareUrl: string | undefined;
    if (tasks.some((t) => isRelativeUrl(t.url))) {
      const host = o.provider === 'docker' ? await suiteHostForDocker(stop.signal) : undefined;
      server = await startStaticServer({ root: dirname(file.file), host, signal: stop.signal });
      const base = server.url.replace('0.0.0.0', '127.0.0.1');
      tasks = resolveTaskUrls(tasks, base);
      spareUrl = new URL(SPARE_PAGE_PATH, base).href;
      log(`serving ${dirname(file.file)} at ${base}`);
    }
    let sink: ResultsSink | undefined;
    let shared = false;
    const problem = await sharedRootProblem(m);
    if (problem === null) {
      sink = sharedSink(m.out);
      shared = true;
    } else sink = await o.uploadSink?.(m);
    if (!sink) {
      await server?.close();
      throw new VncuaError(
        'QUEUE_ERR_RESULTS_UNWRITABLE',
        `this worker cannot write the results of suite ${m.suiteId}: ${problem}, and the coordinator offers no upload. Mount the results root at ${m.out} (writable), or let the coordinator receive uploads.`,
        { details: { out: m.out, reason: problem } },
      );
    }
    // --rate-limit: the model calls of every run on every worker go through one gate in Redis; a 429 pauses the whole queue.
    const rateGate = m.rateLimits && m.rateLimits.length > 0 ? new RedisRateGate({ connection: gateConnection(), rules: m.rateLimits }) : undefined;
    const unpause = rateGate ? pauseQueueOnBackoff(rateGate, worker, (e) => log(`could not pause the queue on a 429 backoff: ${(e as Error).message}`)) : undefined;
    if (rateGate) rateGate.onBackoff(({ ms, reason }) => log(`model rate limited (${reason}): the queue backs off ${Math.ceil(ms)} ms`));
    const sizes = m.options.resolutions.map((r) => {
      const [w, h] = r.split('x').map(Number);
      return { width: w!, height: h! };
    });
    return {
      m,
      tasks: new Map(tasks.map((t) => [t.id, t])),
      taskFile: file.file,
      agent: loaded.agent,
      sink,
      shared,
      ...(!shared && m.results.upload ? { upload: m.results.upload } : {}),
      sizes: sizes.length ? sizes : [DEFAULT_SCREEN_SIZE],
      ...(server ? { server } : {}),
      ...(spareUrl ? { spareUrl } : {}),
      ...(rateGate ? { rateGate } : {}),
      ...(unpause ? { unpause } : {}),
    };
  };
  const suiteFor = (suiteId: string): Promise<PreparedSuite | null> => {
    let p = suites.get(suiteId);
    if (!p) {
      p = prepare(suiteId);
      suites.set(suiteId, p);
      // A missing manifest may come back (the coordinator rewrites it after Redis lost it): try again next time.
      p.then(
        (s) => s === null && suites.delete(suiteId),
        () => suites.delete(suiteId),
      );
    }
    return p;
  };

  /**
   * Upload mode: read the suite's manifest again and, when it names another receiver (the coordinator was restarted
   * with a new one), upload there from now on. True when the sink changed, or the receiver answers again.
   */
  const followReceiver = async (suite: PreparedSuite): Promise<boolean> => {
    const text = await redis.get(manifestKey(suite.m.suiteId));
    const up = text === null ? undefined : parseManifest(text, suite.m.suiteId).results.upload;
    if (up && (up.url !== suite.upload?.url || up.token !== suite.upload?.token)) {
      const sink = await o.uploadSink?.({ ...suite.m, results: { ...suite.m.results, upload: up } });
      if (sink) {
        (suite.sink as { close?(): void }).close?.();
        suite.sink = sink;
        suite.upload = up;
        log(`the coordinator's results receiver is now ${new URL(up.url).host}`);
        return true;
      }
    }
    return (await suite.sink.check?.(RECEIVER_WAIT_MS)) === true;
  };

  const returnToQueue = async (job: Job<RunJobData>, token: string | undefined, delayMs = 0): Promise<never> => {
    summary.returned++;
    if (delayMs > 0) {
      await job.moveToDelayed(Date.now() + delayMs, token);
      throw new DelayedError();
    }
    await job.moveToWait(token);
    throw new WaitingError();
  };

  const processor = async (job: Job<RunJobData>, token?: string, bullSignal?: AbortSignal): Promise<RunJobResult> => {
    const data = job.data;
    let found: PreparedSuite | null;
    try {
      found = await suiteFor(data.suiteId);
    } catch (e) {
      if (e instanceof VncuaError && WORKER_FATAL_CODES.has(e.code)) {
        fatal ??= e;
        stop.abort();
        return returnToQueue(job, token);
      }
      throw e;
    }
    if (found === null) return returnToQueue(job, token, 2000);
    const suite = found;
    const { m } = suite;
    const task = suite.tasks.get(data.taskId);
    if (!task) throw new UnrecoverableError(`task ${data.taskId} is not in ${suite.taskFile}`);
    const repeats = m.options.repeat;
    const evalJob: EvalJob = { task, size: data.size, repeat: data.repeat, repeats, index: 0 };
    const rel = runRel(suite.agent.name, data.size, task.id, data.repeat, repeats);
    const attempt = job.attemptsMade + 1;
    const maxAttempts = m.options.retries + 1;
    // A run whose result could not be delivered is not run: it waits in the queue (not an attempt) until a receiver answers.
    if (suite.receiverDown) {
      if (!(await followReceiver(suite).catch(() => false))) return returnToQueue(job, token, RECEIVER_WAIT_MS);
      suite.receiverDown = false;
    }
    const t0 = Date.now();
    const firstStartedAt = data.firstStartedAt ?? t0;
    // Kept in the job for a retry's durationMs; written beside the run's start, not before it (awaited before the job ends).
    const noted = data.firstStartedAt === undefined ? job.updateData({ ...data, firstStartedAt }).catch(() => {}) : undefined;
    const done = (r: Omit<RunJobResult, 'worker' | 'durationMs'>): RunJobResult => ({ ...r, worker: name, durationMs: Date.now() - t0 });
    if (suite.shared && (await readDirState(join(m.out, rel))).state === 'finished') return done({ status: 'finished', success: null, attempts: 0, alreadyFinished: true });
    const slot = freeSlots.shift() ?? 0;
    const report = (p: RunJobProgress) => void job.updateProgress(p).catch(() => {});
    const label = jobLabel(evalJob);
    const signal = bullSignal;
    const tokenName = `${attempt}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`;
    let staging: string | undefined;
    try {
      staging = await suite.sink.staging(job.id!, tokenName);
      const p = providerFor(suite);
      const ao: AttemptOptions = {
        agent: suite.agent,
        taskFile: suite.taskFile,
        maxSteps: m.options.maxSteps,
        provider: p,
        ...(o.desktopTimeoutMs ? { desktopTimeoutMs: o.desktopTimeoutMs } : {}),
        ...(m.options.script !== undefined ? { script: m.options.script } : {}),
        args: m.options.args,
        ...(m.options.successGraceMs !== undefined ? { successGraceMs: m.options.successGraceMs } : {}),
        ...(m.options.live !== undefined ? { live: m.options.live } : {}),
        ...(m.options.allowedDomains ? { allowedDomains: m.options.allowedDomains } : {}),
        ...(m.options.blockedDomains ? { blockedDomains: m.options.blockedDomains } : {}),
        ...(m.options.judges ? { judges: m.options.judges } : {}),
        ...(o.judgePrice ? { judgePrice: o.judgePrice } : {}),
        ...(m.options.maxCostUsd !== undefined ? { maxCostUsd: m.options.maxCostUsd } : {}),
        ...(m.options.needsHuman !== undefined ? { needsHuman: m.options.needsHuman } : {}),
        ...(suite.rateGate ? { rateGate: suite.rateGate } : {}),
        ...(m.options.secretsFile !== undefined ? { secretsFile: m.options.secretsFile } : {}),
        ...(signal ? { signal } : {}),
        onState: (state) => report({ kind: 'state', worker: name, slot, state, attempt }),
        plan: () => p.plan?.([data.size, ...Array.from({ length: o.pool ?? 0 }, (_, i) => suite.sizes[i % suite.sizes.length]!)]),
      };
      summary.attempts++;
      const infra = (data.infra ?? []) as InfraRecord[];
      const a = await runAttempt(ao, evalJob, { attempt, infra, dir: staging });
      report({ kind: 'state', worker: name, slot, state: 'idle', attempt });
      if (a.kind === 'cancelled') {
        await suite.sink.discard(staging);
        staging = undefined;
        log(`${label}: stopped; back to the queue`);
        return await returnToQueue(job, token);
      }
      if (a.kind === 'config') {
        await suite.sink.discard(staging);
        staging = undefined;
        throw new UnrecoverableError(`${CONFIG_FAILURE_PREFIX}${JSON.stringify(a.error)}`);
      }
      let result: RunJobResult;
      if (a.kind === 'infra') {
        const all = [...infra, a.record];
        if (attempt < maxAttempts) {
          await suite.sink.discard(staging);
          staging = undefined;
          await job.updateData({ ...data, firstStartedAt, infra: all, lastStartedAt: a.startedAt, lastSteps: a.steps ?? data.lastSteps ?? 0 });
          report({ kind: 'retry', worker: name, attempt, error: { code: a.record.code, message: a.record.message } });
          log(`${label}: infra failure on attempt ${attempt} (${a.record.code}); back to the queue`);
          throw new Error(`${a.record.code}: ${a.record.message}`);
        }
        await writeInfraError(ao, evalJob, staging, {
          attempts: attempt,
          infra: all,
          startedAt: a.startedAt,
          steps: a.steps ?? data.lastSteps ?? 0,
          durationMs: Date.now() - firstStartedAt,
        });
        result = done({ status: 'infra_error', success: null, attempts: attempt, error: { code: a.record.code, message: a.record.message } });
      } else {
        result = done({ status: a.result.status, success: a.success, attempts: attempt, ...(a.result.error ? { error: a.result.error } : {}) });
      }
      try {
        await suite.sink.commit(staging, rel, signal ? { signal } : {});
        staging = undefined;
        summary.committed++;
        log(`${label}: ${result.status}${result.success === true ? ' (success)' : ''}, committed`);
      } catch (e) {
        if (e instanceof VncuaError && e.code === 'QUEUE_ERR_ALREADY_FINISHED') {
          log(`${label}: already finished elsewhere; this attempt dropped`);
          return { ...result, alreadyFinished: true };
        }
        if (suite.shared || !receiverGone(e)) throw e;
        // The coordinator's receiver is gone (killed) or another one (restarted): deliver there if the manifest names a
        // new one, else the run goes back to the queue (not an attempt) and this worker runs nothing of the suite until
        // a receiver answers.
        let last = e as VncuaError;
        const staged = staging as string;
        if (await followReceiver(suite).catch(() => false)) {
          try {
            await suite.sink.commit(staged, rel, signal ? { signal } : {});
            staging = undefined;
            summary.committed++;
            log(`${label}: ${result.status}${result.success === true ? ' (success)' : ''}, committed`);
            return result;
          } catch (e2) {
            if (e2 instanceof VncuaError && e2.code === 'QUEUE_ERR_ALREADY_FINISHED') return { ...result, alreadyFinished: true };
            if (!receiverGone(e2)) throw e2;
            last = e2 as VncuaError;
          }
        }
        suite.receiverDown = true;
        log(`${label}: the coordinator's results receiver did not take the run (${last.message}); back to the queue until a receiver answers`);
        return await returnToQueue(job, token, RECEIVER_WAIT_MS);
      }
      return result;
    } finally {
      await noted;
      if (staging) await suite.sink.discard(staging).catch(() => {});
      freeSlots.push(slot);
      freeSlots.sort((a, b) => a - b);
    }
  };

  // Warm up before the queue sees this worker: playwright-core's import (~0.3 s of CPU) would otherwise land inside the
  // first run of every fresh worker process at once (bench/queue.ts: W fresh workers' first runs were ~0.7 s slower
  // than the local runner's, which imports it once).
  await warm;
  const stall = stallSettings(o.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS);
  const worker = new Worker<RunJobData, RunJobResult>(QUEUE_NAME, processor, {
    connection: redisOptions(o.url),
    concurrency,
    autorun: false,
    ...stall,
    maxStalledCount: 5,
    // Lets pauseQueueOnBackoff's worker.rateLimit(ms) pause the queue after a 429; never limits by itself (rate-limit.ts).
    limiter: QUEUE_BACKOFF_LIMITER,
    name,
  });
  worker.on('error', () => {}); // connection errors: ioredis reconnects; BullMQ retries
  let graceTimer: NodeJS.Timeout | undefined;
  try {
    if (stop.signal.aborted) return summary;
    const running = worker.run();
    await worker.waitUntilReady();
    log(`${name} takes jobs from ${o.url.display} (concurrency ${concurrency})`);
    o.onReady?.();
    await Promise.race([stopped, running]);
    // Stop: take no new job; running ones get the grace, then go back to the queue.
    graceTimer = setTimeout(() => worker.cancelAllJobs('the worker is stopping'), o.graceMs ?? DEFAULT_GRACE_MS);
    await worker.close();
    await running.catch(() => {});
  } finally {
    clearTimeout(graceTimer);
    o.signal?.removeEventListener('abort', onStop);
    await worker.close(true).catch(() => {});
    poolAbort.abort();
    await provider?.close?.().catch(() => {});
    for (const p of suites.values())
      await p
        .then(async (s) => {
          s?.unpause?.();
          await s?.server?.close();
          (s?.sink as { close?(): void } | undefined)?.close?.(); // an upload sink's keep-alive connections
        })
        .catch(() => {});
    gateRedis?.disconnect();
    redis.disconnect();
  }
  if (fatal) throw fatal;
  return summary;
}
