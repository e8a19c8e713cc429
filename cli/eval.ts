/**
 * `vncua eval`: run a task file with an agent, every task at every resolution on a fresh desktop,
 * then score the results (and, with --process, post-process the recordings first).
 *
 * The agent is resolved exactly as `vncua run --agent` does (cli/agents.ts loadAgentModule: a built-in
 * name from cli/agents.ts AGENTS, or a module path). Task URLs that are relative (a suite's
 * tasks.json, e.g. eval/suites/basic/tasks.json) are served by a static server started over the task
 * file's directory, unless --base-url is given. Ctrl-C / SIGTERM cancels cleanly (again: quit at once;
 * the desktops die with the process either way) and a second `vncua eval` resumes where it stopped.
 */
import { qaLine } from '../eval/score-qa.ts';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { AGENTS, type LoadedAgentModule, loadAgentModule } from './agents.ts';
import { checkDomainFlags, parseDomainFlags } from './domains.ts';
import { DESKTOP_MEMORY_BYTES, machineResources, poolMemoryWarning, recommendedWorkers, workersWarning } from '../eval/capacity.ts';
import { parseShard, type Shard } from '../eval/jobs.ts';
import { plainProgress, ttyProgress } from '../eval/progress.ts';
import { suiteHostForDocker } from '../eval/providers/docker.ts';
import { loadEndpoints, type RemoteEndpoint } from '../eval/providers/remote.ts';
import { runSuite, type SuiteSummary } from '../eval/runner.ts';
import { writeScores } from '../eval/score.ts';
import { parseOnly, selectTasks } from '../eval/select.ts';
import { SPARE_PAGE_PATH, startStaticServer, type StaticServer } from '../eval/static-server.ts';
import { type EvalTask, isRelativeUrl, loadTaskFile, resolveTaskUrls } from '../eval/tasks.ts';
import { type QueuedSuiteSummary, runQueuedSuite } from '../eval/queue/coordinator.ts';
import { QUEUE_INPUT_ERROR_CODES } from '../eval/queue/codes.ts';
import { parseQueueUrl } from '../eval/queue/url.ts';
import { DEFAULT_MAX_STEPS, MAX_SUCCESS_GRACE_MS } from '../harness/agent/options.ts';
import { parseScreenSize, type ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError, isVncuaError } from '../harness/errors.ts';
import { LocalRateGate, parseRateLimits } from '../harness/agent/rate-gate.ts';
import { newUploadToken, type ResultsReceiver, startResultsReceiver } from '../eval/queue/upload/index.ts';
import { hostname } from 'node:os';
import { checkOutputDir } from '../harness/trace/out-dir.ts';
import { processRoot } from '../recorder/process/index.ts';
import type { ViewerServer } from '../viewer/server.ts';
import { JUDGE_OPTION, judgePrice, parseJudgeArgs, writeJudgeErrors } from './judges.ts';
import type { JudgeSpec } from '../eval/judges/spec.ts';
import { SERVE_OPTIONS, SERVE_START_ERROR_CODES, type ServeRequest, serveRequest, startCommandViewer, withServeValue } from './serve-option.ts';
import {
  AGENT_REST,
  AGENT_RUN_OPTIONS,
  OUTPUT_ERROR_CODES,
  badArgs,
  badInputExit,
  cancelOnSignals,
  oneOf,
  optionalWholeNumber,
  parseCommandArgs,
  parseCommandLine,
  parsedValue,
  positiveUsd,
  wholeNumber,
  type CommandSpec,
} from './command.ts';

/** `vncua eval`'s options: the --help is generated from them. */
export const EVAL_SPEC = {
  command: 'eval',
  options: {
    tasks: {
      type: 'string',
      value: 'FILE',
      description:
        "a task file: ours (JSON array of { id, goal, url, success, ... }) or uitask's ([{ web_name, id, ques, ux_hint, web }]); relative URLs are served from its directory (this or --urls is required)",
    },
    urls: {
      type: 'string',
      value: 'FILE',
      description: 'a list of URLs, one a line (# comments), each a task with only a start page: with --agent explorer, each app is explored and gets its qa-report.*',
    },
    agent: {
      type: 'string',
      value: 'NAME|MODULE',
      required: 'a built-in agent name, or a .ts/.js file',
      description: `a built-in agent (${Object.keys(AGENTS).join(', ')}) or a .ts/.js module (default export: an Agent subclass or a builder (ctx) => Agent)`,
    },
    resolution: { type: 'string', multiple: true, value: 'WxH', description: 'screen size (default 1280x800)' },
    workers: {
      type: 'string',
      value: 'N',
      description: `runs at once (default: what this machine holds: one desktop per core, within the available memory at ${Math.round(DESKTOP_MEMORY_BYTES / 1024 ** 2)} MiB per desktop)`,
    },
    pool: {
      type: 'string',
      value: 'N',
      description:
        'keep up to N desktops started ahead of need, at the sizes of the next runs, so a run does not wait for one to boot; each still serves one run (default 0; local and docker)',
    },
    'max-steps': { type: 'string', value: 'N', description: `steps per run (default ${DEFAULT_MAX_STEPS})` },
    retries: { type: 'string', value: 'N', description: 'attempts after an infra failure, per run (default 2)' },
    repeat: {
      type: 'string',
      value: 'K',
      description: 'run every task K times (default 1): OUT/<agent>/<W>_<H>/<task id>/<n>/; scores report pass@1, pass@K, pass^K and the tasks whose result flips',
    },
    only: { type: 'string', multiple: true, value: 'IDS', description: 'run only these task ids (comma-separated; globs with * and ?)' },
    rerun: { type: 'boolean', description: 'run again the runs that already finished; the old ones move aside to <dir>~N' },
    shard: { type: 'string', value: 'i/n', description: 'run only the i-th of n deterministic slices (1-based)' },
    out: { type: 'string', value: 'DIR', default: 'runs/eval', description: 'results root: OUT/<agent>/<W>_<H>/<task id>/' },
    provider: {
      type: 'string',
      value: 'local|docker|remote',
      default: 'local',
      description: 'where desktops run: locally, in Docker (image vncua-desktop), or at the --endpoints',
    },
    endpoints: { type: 'string', value: 'FILE', description: 'the desktops of --provider remote: [{ "vncUrl", "cdpUrl", "size"? }]' },
    'base-url': { type: 'string', value: 'URL', description: 'base of relative task URLs; for uitask files, the origin their web URLs move to' },
    process: { type: 'boolean', description: 'post-process the recordings (step reports) before scoring' },
    score: { type: 'boolean', description: 'write scores.json / scores.md / scores.html (the default)' },
    'no-score': { type: 'boolean', description: 'do not write the scores' },
    'rate-limit': {
      type: 'string',
      value: 'RULES',
      description:
        'limit the model calls of every run together: N/s, N/min or N/h, for one model or adapter with :NAME, comma-separated (60/min,10/s:gpt-5); a 429 backs every run off. With --queue it holds across all workers (through Redis)',
    },
    'results-listen': {
      type: 'string',
      value: 'HOST:PORT',
      description:
        'with --queue: receive the results of workers that do not see --out over HTTP on this address (PORT 0: OS-chosen); 0.0.0.0 exposes it to the network, where a random token in the suite manifest protects it',
    },
    'results-tls-cert': {
      type: 'string',
      value: 'FILE',
      description: 'with --results-listen: serve HTTPS with this PEM certificate (and --results-tls-key); workers trust its CA through NODE_EXTRA_CA_CERTS',
    },
    'results-tls-key': { type: 'string', value: 'FILE', description: "with --results-tls-cert: the certificate's PEM private key" },
    queue: {
      type: 'string',
      value: 'URL',
      description:
        'run the suite on a Redis job queue, redis://[:PASSWORD@]HOST:PORT/N: this command enqueues the runs, shows their progress and scores them; `vncua worker --queue URL` on any machine runs them (Ctrl-C detaches; the same command reattaches)',
    },
    ...JUDGE_OPTION,
    'max-suite-cost': {
      type: 'string',
      value: 'USD',
      description:
        'cost cap of the whole suite (finished runs found in --out included): once reached, running runs stop before their next model call (status cost_cap) and no new run starts',
    },
    ...SERVE_OPTIONS,
    ...AGENT_RUN_OPTIONS,
  },
  rest: AGENT_REST,
  notes: `A task page that never became ready (refused, DNS, TLS, HTTP status >= 400, blank, never settled) is an
infra error (PAGE_ERR_*): retried, then infra_error, never counted in a rate. A configuration error
(MODEL_ERR_AUTH, MODEL_ERR_NOT_FOUND, an agent that cannot be built) stops the suite at once.
exit code: 0 when every run finished, 1 when cancelled, infra errors remain, scored runs are invalid or
           the suite's cost cap left runs not started,
           2 on bad input (arguments, task file, --only, --out, a results layout --repeat would mix, a --serve
           port in use) or a configuration error
`,
} as const satisfies CommandSpec;

/** What `vncua eval` was asked to do. */
export interface EvalCommandOptions {
  tasks: string;
  agent: string;
  resolutions: ScreenSize[];
  workers?: number;
  /** Desktops kept started ahead of need (default 0). */
  pool?: number;
  maxSteps?: number;
  retries?: number;
  /** Runs per task (default 1). */
  repeat?: number;
  /** --only patterns (ids or globs); empty or absent: every task. */
  only?: string[];
  rerun: boolean;
  shard?: Shard;
  out: string;
  provider: 'local' | 'docker' | 'remote';
  endpoints?: string;
  baseUrl?: string;
  process: boolean;
  score: boolean;
  script?: string;
  successGraceMs?: number;
  /** --max-cost: every run's cost cap. */
  maxCostUsd?: number;
  /** --max-suite-cost: the suite's cost cap. */
  maxSuiteCostUsd?: number;
  /** --needs-human. */
  needsHuman?: 'end' | 'ask';
  /** --serve [PORT]: the viewer in this process over --out while the suite runs. */
  serve?: ServeRequest;
  /** --no-live: every run's Agent with live: false. */
  live?: boolean;
  /** --queue URL: the runs go to workers through this Redis queue (eval/queue/coordinator.ts). */
  queue?: string;
  /** --rate-limit: the rules (harness/agent/rate-gate.ts specs) on the model calls of every run together. */
  rateLimits?: string[];
  /** --results-listen HOST:PORT: with --queue, the results receiver's address (eval/queue/upload/). */
  resultsListen?: { host: string; port: number };
  /** --results-tls-cert / --results-tls-key: the receiver serves HTTPS with these PEM files. */
  resultsTls?: { cert: string; key: string };
  /** --judge: the judges of every task without its own. */
  judges?: JudgeSpec[];
  /** --allowed-domains / --blocked-domains: the navigation guard of every run (a task's own lists narrow / add). */
  allowedDomains?: string[];
  blockedDomains?: string[];
  /** --secrets-file: where tasks' auth bindings and secrets are looked up first. */
  secretsFile?: string;
  args: string[];
}

/** Parse `vncua eval` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseEvalArgs(argv: string[]): EvalCommandOptions | undefined {
  const line = parseCommandLine(EVAL_SPEC, withServeValue(argv));
  if (line === undefined) return undefined;
  const v = line.values;
  const only = v.only.flatMap((list) => {
    const patterns = parseOnly([list]);
    if (patterns.length === 0) throw badArgs('--only needs task ids or globs, comma-separated (e.g. --only "click-*,form-2").', '--only');
    return patterns;
  });
  if (v.score && v['no-score']) throw badArgs('--score and --no-score contradict each other.', '--no-score');
  const provider = oneOf(v.provider, '--provider', ['local', 'docker', 'remote']);
  if (provider === 'remote' && v.endpoints === undefined) throw badArgs('--provider remote needs --endpoints FILE (a JSON array of { "vncUrl", "cdpUrl" }).', '--endpoints');
  if (provider !== 'remote' && v.endpoints !== undefined) throw badArgs('--endpoints goes with --provider remote.', '--endpoints');
  if (provider === 'remote' && v.pool !== undefined && v.pool !== '0')
    throw badArgs('--pool goes with --provider local or docker (remote desktops are already running).', '--pool');
  if (v.tasks === undefined && v.urls === undefined)
    throw badArgs('--tasks FILE (a task file, e.g. eval/suites/basic/tasks.json) or --urls FILE (one URL a line) is required.', '--tasks');
  if (v.tasks !== undefined && v.urls !== undefined) throw badArgs('--tasks and --urls contradict each other: give one.', '--urls');
  const o: EvalCommandOptions = {
    tasks: (v.tasks ?? v.urls)!,
    agent: v.agent,
    resolutions: v.resolution.map((r) => parsedValue(r, '--resolution', parseScreenSize)),
    rerun: v.rerun,
    out: v.out,
    provider,
    process: v.process,
    score: !v['no-score'],
    args: line.rest,
  };
  const whole = {
    workers: optionalWholeNumber(v.workers, '--workers', 1),
    pool: optionalWholeNumber(v.pool, '--pool', 0),
    maxSteps: optionalWholeNumber(v['max-steps'], '--max-steps', 1),
    retries: optionalWholeNumber(v.retries, '--retries', 0),
    repeat: optionalWholeNumber(v.repeat, '--repeat', 1),
  };
  for (const [k, n] of Object.entries(whole)) if (n !== undefined) o[k as keyof typeof whole] = n;
  if (only.length > 0) o.only = only;
  if (v.shard !== undefined) o.shard = parsedValue(v.shard, '--shard', parseShard);
  if (v.endpoints !== undefined) o.endpoints = v.endpoints;
  if (v['base-url'] !== undefined) o.baseUrl = v['base-url'];
  if (v.script !== undefined) o.script = v.script;
  if (v['success-grace-ms'] !== undefined) o.successGraceMs = wholeNumber(v['success-grace-ms'], '--success-grace-ms', 0, MAX_SUCCESS_GRACE_MS);
  const serve = serveRequest(v.serve, v['serve-host']);
  if (serve) o.serve = serve;
  if (v['no-live']) o.live = false;
  if (v.judge.length > 0) o.judges = parseJudgeArgs(v.judge);
  if (v['max-cost'] !== undefined) o.maxCostUsd = positiveUsd(v['max-cost'], '--max-cost');
  if (v['max-suite-cost'] !== undefined) o.maxSuiteCostUsd = positiveUsd(v['max-suite-cost'], '--max-suite-cost');
  if (v['needs-human'] !== undefined) o.needsHuman = oneOf(v['needs-human'], '--needs-human', ['end', 'ask']);
  if (v['rate-limit'] !== undefined) o.rateLimits = parseRateLimits(v['rate-limit']).map((r) => r.spec);
  if (v['results-listen'] !== undefined) {
    if (v.queue === undefined) throw badArgs('--results-listen receives the results of queue workers: it needs --queue.', '--results-listen');
    o.resultsListen = parsedValue(v['results-listen'], '--results-listen', parseListen);
  }
  if (v['results-tls-cert'] !== undefined || v['results-tls-key'] !== undefined) {
    if (v['results-listen'] === undefined) throw badArgs('--results-tls-cert and --results-tls-key secure the results receiver: they need --results-listen.', '--results-tls-cert');
    if (v['results-tls-cert'] === undefined || v['results-tls-key'] === undefined)
      throw badArgs(
        'give both --results-tls-cert FILE and --results-tls-key FILE (the PEM certificate and its private key).',
        v['results-tls-cert'] === undefined ? '--results-tls-cert' : '--results-tls-key',
      );
    o.resultsTls = { cert: v['results-tls-cert'], key: v['results-tls-key'] };
  }
  Object.assign(o, parseDomainFlags(v['allowed-domains'], v['blocked-domains']));
  if (v['secrets-file'] !== undefined) o.secretsFile = v['secrets-file'];
  if (v.queue !== undefined) {
    // The workers' own options: the coordinator runs no desktop.
    for (const [flag, given] of [
      ['--workers', v.workers],
      ['--pool', v.pool],
      ['--endpoints', v.endpoints],
    ] as const)
      if (given !== undefined) throw badArgs(`${flag} is a worker's option with --queue: give it to \`vncua worker\`.`, flag);
    if (provider !== 'local') throw badArgs("--provider is a worker's option with --queue: give it to `vncua worker`.", '--provider');
    o.queue = v.queue;
  }
  return o;
}

/** What runEvalCommand() resolves to. */
export interface EvalCommandResult {
  summary: SuiteSummary;
  /** scores.html, when scores were written. */
  scoresHtml?: string;
  /** Scored runs that could not be read (listed in the scores). */
  invalidRuns?: number;
}

/** The codes of bad input to `vncua eval` (exit 2, nothing written). */
export const EVAL_INPUT_ERROR_CODES: ReadonlySet<string> = new Set([
  ...OUTPUT_ERROR_CODES,
  'EVAL_ERR_BAD_TASKS',
  'EVAL_ERR_NO_TASKS',
  'EVAL_ERR_LAYOUT_MIXED',
  'EVAL_ERR_BAD_OPTIONS',
  'EVAL_ERR_BAD_ENDPOINTS',
  'GUARD_ERR_BAD_PATTERN',
  ...SERVE_START_ERROR_CODES,
  ...QUEUE_INPUT_ERROR_CODES,
  'QUEUE_ERR_LISTEN',
]);

/** Load the agent and the tasks, serve relative URLs, run the suite, then process and score. */
export async function runEvalCommand(o: EvalCommandOptions, io: { signal?: AbortSignal; out?: NodeJS.WriteStream; err?: NodeJS.WritableStream } = {}): Promise<EvalCommandResult> {
  const stdout = io.out ?? process.stdout;
  const stderr = io.err ?? process.stderr;
  // Bad input is found before anything is written: the output root, the agent, the tasks and the selection.
  checkDomainFlags(o);
  await checkOutputDir(o.out, '--out');
  const mod = await loadAgentModule(o.agent);
  const taskFile = await loadTaskFile(o.tasks, o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {});
  let endpoints: RemoteEndpoint[] | undefined;
  if (o.provider === 'remote') endpoints = await loadEndpoints(o.endpoints!);
  let server: StaticServer | undefined;
  let viewer: ViewerServer | undefined;
  /** Where pooled spares wait: the suite server's empty page, when vncua eval serves the suite. */
  let spareUrl: string | undefined;
  let tasks = selectTasks(taskFile.tasks, o.only ?? []);
  if (o.queue !== undefined) return runQueuedEvalCommand(o, { mod, taskFile: taskFile.file, tasks }, { ...io, stdout, stderr });
  const advice = recommendedWorkers(machineResources());
  const workers = o.workers ?? advice.workers;
  const warning = workersWarning(workers, advice);
  if (warning) stderr.write(`vncua eval: warning: ${warning}\n`);
  const poolWarning = o.pool ? poolMemoryWarning(workers, o.pool, advice) : null;
  if (poolWarning) stderr.write(`vncua eval: warning: ${poolWarning}\n`);
  try {
    // The viewer first: a port in use is bad input, found before any desktop starts.
    if (o.serve) viewer = await startCommandViewer('eval', resolve(o.out), o.serve, { out: stdout, err: stderr });
    if (tasks.some((t) => isRelativeUrl(t.url))) {
      // A suite directory: serve it. Docker containers reach the host through the bridge's gateway
      // address (docker0), not 127.0.0.1: serve there only, not on every interface.
      const host = o.provider === 'docker' ? await suiteHostForDocker(io.signal) : undefined;
      server = await startStaticServer({ root: dirname(taskFile.file), host, signal: io.signal });
      const base = server.url.replace('0.0.0.0', '127.0.0.1');
      tasks = resolveTaskUrls(tasks, base);
      spareUrl = new URL(SPARE_PAGE_PATH, base).href;
      stdout.write(`eval: serving ${dirname(taskFile.file)} at ${base}\n`);
    }
    const progress = stdout.isTTY ? ttyProgress(stdout) : plainProgress(stdout);
    let summary: SuiteSummary;
    try {
      summary = await runSuite({
        tasks,
        taskFile: taskFile.file,
        agent: mod,
        resolutions: o.resolutions,
        workers,
        ...(o.pool ? { pool: o.pool } : {}),
        ...(o.pool && spareUrl ? { spareUrl } : {}),
        maxSteps: o.maxSteps,
        retries: o.retries,
        repeat: o.repeat,
        rerun: o.rerun,
        shard: o.shard,
        out: o.out,
        provider: o.provider,
        endpoints,
        script: o.script,
        successGraceMs: o.successGraceMs,
        ...(o.live === false ? { live: false } : {}),
        ...(o.judges ? { judges: o.judges } : {}),
        judgePrice,
        ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
        ...(o.maxSuiteCostUsd !== undefined ? { maxSuiteCostUsd: o.maxSuiteCostUsd } : {}),
        ...(o.needsHuman !== undefined ? { needsHuman: o.needsHuman } : {}),
        // One gate for every run of this process (--rate-limit).
        ...(o.rateLimits ? { rateGate: new LocalRateGate(o.rateLimits) } : {}),
        allowedDomains: o.allowedDomains,
        blockedDomains: o.blockedDomains,
        ...(o.secretsFile ? { secretsFile: o.secretsFile } : {}),
        args: o.args,
        signal: io.signal,
        onProgress: progress.listener,
      });
    } finally {
      progress.stop();
    }
    return await finishSuite(o, summary, workers, { ...io, stdout, stderr });
  } finally {
    await server?.close();
    await viewer?.close();
  }
}

/** After the suite: print where the results are, post-process (--process) and score them as `vncua eval` does. */
async function finishSuite(
  o: EvalCommandOptions,
  summary: SuiteSummary,
  jobs: number,
  io: { signal?: AbortSignal; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<EvalCommandResult> {
  const { stdout } = io;
  stdout.write(`results: ${summary.out}\n`);
  writeJudgeErrors('eval', summary.out, summary.outcomes, io.stderr);
  const sc = summary.suiteCost;
  if (sc?.reached)
    stdout.write(
      `eval: the suite's cost cap was reached ($${sc.spentUsd} of $${sc.limitUsd}): ${summary.notStarted} run${summary.notStarted === 1 ? '' : 's'} not started (the same command with a higher --max-suite-cost runs them)\n`,
    );
  if (summary.cancelled || summary.configError) return { summary };
  const root = resolve(o.out);
  if (o.process) {
    stdout.write('eval: post-processing the recordings (step reports)...\n');
    try {
      const r = await processRoot(root, { jobs: Math.min(jobs, 2), signal: io.signal });
      stdout.write(`eval: processed ${r.runs.length - r.failed} run${r.runs.length === 1 ? '' : 's'}${r.failed ? `, ${r.failed} failed` : ''}\n`);
    } catch (e) {
      // No recordings (the recorder is not registered): the scores link to the traces instead.
      if (!isVncuaError(e, 'PROCESS_ERR_NO_RUNS')) throw e;
      stdout.write('eval: --process: no recording to process\n');
    }
  }
  if (!o.score) return { summary };
  const { report, files } = await writeScores(root, { signal: io.signal });
  if (report.invalid.length > 0)
    stdout.write(`eval: ${report.invalid.length} run${report.invalid.length === 1 ? '' : 's'} could not be read (invalid, not scored; listed in the scores)\n`);
  for (const q of report.qa ?? []) stdout.write(`qa: ${q.agent}/${q.task_id}: ${qaLine(q)}\n`);
  stdout.write(`scores: ${files.html}\n`);
  return { summary, scoresHtml: files.html, invalidRuns: report.invalid.length };
}

/** `vncua eval --queue URL`: the coordinator (eval/queue/coordinator.ts) with the same progress, processing and scoring as a local suite. */
async function runQueuedEvalCommand(
  o: EvalCommandOptions,
  suite: { mod: LoadedAgentModule; taskFile: string; tasks: EvalTask[] },
  io: { signal?: AbortSignal; stdout: NodeJS.WriteStream; stderr: NodeJS.WritableStream },
): Promise<EvalCommandResult> {
  // The suite cap is one in-process CostBudget: workers in other processes could not share it.
  if (o.maxSuiteCostUsd !== undefined)
    throw new VncuaError(
      'QUEUE_ERR_SUITE_COST',
      "--max-suite-cost does not work with --queue: the suite cost cap is not shared across queue workers. Drop it (--max-cost, every run's own cap, does work with --queue), or run the suite locally.",
      { details: { flag: '--max-suite-cost' } },
    );
  const { stdout } = io;
  const url = parseQueueUrl(o.queue!);
  let viewer: ViewerServer | undefined;
  let receiver: ResultsReceiver | undefined;
  try {
    let upload: { url: string; token: string } | undefined;
    if (o.resultsListen) {
      // Workers that do not see --out upload each finished run here; the token (in the manifest, which only Redis's clients read) guards it.
      const token = newUploadToken();
      const tls = o.resultsTls ? await readReceiverTls(o.resultsTls) : undefined;
      receiver = await startResultsReceiver({
        out: resolve(o.out),
        token,
        host: o.resultsListen.host,
        port: o.resultsListen.port,
        ...(tls ? { tls } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      upload = { url: advertisedUrl(receiver.url), token };
      stdout.write(`eval: receiving the results of workers that do not see ${resolve(o.out)} at ${upload.url}\n`);
    }
    if (o.serve) viewer = await startCommandViewer('eval', resolve(o.out), o.serve, { out: stdout, err: io.stderr });
    const progress = stdout.isTTY ? ttyProgress(stdout) : plainProgress(stdout);
    let summary: QueuedSuiteSummary;
    try {
      summary = await runQueuedSuite({
        url,
        tasks: suite.tasks,
        taskFile: suite.taskFile,
        ...(o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {}),
        ...(o.only ? { only: o.only } : {}),
        agent: { spec: o.agent, name: suite.mod.name, ...(agentModuleFile(o.agent) ? { module: agentModuleFile(o.agent)! } : {}) },
        resolutions: o.resolutions,
        ...(o.repeat !== undefined ? { repeat: o.repeat } : {}),
        ...(o.maxSteps !== undefined ? { maxSteps: o.maxSteps } : {}),
        ...(o.retries !== undefined ? { retries: o.retries } : {}),
        ...(o.successGraceMs !== undefined ? { successGraceMs: o.successGraceMs } : {}),
        ...(o.live === false ? { live: false } : {}),
        ...(o.script !== undefined ? { script: resolve(o.script) } : {}),
        args: o.args,
        ...(o.shard ? { shard: o.shard } : {}),
        ...(o.allowedDomains ? { allowedDomains: o.allowedDomains } : {}),
        ...(o.blockedDomains ? { blockedDomains: o.blockedDomains } : {}),
        ...(o.judges ? { judges: o.judges } : {}),
        ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
        ...(o.needsHuman !== undefined ? { needsHuman: o.needsHuman } : {}),
        ...(o.rateLimits ? { rateLimits: o.rateLimits } : {}),
        ...(upload ? { upload } : {}),
        // The path only (made absolute); each worker reads its own copy there, and no value goes into Redis.
        ...(o.secretsFile ? { secretsFile: o.secretsFile } : {}),
        out: o.out,
        rerun: o.rerun,
        ...(io.signal ? { signal: io.signal } : {}),
        onProgress: progress.listener,
        onSuite: (s) => stdout.write(`eval: suite ${s.suiteId} on ${url.display}${s.resumed ? ' (resumed)' : ''}: ${s.queued} run${s.queued === 1 ? '' : 's'} queued\n`),
      });
    } finally {
      progress.stop();
    }
    if (summary.detached) {
      io.stderr.write(
        `vncua eval: detached from suite ${summary.suiteId}: it keeps running on the workers; run the same command again to reattach (it resumes, finished runs are kept)\n`,
      );
    }
    return await finishSuite(o, summary, 2, io);
  } finally {
    await receiver?.close();
    await viewer?.close();
  }
}

/** The PEM files of --results-tls-cert / --results-tls-key, read (QUEUE_ERR_LISTEN naming the flag when one cannot be read). */
async function readReceiverTls(files: { cert: string; key: string }): Promise<{ cert: Buffer; key: Buffer }> {
  const read = async (file: string, flag: string) => {
    try {
      return await readFile(file);
    } catch (e) {
      throw new VncuaError(
        'QUEUE_ERR_LISTEN',
        `The results receiver cannot read ${flag} ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give a readable PEM file.`,
        {
          details: { flag, file, cause: (e as NodeJS.ErrnoException).code },
        },
      );
    }
  };
  return { cert: await read(files.cert, '--results-tls-cert'), key: await read(files.key, '--results-tls-key') };
}

/** `HOST:PORT` of --results-listen (`[::1]:0` for IPv6; PORT 0: OS-chosen). */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw new Error(`expected HOST:PORT (127.0.0.1:0, 0.0.0.0:7070, [::1]:7070); got "${text}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/** The receiver's URL as workers elsewhere reach it: a wildcard address (0.0.0.0, ::) becomes this machine's host name. */
function advertisedUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0' || u.hostname === '[::]') u.hostname = hostname();
  return u.href;
}

/** The agent module file `spec` names, or undefined for a built-in agent (cli/agents.ts AGENTS). */
export function agentModuleFile(spec: string): string | undefined {
  return Object.hasOwn(AGENTS, spec) ? undefined : resolve(spec);
}

/** Run `vncua eval ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(EVAL_SPEC, () => parseEvalArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const cancel = cancelOnSignals(
    'eval',
    parsed.options.queue !== undefined ? 'detaching: the suite keeps running on the workers' : 'cancelling: the running tasks stop and their desktops are torn down',
  );
  try {
    const { summary, invalidRuns } = await runEvalCommand(parsed.options, { signal: cancel.signal });
    const c = summary.configError;
    if (c) {
      // Every run would fail the same way: one coded line, and the unfinished runs are left for the next invocation.
      process.stderr.write(
        `vncua eval: ${c.code}: ${c.message.replace(/\s*\n\s*/g, ' ')} (met by ${c.job}; the suite stopped, nothing was scored: fix the configuration and run the same command again, it resumes)\n`,
      );
      return 2;
    }
    return summary.cancelled || summary.infraErrors > 0 || summary.notStarted > 0 || (invalidRuns ?? 0) > 0 ? 1 : 0;
  } catch (e) {
    return badInputExit('eval', e, EVAL_INPUT_ERROR_CODES);
  } finally {
    cancel.dispose();
  }
}
