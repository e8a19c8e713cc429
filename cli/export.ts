/**
 * `vncua export ROOT --format jsonl`: every step of every run under ROOT as one JSON line, with the
 * before/after screenshots as PNG files beside it, for training (eval/export.ts; the line's format:
 * schemas/export-line.schema.json and schemas/EXPORT.md). Nothing under ROOT is modified.
 */
import { availableParallelism } from 'node:os';
import { parseScreenSize } from '../harness/desktop/size.ts';
import { exportRoot, type ExportOptions } from '../eval/export.ts';
import { badArgs, badInputExit, cancelOnSignals, parseCommandArgs, parseCommandLine, parsedValue, wholeNumber, type CommandSpec } from './command.ts';

/** The formats vncua export writes. */
export const EXPORT_LINE_FORMATS = ['jsonl'] as const;

/** `vncua export`'s options: the --help is generated from them. */
export const EXPORT_SPEC = {
  command: 'export',
  positional: { name: 'ROOT', description: 'the --out directory of vncua eval, or any directory above run directories (only read)' },
  options: {
    format: { type: 'string', value: 'jsonl', required: 'the only format: --format jsonl', description: 'one JSON line per step (schemas/export-line.schema.json)' },
    out: {
      type: 'string',
      value: 'FILE|DIR',
      description: 'a new or empty DIR (steps.jsonl, images/, export.json), or FILE.jsonl (FILE.images/ and FILE.export.json beside it); default ROOT-export/ beside ROOT',
    },
    successful: { type: 'boolean', description: 'only runs that succeeded' },
    agent: { type: 'string', multiple: true, value: 'A', description: 'only this agent (repeatable: any of them)' },
    group: { type: 'string', multiple: true, value: 'G', description: 'only this task group (repeatable)' },
    resolution: { type: 'string', multiple: true, value: 'WxH', description: 'only this resolution (repeatable)' },
    jobs: { type: 'string', value: 'N', default: '1', description: `worker processes rendering images from recordings (at most ${availableParallelism()} is useful here)` },
  },
  notes: `screenshots: copied from vncua process's output when a run has it, else rendered from its recording
(nothing is written under ROOT), else null with screenshot_reason
exit code: 0 when every selected run was exported; 1 when some runs were skipped (unreadable or damaged
           files, infra errors: listed on stderr and in export.json; the others are written) or writing
           failed; 2 on bad arguments or bad input (no runs, none passing the filters, an --out that
           exists and is not empty or lies inside ROOT), with nothing written
`,
} as const satisfies CommandSpec;

/** Parse `vncua export` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseExportArgs(argv: string[]): ExportOptions | undefined {
  const line = parseCommandLine(EXPORT_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  if (!(EXPORT_LINE_FORMATS as readonly string[]).includes(v.format)) throw badArgs(`--format must be jsonl; got "${v.format}".`, '--format');
  const resolutions = v.resolution.map((r) => {
    const s = parsedValue(r, '--resolution', parseScreenSize);
    return `${s.width}x${s.height}`;
  });
  const o: ExportOptions = { root: line.positional, successful: v.successful, agents: v.agent, groups: v.group, resolutions, jobs: wholeNumber(v.jobs, '--jobs', 1, 256) };
  if (v.out !== undefined) o.out = v.out;
  return o;
}

/** Bad input: exit 2, nothing written. */
const BAD_INPUT = new Set(['EXPORT_ERR_NO_RUNS', 'EXPORT_ERR_OUT_EXISTS', 'EXPORT_ERR_OUT_IN_ROOT']);

/** Run `vncua export ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(EXPORT_SPEC, () => parseExportArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const cancel = cancelOnSignals('export', 'stopping after the current run');
  try {
    const r = await exportRoot({
      ...parsed.options,
      signal: cancel.signal,
      onRun: (x) => {
        if (x.kind === 'skipped') process.stderr.write(`vncua export: EXPORT_ERR_RUN_SKIPPED: ${x.run_id}: ${x.code}: ${x.reason.split('\n')[0]}\n`);
        else if (x.screenshots === null) process.stdout.write(`${x.run_id}: ${x.steps} steps, no screenshots (${x.reason})\n`);
      },
    });
    const secs = r.durationMs / 1000;
    process.stdout.write(
      `wrote ${r.paths.jsonl}: ${r.lines} steps of ${r.exported.length} run${r.exported.length === 1 ? '' : 's'}, ${r.images} images in ${secs.toFixed(1)} s (${(r.lines / Math.max(secs, 1e-3)).toFixed(0)} steps/s)` +
        `${r.filteredOut ? `; ${r.filteredOut} filtered out` : ''}${r.skipped.length ? `; ${r.skipped.length} skipped (see ${r.paths.manifest})` : ''}\n`,
    );
    return r.skipped.length > 0 ? 1 : 0;
  } catch (e) {
    return badInputExit('export', e, BAD_INPUT);
  } finally {
    cancel.dispose();
  }
}
