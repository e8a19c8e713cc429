/**
 * One attempt of one run (task × resolution × repeat), written into a directory it is given: the
 * run's own directory for the local runner (eval/runner.ts), a staging directory for a queue worker
 * (eval/queue/worker.ts). Both use this code, so a run is the same wherever it runs.
 *
 * An attempt: write task.json (the task as run, the attempt, the infra failures so far), get a desktop
 * from the provider at the run's size opening the task's page, build the agent and run it, check the
 * desktop still works, capture the final page for the judges (when the run has judges), release the desktop,
 * and judge the run (judges.json, eval/judges/). It ends as:
 * - `final`: a result the suite keeps (finished, or the agent's own error), task.json completed;
 * - `infra`: an infra failure (infra.ts) to retry, its record for task.json's `infra_errors`;
 * - `config`: a configuration error (infra.ts CONFIG_ERROR_CODES) that stops the suite;
 * - `cancelled`: the signal fired.
 * After the last infra failure, writeInfraError() writes the run's infra_error result.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { Agent } from '../harness/agent/agent.ts';
import type { AgentContext } from '../harness/agent/context.ts';
import type { CostBudget } from '../harness/agent/cost-budget.ts';
import type { RateGate } from '../harness/agent/rate-gate.ts';
import { VncuaError, errorInfo } from '../harness/errors.ts';
import { allowStartPage, mergeDomainLists } from '../harness/guard/patterns.ts';
import { writeFileAtomic } from '../harness/trace/atomic.ts';
import { now, roundMs } from '../harness/trace/clock.ts';
import { readTrace } from '../harness/trace/reader.ts';
import type { RunResult } from '../harness/trace/schema.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { recordingProxyRecorder } from '../recorder/recorder-factory.ts';
import { infraErrorOf, isConfigErrorCode, isInfraErrorCode } from './infra.ts';
import { navigatePage } from './cdp-page.ts';
import type { EvalJob } from './jobs.ts';
import { TASK_FILE, resolutionLabel } from './layout.ts';
import type { WorkerStatus } from './progress.ts';
import type { DesktopProvider, LeasedDesktop } from './providers/types.ts';
import type { EvalTask } from './tasks.ts';
import { firstSuccess } from './score.ts';
import { judgeRun } from './judges/judge.ts';
import type { PriceFn } from './judges/llm.ts';
import { captureFinalPage } from './judges/page.ts';
import type { Verdict } from './judges/record.ts';
import type { JudgeSpec } from './judges/spec.ts';

/** The agent under evaluation: its name (the results directory) and how to build one per run. */
export interface SuiteAgent {
  name: string;
  build(ctx: AgentContext): Agent | Promise<Agent>;
}

/** One infra failure of one attempt (kept in task.json `infra_errors`). */
export interface InfraRecord {
  attempt: number;
  code: string;
  message: string;
  /** The agent's own result, when the agent ran. */
  agent_result?: RunResult;
}

/** What every attempt of a suite shares. */
export interface AttemptOptions {
  agent: SuiteAgent;
  /** Absolute path of the task file (task.json task_file, ctx.taskFile). */
  taskFile?: string;
  /** Steps per run unless the task sets maxSteps. */
  maxSteps: number;
  provider: DesktopProvider;
  desktopTimeoutMs?: number;
  script?: string;
  args?: string[];
  successGraceMs?: number;
  live?: boolean;
  /** The judges of every task without its own `judges` (eval/judges/): the final page is captured before the desktop goes, and judges.json written. */
  judges?: readonly JudgeSpec[];
  /** USD of an LLM judge's call (eval/ does not import byom/: the CLI passes byom/pricing.ts's table). */
  judgePrice?: PriceFn;
  /** Every run's cost cap in USD (the Agent's maxCostUsd, --max-cost). */
  maxCostUsd?: number;
  /** The suite's shared cost cap (the Agent's costBudget, --max-suite-cost). */
  costBudget?: CostBudget | null;
  /** The Agent's needsHuman for every run (--needs-human). */
  needsHuman?: 'end' | 'ask';
  /** The gate of model calls (--rate-limit) every run shares (the Agent's rateGate): a LocalRateGate locally, a RedisRateGate on a queue worker. */
  rateGate?: RateGate | null;
  /** The navigation guard for every run (--allowed-domains): a task's own allowedDomains narrows it (harness/guard mergeDomainLists). */
  allowedDomains?: readonly string[];
  /** Blocked for every run (--blocked-domains), besides each task's own blockedDomains. */
  blockedDomains?: readonly string[];
  /** The secrets file tasks' auth bindings and secrets are looked up in first (--secrets-file; harness/secrets/sources.ts). */
  secretsFile?: string;
  signal?: AbortSignal;
  /** The attempt's state, for the progress display. */
  onState?(state: WorkerStatus['state']): void;
  /** Called just before the desktop is asked for (DesktopProvider.plan). */
  plan?(): void;
}

/** Which attempt, after which infra failures, written where. */
export interface AttemptSpec {
  /** 1-based. */
  attempt: number;
  /** The infra failures of the earlier attempts. */
  infra: readonly InfraRecord[];
  /** The directory the attempt writes into (created; emptied first). */
  dir: string;
}

/** How an attempt ended (see the file comment). */
export type AttemptResult =
  | {
      kind: 'final';
      result: RunResult;
      /** Whether the agent's own success check held at some step (null: no readable trace). */
      success: boolean | null;
      desktopOverheadMs: number | null;
      pooled: boolean;
      /** Each judge's verdict (judges.json), when the run has judges. */
      judges?: JudgeVerdicts;
    }
  | { kind: 'infra'; record: InfraRecord; startedAt: number /** The agent's steps, when it ran. */; steps?: number }
  | { kind: 'config'; error: { code: string; message: string } }
  | { kind: 'cancelled' };

/** Each judge's verdict of one run; `error` is the code of a judge that could not decide. */
export type JudgeVerdicts = Array<{ judge: string; verdict: Verdict; error?: { code: string; message: string } }>;

/** How long the after-run desktop check may take. */
const HEALTH_TIMEOUT_MS = 3000;

/** task.json: the task as run, and the attempt. */
export function taskJson(o: AttemptOptions, job: EvalJob, attempt: number, startedAt: number, infra: readonly InfraRecord[], extra: Record<string, unknown> = {}): string {
  const t = job.task;
  return `${JSON.stringify(
    {
      id: t.id,
      goal: t.goal,
      url: t.url,
      success: t.success,
      maxSteps: t.maxSteps ?? o.maxSteps,
      hint: t.hint,
      ...((t.judges ?? o.judges) ? { judges: t.judges ?? o.judges } : {}),
      group: t.group,
      ...(o.taskFile ? { task_file: o.taskFile } : {}),
      agent: o.agent.name,
      resolution: resolutionLabel(job.size),
      repeat: job.repeat,
      repeats: job.repeats,
      attempt,
      started_at: startedAt,
      provider: o.provider.name,
      infra_errors: infra,
      ...extra,
    },
    null,
    2,
  )}\n`;
}

/** Whether a finished run's trace shows the agent's own success (not a person's, during a takeover); null when there is no readable trace. */
export async function traceSuccess(dir: string): Promise<boolean | null> {
  try {
    const t = await readTrace(dir);
    // The agent's own success: one a person's takeover brought about is not counted (eval/score.ts).
    const first = firstSuccess(t.entries);
    return first !== null && !first.assisted;
  } catch {
    return null;
  }
}

/** Run one attempt of `job` into `spec.dir` (see the file comment). */
export async function runAttempt(o: AttemptOptions, job: EvalJob, spec: AttemptSpec): Promise<AttemptResult> {
  const { signal } = o;
  const { attempt, infra, dir } = spec;
  const maxSteps = job.task.maxSteps ?? o.maxSteps;
  const judges = job.task.judges ?? o.judges ?? [];
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const startedAt = now();
  // The desktop overhead: from here until the desktop is ready for the agent (started, task page ready).
  const tStart = performance.now();
  await writeFileAtomic(`${dir}/${TASK_FILE}`, taskJson(o, job, attempt, startedAt, infra));
  o.onState?.('starting desktop');
  // A task with auth bindings opens its page only once the run's bindings are attached (agent.run's `ready` as a
  // function): the desktop waits at the empty page, so the task page's first request already carries its binding.
  const deferOpen = (job.task.auth?.length ?? 0) > 0;
  let desktop: LeasedDesktop;
  try {
    o.plan?.();
    desktop = await o.provider.acquire({
      size: job.size,
      url: deferOpen ? 'about:blank' : job.task.url,
      signal,
      ...(o.desktopTimeoutMs ? { timeoutMs: o.desktopTimeoutMs } : {}),
    });
  } catch (e) {
    if (signal?.aborted) return { kind: 'cancelled' };
    return { kind: 'infra', record: { attempt, ...errorInfo(e, 'DESKTOP_ERR_START_FAILED') }, startedAt };
  }
  let overheadMs: number | null = null;
  const acquiredMs = performance.now() - tStart;
  const pageReady = (p: Promise<unknown>) => {
    void p.then(
      () => (overheadMs = roundMs(performance.now() - tStart)),
      () => {},
    );
    return p;
  };
  if (desktop.ready && !deferOpen) pageReady(desktop.ready);
  else if (!deferOpen) overheadMs = roundMs(acquiredMs);
  const leased = desktop;
  const ready = deferOpen
    ? () =>
        pageReady(
          (async () => {
            await leased.ready;
            return leased.open ? leased.open(job.task.url, signal ? { signal } : {}) : navigatePage(leased.cdpUrl, job.task.url, signal ? { signal } : {});
          })(),
        )
    : desktop.ready;
  let result: RunResult | undefined;
  let problem: { code: string; message: string } | null = null;
  let ranAgent = false;
  try {
    await writeFileAtomic(`${dir}/${TASK_FILE}`, taskJson(o, job, attempt, startedAt, infra, { desktop: desktop.info }));
    o.onState?.('running agent');
    const ctx: AgentContext = {
      task: job.task.goal,
      outputDir: dir,
      vncUrl: desktop.vncUrl,
      cdpUrl: desktop.cdpUrl,
      url: job.task.url,
      maxSteps,
      script: o.script,
      args: o.args ?? [],
      agentOptions: {
        task: job.task.goal,
        outputDir: dir,
        vncUrl: desktop.vncUrl,
        cdpUrl: desktop.cdpUrl,
        successCheck: job.task.success,
        ...(desktop.password !== undefined ? { password: desktop.password } : {}),
        ...(o.successGraceMs !== undefined ? { successGraceMs: o.successGraceMs } : {}),
        ...(o.live !== undefined ? { live: o.live } : {}),
        ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
        ...(o.costBudget ? { costBudget: o.costBudget } : {}),
        ...(o.needsHuman !== undefined ? { needsHuman: o.needsHuman } : {}),
        ...(o.rateGate ? { rateGate: o.rateGate } : {}),
        ...runDomains(o, job.task),
        // The task's auth bindings and secrets name variables only; the Agent looks them up (secretsFile first, then the environment).
        ...(job.task.auth ? { auth: job.task.auth } : {}),
        ...(job.task.secrets ? { secrets: job.task.secrets } : {}),
        ...(o.secretsFile ? { secretsFile: o.secretsFile } : {}),
        // Every run is recorded (the Agent's record option, on by default), whichever Agent class the builder makes.
        recorder: recordingProxyRecorder,
      },
      taskId: job.task.id,
      ...(o.taskFile ? { taskFile: o.taskFile } : {}),
      resolution: { width: desktop.width, height: desktop.height },
    };
    let agent: Agent | undefined;
    try {
      agent = await o.agent.build(ctx);
    } catch (e) {
      const err = errorInfo(e, 'CLI_ERR_BAD_AGENT');
      // Only a coded error says the configuration is wrong (anything else may be this task's).
      if (e instanceof VncuaError && isConfigErrorCode(err.code)) return { kind: 'config', error: err };
      if (isInfraErrorCode(err.code)) problem = err;
      else result = { status: 'error', steps: 0, durationMs: 0, error: err };
      if (result) await writeFileAtomic(`${dir}/${TRACE_FILES.result}`, `${JSON.stringify(result, null, 2)}\n`);
    }
    if (agent) {
      result = await agent.run({ maxSteps, signal, ...(ready ? { ready } : {}) });
      ranAgent = true;
      if (result.status === 'error' && isConfigErrorCode(result.error?.code)) return { kind: 'config', error: result.error! };
      if (signal?.aborted && result.status === 'cancelled') return { kind: 'cancelled' };
      problem = infraErrorOf(result);
      if (!problem) {
        o.onState?.('checking desktop');
        problem = await desktop.health({ timeoutMs: HEALTH_TIMEOUT_MS, signal });
        if (problem && signal?.aborted) return { kind: 'cancelled' };
      }
      // The judges' look at the final page, while the desktop is still up.
      if (!problem && judges.length > 0) {
        o.onState?.('checking desktop');
        try {
          await captureFinalPage(dir, desktop.cdpUrl, judges, signal ? { signal } : {});
        } catch {
          // Cancelled, or final_page.json could not be written: the page judges then say unknown (JUDGE_ERR_PAGE).
          if (signal?.aborted) return { kind: 'cancelled' };
        }
      }
    }
  } finally {
    o.onState?.('stopping desktop');
    await desktop.release();
  }
  if (problem) return { kind: 'infra', record: { attempt, ...problem, ...(result ? { agent_result: result } : {}) }, startedAt, ...(ranAgent ? { steps: result!.steps } : {}) };
  const r = result!;
  await writeFileAtomic(
    `${dir}/${TASK_FILE}`,
    taskJson(o, job, attempt, startedAt, infra, {
      desktop: desktop.info,
      desktop_acquire_ms: roundMs(acquiredMs),
      desktop_overhead_ms: overheadMs,
      ended_at: now(),
      status: r.status,
    }),
  );
  let verdicts: JudgeVerdicts | undefined;
  if (judges.length > 0) {
    try {
      const j = await judgeRun(dir, judges, { source: 'run', ...(o.judgePrice ? { price: o.judgePrice } : {}), ...(signal ? { signal } : {}) });
      verdicts = j.verdicts.map((v) => ({ judge: v.judge, verdict: v.verdict, ...(v.error ? { error: v.error } : {}) }));
    } catch (e) {
      if (signal?.aborted) return { kind: 'cancelled' };
      verdicts = [{ judge: '*', verdict: 'unknown', error: errorInfo(e, 'JUDGE_ERR_WRITE') }];
    }
  }
  return {
    kind: 'final',
    result: r,
    success: await traceSuccess(dir),
    desktopOverheadMs: overheadMs,
    pooled: desktop.pooled === true,
    ...(verdicts ? { judges: verdicts } : {}),
  };
}

/** Every attempt hit an infra failure: write the run's infra_error result (and task.json) into `dir`; resolves to that result. */
export async function writeInfraError(
  o: AttemptOptions,
  job: EvalJob,
  dir: string,
  e: { attempts: number; infra: readonly InfraRecord[]; startedAt: number; steps: number; durationMs: number },
): Promise<RunResult> {
  const last = e.infra[e.infra.length - 1]!;
  const result: RunResult = {
    status: 'infra_error',
    steps: e.steps,
    durationMs: e.durationMs,
    error: { code: last.code, message: `${e.attempts} attempt${e.attempts === 1 ? '' : 's'} failed on infrastructure; the last: ${last.message}` },
  };
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(`${dir}/${TASK_FILE}`, taskJson(o, job, e.attempts, e.startedAt, e.infra, { ended_at: now(), status: 'infra_error' }));
  await writeFileAtomic(`${dir}/${TRACE_FILES.result}`, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

/** The guard lists of one run: the suite's (CLI) and the task's, layered; the task page's origin allowed (harness/guard/patterns.ts). */
function runDomains(o: Pick<AttemptOptions, 'allowedDomains' | 'blockedDomains'>, task: EvalTask): { allowedDomains?: string[][]; blockedDomains?: string[] } {
  const lists = allowStartPage(mergeDomainLists(o, task), task.url);
  if (lists.allowedDomains.length === 0 && lists.blockedDomains.length === 0) return {};
  return lists;
}
