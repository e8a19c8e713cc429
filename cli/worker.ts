/**
 * `vncua worker --queue URL`: take runs from a Redis job queue (enqueued by `vncua eval --queue URL`)
 * until stopped (eval/queue/worker.ts). The agent of each suite is resolved as `vncua eval` does
 * (cli/agents.ts loadAgentModule: a built-in name, or the module file, checked by sha256 against the
 * coordinator's). SIGTERM / Ctrl-C: no new job; running ones get --grace seconds to finish, then go back
 * to the queue (again: quit at once).
 *
 * `vncua worker --shard-from-env EVAL OPTIONS`: a Kubernetes Indexed Job's pod runs its shard of a suite
 * without Redis: `vncua eval EVAL OPTIONS --shard (JOB_COMPLETION_INDEX+1)/JOB_COMPLETIONS`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { QUEUE_INPUT_ERROR_CODES } from '../eval/queue/codes.ts';
import { uploadSink } from '../eval/queue/upload/index.ts';
import { judgePrice } from './judges.ts';
import { parseQueueUrl } from '../eval/queue/url.ts';
import { DEFAULT_GRACE_MS, DEFAULT_STALL_TIMEOUT_MS, type LoadedSuiteAgent, runWorker } from '../eval/queue/worker.ts';
import { VncuaError } from '../harness/errors.ts';
import { AGENTS, loadAgentModule } from './agents.ts';
import { OUTPUT_ERROR_CODES, badArgs, badInputExit, oneOf, optionalWholeNumber, parseCommandArgs, parseCommandLine, type CommandSpec } from './command.ts';

/** `vncua worker`'s options: the --help is generated from them. */
export const WORKER_SPEC = {
  command: 'worker',
  options: {
    queue: { type: 'string', value: 'URL', required: 'the queue of `vncua eval --queue URL`', description: 'the Redis job queue: redis://[:PASSWORD@]HOST:PORT/N' },
    concurrency: { type: 'string', value: 'N', default: '1', description: 'runs at once (one desktop each)' },
    provider: { type: 'string', value: 'local|docker', default: 'local', description: 'where desktops run: locally, or in Docker (image vncua-desktop)' },
    pool: { type: 'string', value: 'N', description: "keep up to N desktops started ahead of need, at the sizes of the suite's resolutions (default 0)" },
    tasks: { type: 'string', value: 'FILE', description: "this machine's copy of the task file (default: the coordinator's path); its sha256 must match" },
    'stall-timeout': {
      type: 'string',
      value: 'S',
      description: `seconds until a job of a worker that died (SIGKILL, lost machine) runs on another one (default ${DEFAULT_STALL_TIMEOUT_MS / 1000}); give every worker the same`,
    },
    grace: { type: 'string', value: 'S', description: `seconds running runs get to finish after SIGTERM before going back to the queue (default ${DEFAULT_GRACE_MS / 1000})` },
    name: { type: 'string', value: 'NAME', description: "this worker's name in the coordinator's progress (default host:pid)" },
  },
  notes: `--shard-from-env EVAL OPTIONS: no queue; run shard (JOB_COMPLETION_INDEX+1)/JOB_COMPLETIONS of a suite, as
a Kubernetes Indexed Job sets them, with vncua eval's options (--tasks, --agent, --out, ...)
exit code: 0 when stopped (SIGTERM), 2 on bad input (arguments, queue URL, password) or when this worker
           cannot run the queue's suite (QUEUE_ERR_VERSION, QUEUE_ERR_MISMATCH, QUEUE_ERR_RESULTS_UNWRITABLE)
`,
} as const satisfies CommandSpec;

/** What `vncua worker` was asked to do. */
export interface WorkerCommandOptions {
  queue: string;
  concurrency: number;
  provider: 'local' | 'docker';
  pool?: number;
  tasks?: string;
  stallTimeoutMs?: number;
  graceMs?: number;
  name?: string;
}

/** Parse `vncua worker` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseWorkerArgs(argv: string[]): WorkerCommandOptions | undefined {
  const line = parseCommandLine(WORKER_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  const o: WorkerCommandOptions = {
    queue: v.queue,
    concurrency: optionalWholeNumber(v.concurrency, '--concurrency', 1)!,
    provider: oneOf(v.provider, '--provider', ['local', 'docker']),
  };
  const pool = optionalWholeNumber(v.pool, '--pool', 0);
  if (pool) o.pool = pool;
  if (v.tasks !== undefined) o.tasks = v.tasks;
  const seconds = (text: string | undefined, flag: string) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text.trim()) || !(n > 0) || n > 86_400) throw badArgs(`${flag} takes seconds (a number > 0, at most 86400), not "${text}".`, flag);
    return Math.round(n * 1000);
  };
  const stall = seconds(v['stall-timeout'], '--stall-timeout');
  if (stall !== undefined) o.stallTimeoutMs = stall;
  const grace = seconds(v.grace, '--grace');
  if (grace !== undefined) o.graceMs = grace;
  if (v.name !== undefined) o.name = v.name;
  return o;
}

/** The shard of a Kubernetes Indexed Job's pod: `(JOB_COMPLETION_INDEX+1)/JOB_COMPLETIONS`; QUEUE_ERR_SHARD_ENV when missing or malformed. */
export function shardFromEnv(env: NodeJS.ProcessEnv): string {
  const index = env.JOB_COMPLETION_INDEX;
  const completions = env.JOB_COMPLETIONS;
  const whole = (s: string | undefined) => s !== undefined && /^\d+$/.test(s.trim());
  if (!whole(index) || !whole(completions) || Number(completions) < 1 || Number(index) >= Number(completions)) {
    throw new VncuaError(
      'QUEUE_ERR_SHARD_ENV',
      `--shard-from-env needs JOB_COMPLETION_INDEX (0 <= i < completions) and JOB_COMPLETIONS (>= 1) as a Kubernetes Indexed Job sets them; got JOB_COMPLETION_INDEX=${index ?? '(unset)'} JOB_COMPLETIONS=${completions ?? '(unset)'}.`,
      { details: { index: index ?? null, completions: completions ?? null } },
    );
  }
  return `${Number(index) + 1}/${Number(completions)}`;
}

/** Load a suite's agent as `vncua eval` does: a built-in by name, else the module at the coordinator's path or, missing there, the spec from this directory. */
export async function loadSuiteAgent(spec: string, module: string | undefined): Promise<LoadedSuiteAgent> {
  if (Object.hasOwn(AGENTS, spec)) return { agent: await loadAgentModule(spec) };
  const file = module && existsSync(module) ? module : resolve(spec);
  if (!existsSync(file))
    throw new VncuaError(
      'QUEUE_ERR_MISMATCH',
      `the agent module ${spec} is not on this machine (looked at ${module ? `${module} and ` : ''}${resolve(spec)}): give this worker the same module.`,
      {
        details: { what: 'agent', file, ours: null },
      },
    );
  return { agent: await loadAgentModule(file), file };
}

/** Run `vncua worker ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  if (argv.includes('--shard-from-env')) {
    const rest = argv.filter((a) => a !== '--shard-from-env');
    try {
      if (rest.some((a) => a === '--shard' || a.startsWith('--shard='))) throw badArgs('--shard-from-env sets the shard: give no --shard.', '--shard');
      if (rest.some((a) => a === '--queue' || a.startsWith('--queue='))) throw badArgs('--shard-from-env runs without a queue: give no --queue.', '--queue');
      const shard = shardFromEnv(process.env);
      process.stderr.write(`vncua worker: shard ${shard} (JOB_COMPLETION_INDEX=${process.env.JOB_COMPLETION_INDEX}, JOB_COMPLETIONS=${process.env.JOB_COMPLETIONS})\n`);
      const evalCmd = await import('./eval.ts');
      return await evalCmd.run([...rest, '--shard', shard]);
    } catch (e) {
      return badInputExit('worker', e, new Set(['CLI_ERR_BAD_ARGS', 'QUEUE_ERR_SHARD_ENV']));
    }
  }
  const parsed = parseCommandArgs(WORKER_SPEC, () => parseWorkerArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const controller = new AbortController();
  const grace = (o.graceMs ?? DEFAULT_GRACE_MS) / 1000;
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.stderr.write(`vncua worker: ${sig} again, quitting now (its running jobs run again elsewhere after the stall timeout)\n`);
      process.exit(130);
    }
    process.stderr.write(`vncua worker: ${sig}, stopping: no new job; running ones get ${grace}s to finish, then go back to the queue (again to quit at once)\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const summary = await runWorker({
      url: parseQueueUrl(o.queue),
      concurrency: o.concurrency,
      provider: o.provider,
      ...(o.pool ? { pool: o.pool } : {}),
      ...(o.tasks ? { tasksFile: o.tasks } : {}),
      ...(o.stallTimeoutMs ? { stallTimeoutMs: o.stallTimeoutMs } : {}),
      ...(o.graceMs ? { graceMs: o.graceMs } : {}),
      ...(o.name ? { name: o.name } : {}),
      loadAgent: loadSuiteAgent,
      // LLM judges (--judge of the coordinator's command) priced with byom/pricing.ts's table, as vncua eval does.
      judgePrice,
      // A worker that does not see the results root uploads to the coordinator's receiver, when the manifest names one.
      // Checked once: a refused TLS certificate stops this worker with one line (QUEUE_ERR_TLS); no answer is waited out by the uploads.
      uploadSink: async (m) => {
        if (!m.results.upload) return undefined;
        const sink = uploadSink({ url: m.results.upload.url, token: m.results.upload.token, signal: controller.signal });
        try {
          await sink.check();
        } catch (e) {
          sink.close();
          throw e;
        }
        return sink;
      },
      signal: controller.signal,
      log: (line) => process.stdout.write(`vncua worker: ${line}\n`),
    });
    process.stdout.write(
      `vncua worker: stopped: ${summary.attempts} attempt${summary.attempts === 1 ? '' : 's'}, ${summary.committed} run${summary.committed === 1 ? '' : 's'} committed, ${summary.returned} returned to the queue\n`,
    );
    return 0;
  } catch (e) {
    return badInputExit(
      'worker',
      e,
      new Set([...QUEUE_INPUT_ERROR_CODES, ...OUTPUT_ERROR_CODES, 'CLI_ERR_BAD_AGENT', 'EVAL_ERR_BAD_TASKS', 'EVAL_ERR_BAD_OPTIONS', 'SECRET_ERR_FILE']),
    );
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}
