/**
 * `vncua export-trace --format uitask RUN`: write a run's trace in the Python uitask harness's
 * execution.json shape (harness/trace/uitask.ts), so uitask's own tools read it; a person's actions
 * from a takeover (actor "human") are left out unless --include-human. The output goes
 * beside the trace as uitask_execution.json unless --out; execution.json is never replaced, and an
 * existing output only with --overwrite. Bad input (no trace, a trace that is neither vncua's nor
 * uitask's, an entry uitask cannot express, an existing output) is one line `vncua export-trace:
 * CODE: message` and exit 2, with nothing written.
 */
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isVncuaError, VncuaError } from '../harness/errors.ts';
import { writeFileAtomic } from '../harness/trace/atomic.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { exportUitaskTrace } from '../harness/trace/uitask.ts';
import { TRACE_FILES } from '../harness/trace/writer.ts';
import { badArgs, parseCommandArgs, parseCommandLine, type CommandSpec } from './command.ts';

/** The formats export-trace writes. */
export const EXPORT_FORMATS = ['uitask'] as const;

/** Default output file name, beside the trace. */
export const UITASK_EXPORT_FILE = 'uitask_execution.json';

/** `vncua export-trace`'s options: the --help is generated from them. */
export const EXPORT_TRACE_SPEC = {
  command: 'export-trace',
  positional: { name: 'RUN', description: 'a run directory (its execution.json, else partial_execution.json) or a trace file' },
  options: {
    format: {
      type: 'string',
      value: 'uitask',
      required: 'the only format: --format uitask',
      description: 'write the trace as the Python uitask harness writes execution.json (the only format)',
    },
    out: { type: 'string', value: 'FILE', description: `where to write (default: ${UITASK_EXPORT_FILE} beside the trace; never the run's own trace files)` },
    overwrite: { type: 'boolean', description: 'replace FILE if it exists' },
    'skip-unsupported': { type: 'boolean', description: 'leave out entries uitask cannot express (a middle-button click or drag) instead of failing' },
    'include-human': {
      type: 'boolean',
      description: 'keep the actions a person made during a takeover (actor "human"; left out by default: uitask has no actor)',
    },
  },
  notes: `exit code: 0 when written; 2 on bad arguments or bad input (no trace, a trace that is neither vncua's nor
uitask's, an entry uitask cannot express, FILE exists), with nothing written; 1 when writing failed
`,
} as const satisfies CommandSpec;

/** What `vncua export-trace` was asked to do. */
export interface ExportTraceOptions {
  format: (typeof EXPORT_FORMATS)[number];
  run: string;
  out?: string;
  overwrite: boolean;
  skipUnsupported: boolean;
  /** Keep a person's entries (actor "human"). */
  includeHuman: boolean;
}

/** Parse `vncua export-trace` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseExportTraceArgs(argv: string[]): ExportTraceOptions | undefined {
  const line = parseCommandLine(EXPORT_TRACE_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  if (!(EXPORT_FORMATS as readonly string[]).includes(v.format)) throw badArgs(`--format must be one of ${EXPORT_FORMATS.join(', ')}; got "${v.format}".`, '--format');
  const o: ExportTraceOptions = {
    format: v.format as ExportTraceOptions['format'],
    run: line.positional,
    overwrite: v.overwrite,
    skipUnsupported: v['skip-unsupported'],
    includeHuman: v['include-human'],
  };
  if (v.out !== undefined) o.out = v.out;
  return o;
}

/** Codes that mean bad input: exit 2, nothing written. */
const BAD_INPUT = new Set(['TRACE_ERR_NOT_FOUND', 'TRACE_ERR_INVALID', 'TRACE_ERR_EXPORT', 'TRACE_ERR_EXISTS']);

/** Where the export goes; TRACE_ERR_EXISTS when that would replace a trace file of the run or (without overwrite) any file. */
async function outputPath(o: ExportTraceOptions, tracePath: string): Promise<string> {
  const runDir = dirname(resolve(tracePath));
  const out = resolve(o.out ?? join(runDir, UITASK_EXPORT_FILE));
  const own = [TRACE_FILES.execution, TRACE_FILES.partial, TRACE_FILES.result].map((n) => join(runDir, n));
  if (out === resolve(tracePath) || own.includes(out)) {
    throw new VncuaError(
      'TRACE_ERR_EXISTS',
      `--out ${out} is a trace file of the run being exported; write the export elsewhere (default: ${UITASK_EXPORT_FILE} beside the trace).`,
      {
        details: { path: out },
      },
    );
  }
  if (!o.overwrite && (await stat(out).catch(() => null)) !== null) {
    throw new VncuaError('TRACE_ERR_EXISTS', `${out} already exists; pass --overwrite to replace it, or --out another file.`, { details: { path: out } });
  }
  return out;
}

/** Run `vncua export-trace ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(EXPORT_TRACE_SPEC, () => parseExportTraceArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  try {
    const trace = await readTrace(o.run);
    const out = await outputPath(o, trace.path);
    const ex = exportUitaskTrace(trace.entries, { skipUnsupported: o.skipUnsupported, includeHuman: o.includeHuman, file: trace.path });
    await mkdir(dirname(out), { recursive: true }).catch(() => undefined); // a failure shows as TRACE_ERR_WRITE below
    await writeFileAtomic(out, ex.text);
    for (const l of ex.leftOut) {
      if (l.human && l.field === 'actor') continue; // counted below
      const why = l.failed ? 'a failed attempt uitask could not have recorded' : 'uitask cannot express it';
      process.stderr.write(`vncua export-trace: left out entry ${l.index} (${l.action}, ${why}): ${l.field}: ${l.problem}\n`);
    }
    const human = ex.leftOut.filter((l) => l.human && l.field === 'actor').length;
    const from = `${basename(trace.path)}, ${trace.source}${trace.partial ? ', partial' : ''}`;
    const notes = [
      ex.failedWritten > 0
        ? `${ex.failedWritten} failed attempt${ex.failedWritten === 1 ? ' written without its error, as uitask records one' : 's written without their error, as uitask records them'}`
        : '',
      human > 0 ? `${human} entr${human === 1 ? 'y' : 'ies'} of a person (a takeover) left out; --include-human keeps them` : '',
      ex.leftOut.length > human ? `${ex.leftOut.length - human} left out` : '',
    ].filter(Boolean);
    process.stdout.write(
      `wrote ${out}: ${ex.entries.length} entr${ex.entries.length === 1 ? 'y' : 'ies'} in uitask's execution.json shape (from ${from})${notes.length ? `; ${notes.join('; ')}` : ''}\n`,
    );
    return 0;
  } catch (e) {
    if (isVncuaError(e) && BAD_INPUT.has(e.code)) {
      process.stderr.write(`vncua export-trace: ${e.code}: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}
