/**
 * `--serve [PORT]` of `vncua eval` and `vncua run`: the viewer (`vncua serve`, viewer/server.ts) started in the
 * same process over the results root while the command runs, its URL printed by the rules of `vncua serve`
 * (127.0.0.1 and an OS-chosen port by default; `--serve-host` elsewhere, then with a token in the URL).
 */
import { mkdir } from 'node:fs/promises';
import { startViewerServer, type ViewerServer } from '../viewer/server.ts';
import { badArgs, type OptionTable, wholeNumber } from './command.ts';

/** The options `vncua eval` and `vncua run` share for the in-process viewer. */
export const SERVE_OPTIONS = {
  serve: {
    type: 'string',
    value: '[PORT]',
    description: 'while it runs, serve the live view and the results at a URL it prints (vncua serve in this process; PORT default: one the OS chooses)',
  },
  'serve-host': {
    type: 'string',
    value: 'ADDR',
    description: "the --serve viewer's address (default 127.0.0.1); any other requires the random token in the printed URL",
  },
} as const satisfies OptionTable;

/** The codes of a --serve viewer that cannot start (exit 2, before anything runs). */
export const SERVE_START_ERROR_CODES: ReadonlySet<string> = new Set(['SERVE_ERR_PORT_IN_USE', 'SERVE_ERR_LISTEN']);

/** What --serve / --serve-host ask for. */
export interface ServeRequest {
  /** 0: an OS-chosen port. */
  port: number;
  host?: string;
}

/**
 * `argv` with a bare `--serve` (followed by nothing, `--` or another flag) given its empty value, so that
 * node:util parseArgs, which has no optional values, reads `--serve` and `--serve PORT` alike.
 */
export function withServeValue(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return [...out, ...argv.slice(i)];
    const next = argv[i + 1];
    if (a === '--serve' && (next === undefined || next === '--' || next.startsWith('-'))) out.push('--serve=');
    else out.push(a);
  }
  return out;
}

/** The --serve request of parsed values (undefined without --serve); CLI_ERR_BAD_ARGS on a bad port or a lone --serve-host. */
export function serveRequest(serve: string | undefined, host: string | undefined): ServeRequest | undefined {
  if (serve === undefined) {
    if (host !== undefined) throw badArgs('--serve-host goes with --serve.', '--serve-host');
    return undefined;
  }
  const port = serve === '' ? 0 : wholeNumber(serve, '--serve', 1, 65535);
  if (host !== undefined && host.trim() === '') throw badArgs('--serve-host must be an address.', '--serve-host');
  return host === undefined ? { port } : { port, host };
}

/**
 * Start the viewer over `root` (created when missing) for `vncua COMMAND --serve`: its live problems are printed on
 * stderr as `vncua COMMAND: CODE: ...`, its URL (with `path`, e.g. `?run=.`) on `out`. Rejects with
 * SERVE_ERR_PORT_IN_USE / SERVE_ERR_LISTEN when it cannot listen.
 */
export async function startCommandViewer(
  command: string,
  root: string,
  req: ServeRequest,
  io: { out: NodeJS.WritableStream; err: NodeJS.WritableStream; path?: string },
): Promise<ViewerServer> {
  await mkdir(root, { recursive: true });
  const server = await startViewerServer({
    root,
    ...(req.host !== undefined ? { host: req.host } : {}),
    ...(req.port !== 0 ? { port: req.port } : {}),
    log: (line) => io.err.write(`vncua ${command}: ${line}\n`),
  });
  io.out.write(`${command}: live view and results at ${server.url}${io.path ?? ''} (until this command ends; later: vncua serve ${root})\n`);
  return server;
}
