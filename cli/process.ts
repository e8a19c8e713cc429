/**
 * `vncua process <root>`: post-process every run under <root> (a directory holding execution.json or
 * partial_execution.json and recording/): per-action before/after screenshots, action_screenshots.json,
 * the HTML step report, and with --video the session video. Runs already processed are skipped unless
 * --overwrite. One line per run; the exit code is non-zero if any run failed (the rest are processed).
 */
import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { isVncuaError } from '../harness/errors.ts';
import { badArgs, cancelOnSignals, parseCommandArgs, parseCommandLine, wholeNumber, type CommandSpec } from './command.ts';
import { DEFAULT_SETTLE_MS, processRoot, type RunOutcome } from '../recorder/process/index.ts';

/** `vncua process`'s options: the --help is generated from them. */
export const PROCESS_SPEC = {
  command: 'process',
  positional: { name: '<root>', description: 'a run directory, or any directory above runs (searched recursively)' },
  options: {
    overwrite: { type: 'boolean', description: 'regenerate outputs that already exist' },
    jobs: { type: 'string', value: 'N', default: '1', description: `worker processes (at most ${availableParallelism()} is useful here)` },
    'settle-ms': { type: 'string', value: 'MS', default: String(DEFAULT_SETTLE_MS), description: 'cap on how long after an action its "after" frame is taken' },
    video: { type: 'boolean', description: 'also write recording.mp4 (WebM without libx264) with click markers' },
  },
  notes: `exit code: 0 when every run was processed or skipped, 1 when one failed (or none was found), 2 on bad arguments
           or when every failure is a trace that is neither vncua's nor uitask's (TRACE_ERR_INVALID)
`,
} as const satisfies CommandSpec;

/** What `vncua process` was asked to do. */
export interface ProcessCommandOptions {
  root: string;
  overwrite: boolean;
  jobs: number;
  settleMs: number;
  video: boolean;
}

/** Parse `vncua process` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseProcessArgs(argv: string[]): ProcessCommandOptions | undefined {
  const line = parseCommandLine(PROCESS_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  const settle = v['settle-ms'];
  if (!/^\d+(\.\d+)?$/.test(settle) || Number(settle) > 60_000) throw badArgs(`--settle-ms must be a number of milliseconds from 0 to 60000; got "${settle}".`, '--settle-ms');
  return { root: line.positional, overwrite: v.overwrite, jobs: wholeNumber(v.jobs, '--jobs', 1, 256), settleMs: Number(settle), video: v.video };
}

/** The one line printed for a run. */
export function outcomeLine(o: RunOutcome, root: string): string {
  const name = relative(root, o.runDir) || '.';
  if (!o.ok) return `FAIL ${name}: ${o.error.code}: ${o.error.message}`;
  const r = o.result;
  const warn = r.warnings.length > 0 ? `, ${r.warnings.length} warning${r.warnings.length === 1 ? '' : 's'} (${[...new Set(r.warnings.map((w) => w.code))].join(', ')})` : '';
  const base =
    r.status === 'skipped'
      ? `skip ${name} (already processed; --overwrite to redo)`
      : `ok   ${name} (${r.actions} action${r.actions === 1 ? '' : 's'}, ${r.images} images, ${Math.round(r.durationMs)} ms${warn})`;
  return r.video ? `${base}\n     ${r.video}` : base;
}

/** Whether every failed run failed on a trace that is neither ours nor uitask's (bad input: exit 2). */
function onlyBadTraces(runs: readonly RunOutcome[]): boolean {
  return runs.every((x) => x.ok || x.error.code === 'TRACE_ERR_INVALID');
}

/** Run `vncua process ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(PROCESS_SPEC, () => parseProcessArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const cancel = cancelOnSignals('process', 'stopping after the runs in progress');
  const root = o.root;
  try {
    const t0 = performance.now();
    const r = await processRoot(root, {
      jobs: o.jobs,
      overwrite: o.overwrite,
      settleMs: o.settleMs,
      video: o.video,
      signal: cancel.signal,
      onOutcome: (x) => process.stdout.write(`${outcomeLine(x, root)}\n`),
    });
    const ok = r.runs.length - r.failed;
    process.stdout.write(`processed ${r.runs.length} run${r.runs.length === 1 ? '' : 's'} in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${ok} ok, ${r.failed} failed\n`);
    if (cancel.signal.aborted) return 1;
    return r.failed === 0 ? 0 : onlyBadTraces(r.runs) ? 2 : 1;
  } catch (e) {
    if (isVncuaError(e)) {
      process.stderr.write(`vncua process: ${e.code}: ${e.message}\n`);
      return 1;
    }
    throw e;
  } finally {
    cancel.dispose();
  }
}
