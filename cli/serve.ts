/**
 * `vncua serve [ROOT]`: the web app that lists the runs under ROOT with their scores and shows one run's
 * recording frame by frame beside its steps (viewer/), and the runs still running live (viewer/live/). Serves until Ctrl-C.
 */
import { isVncuaError } from '../harness/errors.ts';
import { startViewerServer } from '../viewer/server.ts';
import { badArgs, parseCommandArgs, parseCommandLine, wholeNumber, type CommandSpec } from './command.ts';

/** `vncua serve`'s options: the --help is generated from them. */
export const SERVE_SPEC = {
  command: 'serve',
  positional: { name: 'ROOT', description: 'the --out directory of vncua eval, or any directory above runs (default: the current directory)' },
  options: {
    port: { type: 'string', value: 'PORT', description: 'port to listen on (default: one the OS chooses)' },
    host: {
      type: 'string',
      value: 'ADDR',
      default: '127.0.0.1',
      description: 'address to listen on; any other than 127.0.0.1 / ::1 / localhost requires a random token in the URL (printed)',
    },
  },
  notes: `prints the URL, then serves until Ctrl-C; writes nothing under ROOT but each opened run's .vncua-viewer/ (its seek index)
runs that are running (a live.json whose process is alive) are shown live: their desktop, steps, takeover; a live
problem is one line on stderr: SERVE_ERR_LIVE_UNREACHABLE, LIVE_ERR_TAKEN, or a run asking for help
exit code: 0 after Ctrl-C, 1 when it cannot listen (SERVE_ERR_PORT_IN_USE, SERVE_ERR_LISTEN) or ROOT is no directory (SERVE_ERR_ROOT), 2 on bad arguments
`,
} as const satisfies CommandSpec;

/** What `vncua serve` was asked to do. */
export interface ServeCommandOptions {
  root: string;
  port: number | undefined;
  host: string;
}

/** Parse `vncua serve` arguments; undefined for --help. ROOT defaults to the current directory. */
export function parseServeArgs(argv: string[]): ServeCommandOptions | undefined {
  let line: ReturnType<typeof parseCommandLine<typeof SERVE_SPEC.options>>;
  try {
    line = parseCommandLine(SERVE_SPEC, argv);
  } catch (e) {
    if (!(isVncuaError(e, 'CLI_ERR_BAD_ARGS') && (e.details as { argument?: string } | undefined)?.argument === 'ROOT' && /is required/.test(e.message))) throw e;
    line = parseCommandLine(SERVE_SPEC, [...argv, '--', '.']);
  }
  if (line === undefined) return undefined;
  const v = line.values;
  if (v.host.trim() === '') throw badArgs('--host must be an address.', '--host');
  return { root: line.positional, port: v.port === undefined ? undefined : wholeNumber(v.port, '--port', 1, 65535), host: v.host };
}

/** Run `vncua serve`; resolves to the exit code (after SIGINT / SIGTERM). */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(SERVE_SPEC, () => parseServeArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const server = await startViewerServer({
    root: o.root,
    host: o.host,
    ...(o.port === undefined ? {} : { port: o.port }),
    log: (line) => process.stderr.write(`vncua serve: ${line}\n`),
  });
  const list = await server.catalog.list().catch(() => null);
  if (list?.empty) process.stderr.write(`vncua serve: ${list.empty.code}: ${list.empty.message}\n`);
  else if (list) process.stdout.write(`${list.total} run${list.total === 1 ? '' : 's'} under ${list.root}\n`);
  process.stdout.write(`vncua serve: ${server.url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
