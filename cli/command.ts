/**
 * What the vncua subcommands share: CLI_ERR_BAD_ARGS, reading a flag's value, the --help / bad-argument
 * exits (usage on stdout and 0; the error and the usage on stderr and 2), and Ctrl-C / SIGTERM handling.
 */
import { VncuaError, isVncuaError } from '../harness/errors.ts';

/** CLI_ERR_BAD_ARGS naming the bad argument. */
export function badArgs(message: string, argument?: string): VncuaError {
  return new VncuaError('CLI_ERR_BAD_ARGS', message, { details: { argument } });
}

/** The value after the flag at argv[i]; CLI_ERR_BAD_ARGS when it is missing or is another flag. */
export function flagValue(argv: readonly string[], i: number, flag: string): string {
  const v = argv[i + 1];
  if (v === undefined || (v.startsWith('--') && v.length > 2)) throw badArgs(`${flag} needs a value.`, flag);
  return v;
}

/** `v` as a whole number from `min` to `max`; CLI_ERR_BAD_ARGS naming the flag otherwise. */
export function wholeNumber(v: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) {
    throw badArgs(`${flag} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}; got "${v}".`, flag);
  }
  return n;
}

/** Codes of bad input found while parsing arguments: exit code 2. */
const BAD_INPUT_CODES = new Set(['CLI_ERR_BAD_ARGS', 'DESKTOP_ERR_BAD_PASSWORD']);

/**
 * Parse a command's arguments: the options, or the exit code to return after printing the usage
 * (0 for --help, when `parse` returns undefined; 2 with the error for CLI_ERR_BAD_ARGS and
 * DESKTOP_ERR_BAD_PASSWORD, a password that is empty, unreadable or given on the command line).
 */
export function parseCommandArgs<T>(command: string, usage: string, parse: () => T | undefined): { options: T } | { exitCode: number } {
  let options: T | undefined;
  try {
    options = parse();
  } catch (e) {
    if (!isVncuaError(e) || !BAD_INPUT_CODES.has(e.code)) throw e;
    process.stderr.write(`vncua ${command}: ${e.code}: ${e.message}\n${usage}`);
    return { exitCode: 2 };
  }
  if (options === undefined) {
    process.stdout.write(usage);
    return { exitCode: 0 };
  }
  return { options };
}

/**
 * Bad input found after parsing (an --out that cannot be used, a task file that selects nothing, …):
 * when `e` is a VncuaError with one of `codes`, print `vncua COMMAND: CODE: message` on one line on
 * stderr and resolve to exit code 2; anything else is rethrown.
 */
export function badInputExit(command: string, e: unknown, codes: ReadonlySet<string>): number {
  if (!(e instanceof VncuaError) || !codes.has(e.code)) throw e;
  process.stderr.write(`vncua ${command}: ${e.code}: ${oneLine(e.message)}\n`);
  return 2;
}

/** A message on one line: the lines after the first (e.g. one per bad task entry) joined with "; ". */
export function oneLine(message: string): string {
  const [first, ...rest] = message.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  return rest.length === 0 ? (first ?? '') : `${first} ${rest.join('; ')}`;
}

/** The codes of an --out that cannot be used or holds a run (exit 2). */
export const OUTPUT_ERROR_CODES: ReadonlySet<string> = new Set(['OUTPUT_ERR_NOT_A_DIRECTORY', 'OUTPUT_ERR_NOT_WRITABLE', 'OUTPUT_ERR_PSEUDO_FS', 'OUTPUT_ERR_RUN_EXISTS']);

/** A signal that SIGINT / SIGTERM abort (with AGENT_ERR_CANCELLED); `dispose()` removes the handlers. */
export interface CancelOnSignals {
  signal: AbortSignal;
  dispose(): void;
}

/**
 * Turn the first SIGINT / SIGTERM into an abort of the returned signal, after printing
 * "vncua COMMAND: SIGINT, WHAT (again to quit at once)"; a second one exits at once with 130
 * (child processes such as desktops die with this process).
 */
export function cancelOnSignals(command: string, what: string): CancelOnSignals {
  const controller = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.stderr.write(`vncua ${command}: ${sig} again, quitting now\n`);
      process.exit(130);
    }
    process.stderr.write(`vncua ${command}: ${sig}, ${what} (again to quit at once)\n`);
    controller.abort(new VncuaError('AGENT_ERR_CANCELLED', `vncua ${command} was cancelled (${sig}).`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}
