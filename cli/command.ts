/**
 * What the vncua subcommands share: CLI_ERR_BAD_ARGS, the option tables every command parses its
 * arguments with (node:util parseArgs, strict) and generates its --help from, the --help / bad-argument
 * exits (usage on stdout and 0; the error and the usage on stderr and 2), and Ctrl-C / SIGTERM handling.
 */
import { parseArgs } from 'node:util';
import { VncuaError, isVncuaError } from '../harness/errors.ts';

/** CLI_ERR_BAD_ARGS naming the bad argument. */
export function badArgs(message: string, argument?: string): VncuaError {
  return new VncuaError('CLI_ERR_BAD_ARGS', message, { details: { argument } });
}

/** One `--name` of a command: what parseArgs is told, and the line of the command's --help. */
export interface OptionSpec {
  /** `string` takes a value (`--name VALUE` or `--name=VALUE`); `boolean` takes none. */
  type: 'string' | 'boolean';
  /** Repeatable; its values come as an array, in order (none: []). */
  multiple?: boolean;
  /** The value's placeholder in the help (string options): FILE, WxH, N... */
  value?: string;
  /** One line for the help. */
  description: string;
  /** The value when the flag is absent (single string options), shown in the help. */
  default?: string;
  /** Its absence is CLI_ERR_BAD_ARGS: `--name VALUE is required (HINT).` */
  required?: string;
}

/** A command's options by name (without the leading --), in the order the help lists them. */
export type OptionTable = Readonly<Record<string, OptionSpec>>;

/** The options `vncua run` and `vncua eval` share: what reaches the agent (its script, the success grace window). */
export const AGENT_RUN_OPTIONS = {
  script: { type: 'string', value: 'FILE', description: "the scripted agent's actions (ctx.script)" },
  'success-grace-ms': {
    type: 'string',
    value: 'MS',
    description: 're-check success this long after each action while the screen settles (default 1000; 0: only right after each action and at the end)',
  },
  'no-live': {
    type: 'boolean',
    description: "do not serve the run live (no live.json: vncua serve cannot show it as it runs, nobody can take over); the Agent's live: false",
  },
  'max-cost': {
    type: 'string',
    value: 'USD',
    description: "cost cap of each run: once its model calls cost this much, the run stops before the next call with status cost_cap (the Agent's maxCostUsd; needs priced models)",
  },
  'needs-human': {
    type: 'string',
    value: 'end|ask',
    description: "what an agent's finish({ status: 'needs_human' }) does: end the run (default), or ask for help in the live view and go on after a person hands back",
  },
  'allowed-domains': {
    type: 'string',
    multiple: true,
    value: 'PATTERNS',
    description:
      "the navigation guard: hosts the browser may reach, comma-separated (example.com,*.example.com,https://x.org:8443,file:); the start page is always allowed; a task's own list narrows it (default: everything not blocked)",
  },
  'blocked-domains': {
    type: 'string',
    multiple: true,
    value: 'PATTERNS',
    description: "hosts the browser must never reach (same patterns; blocked always wins; united with a task's own list)",
  },
  'secrets-file': {
    type: 'string',
    value: 'FILE',
    description:
      'a .json or dotenv file the variables named by auth bindings and secrets (…Env, { "env": NAME }) are looked up in before the environment; its values never reach a file (with vncua eval --queue only the absolute path travels: each worker reads its own copy there)',
  },
} as const satisfies OptionTable;

/** A positive amount of USD given as `flag` (CLI_ERR_BAD_ARGS otherwise). */
export function positiveUsd(v: string, flag: string): number {
  const n = /^\s*\d+(\.\d+)?\s*$|^\s*\.\d+\s*$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0) throw badArgs(`${flag}: expected a positive amount of USD (e.g. 0.50); got ${JSON.stringify(v)}.`, flag);
  return n;
}

/** What `vncua run` and `vncua eval` do with the arguments after `--`. */
export const AGENT_REST = "passed to the agent's builder as ctx.args (a model adapter's options, e.g. -- --model X)";

/** A command's arguments: its options, a positional one, what goes after --, and the help's other lines. */
export interface CommandSpec<T extends OptionTable = OptionTable> {
  /** As in `vncua COMMAND: CODE: message` (e.g. "desktop up"). */
  command: string;
  options: T;
  /** The one positional argument the command requires (e.g. RUN). */
  positional?: { name: string; description: string };
  /** What the arguments after `--` are for (they go through untouched); absent: none are accepted. */
  rest?: string;
  /** Lines after the options (behaviours, exit codes). */
  notes?: string;
  /** Options refused with an error of their own, before anything else (a password on the command line). */
  refused?: Readonly<Record<string, () => VncuaError>>;
}

type OptionValue<S extends OptionSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['multiple'] extends true
    ? string[]
    : S extends { default: string } | { required: string }
      ? string
      : string | undefined;

/** The parsed options of a table: booleans false when absent, repeatable options [] when absent. */
export type OptionValues<T extends OptionTable> = { -readonly [K in keyof T]: OptionValue<T[K]> };

/** A parsed command line. */
export interface CommandLine<T extends OptionTable> {
  values: OptionValues<T>;
  /** The positional argument (when the spec has one). */
  positional: string;
  /** The arguments after `--` (when the spec takes them), untouched. */
  rest: string[];
}

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** The parseArgs options of a table (with -h/--help). */
function parseArgsOptions(options: OptionTable) {
  const out: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = { ...HELP };
  for (const [name, o] of Object.entries(options)) out[name] = { type: o.type, multiple: o.multiple === true };
  return out;
}

/** What parseArgs's tokens option gives. */
type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number];

/** Whether `v` reads as a flag rather than a value (what parseArgs's strict mode calls ambiguous). */
const looksLikeFlag = (v: string) => v.length > 1 && v.startsWith('-');

/**
 * Parse `argv` by `spec` with node:util parseArgs in strict mode: `--name VALUE` and `--name=VALUE`,
 * repeatable options, `--` ending the options. Undefined for -h/--help; CLI_ERR_BAD_ARGS naming the
 * argument for an unknown flag, a missing value, a value given to a flag that takes none, a missing
 * required option or positional argument, or one too many.
 */
export function parseCommandLine<const T extends OptionTable>(spec: CommandSpec<T>, argv: readonly string[]): CommandLine<T> | undefined {
  const options = parseArgsOptions(spec.options);
  // A lenient pass first: refused flags and --help come before any other complaint.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const end = tokens.find((t) => t.kind === 'option-terminator')?.index ?? argv.length;
  for (const t of tokens) {
    if (t.kind === 'option' && spec.refused && Object.hasOwn(spec.refused, t.name)) throw spec.refused[t.name]!();
  }
  if (tokens.some((t) => t.kind === 'option' && t.name === 'help')) return undefined;
  let parsed: { values: Record<string, string | boolean | Array<string | boolean> | undefined> };
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (e) {
    if (!String((e as NodeJS.ErrnoException).code).startsWith('ERR_PARSE_ARGS_')) throw e;
    throw strictError(spec.options, tokens, e as Error);
  }
  const values: Record<string, unknown> = {};
  for (const [name, o] of Object.entries(spec.options)) {
    const v = parsed.values[name];
    if (v === undefined) {
      if (o.required !== undefined) throw badArgs(`--${name}${o.value ? ` ${o.value}` : ''} is required (${o.required}).`, `--${name}`);
      values[name] = o.type === 'boolean' ? false : o.multiple ? [] : o.default;
    } else values[name] = v;
  }
  // Positionals before `--` are the command's own; those after it, its rest (or its positional when it takes no rest).
  const before = tokens.filter((t) => t.kind === 'positional' && t.index < end).map((t) => (t as { value: string }).value);
  const after = argv.slice(end + 1);
  const positionals = spec.rest === undefined ? [...before, ...after] : before;
  let positional = '';
  if (spec.positional) {
    const { name, description } = spec.positional;
    if (positionals.length === 0) throw badArgs(`${name} is required: ${description}.`, name);
    if (positionals.length > 1) throw badArgs(`only one ${name} is accepted; got "${positionals[0]}" and "${positionals[1]}".`, positionals[1]);
    positional = positionals[0]!;
  } else if (positionals.length > 0) {
    throw badArgs(`unknown argument "${positionals[0]}".`, positionals[0]);
  }
  return { values: values as OptionValues<T>, positional, rest: spec.rest === undefined ? [] : after };
}

/** CLI_ERR_BAD_ARGS naming the argument parseArgs's strict mode refused (found in the lenient pass's tokens). */
function strictError(table: OptionTable, tokens: Token[], e: Error): VncuaError {
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const o = t.name === 'help' ? HELP.help : table[t.name];
    const raw = t.rawName;
    if (o === undefined) return badArgs(`unknown argument "${raw}".`, raw);
    if (o.type === 'boolean' && t.value !== undefined) return badArgs(`${raw} takes no value.`, raw);
    if (o.type === 'string' && t.value === undefined) return badArgs(`${raw} needs a value.`, raw);
    if (o.type === 'string' && !t.inlineValue && looksLikeFlag(t.value!)) {
      return badArgs(`${raw} needs a value; "${t.value}" reads as a flag (a value that starts with "-" goes as ${raw}=VALUE).`, raw);
    }
  }
  return badArgs(e.message.split('\n', 1)[0]!);
}

/** `words` in lines of at most `width` columns (a longer word gets a line of its own): the first after `first`, the others after `indent`. */
function wrap(words: string[], first: string, indent: string, width = 100): string {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const w of words) {
    if (!empty && line.length - line.lastIndexOf('\n') + w.length > width) {
      lines.push(line);
      line = `${indent}${w}`;
    } else line = empty ? `${line}${w}` : `${line} ${w}`;
    empty = false;
  }
  lines.push(line);
  return lines.join('\n');
}

/**
 * A command's --help, from its spec: the synopsis (required options bare, the others in brackets,
 * repeatable ones with ...), one line per option with its default, the arguments after --, the notes.
 */
export function usageText(spec: CommandSpec): string {
  const entries = Object.entries(spec.options);
  const flag = (name: string, o: OptionSpec) => `--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}${o.multiple ? ' ...' : ''}`;
  const synopsis = [
    ...(spec.positional ? [spec.positional.name] : []),
    ...entries.map(([name, o]) => (o.required !== undefined ? flag(name, o) : `[${flag(name, o)}]`)),
    ...(spec.rest !== undefined ? ['[-- ARGS...]'] : []),
  ];
  const rows: Array<[string, string]> = [
    ...(spec.positional ? [[spec.positional.name, spec.positional.description] as [string, string]] : []),
    ...entries.map(([name, o]): [string, string] => [flag(name, o), `${o.description}${o.default !== undefined ? ` (default ${o.default})` : ''}`]),
    ...(spec.rest !== undefined ? [['-- ARGS...', spec.rest] as [string, string]] : []),
  ];
  const col = Math.min(24, Math.max(0, ...rows.map(([f]) => f.length)) + 2);
  const indent = ' '.repeat(col + 2);
  const lines = rows.map(([f, d]) => wrap(d.split(' '), f.length + 2 > col ? `  ${f}\n${indent}` : `  ${f.padEnd(col)}`, indent));
  const head = `usage: vncua ${spec.command} `;
  const values = entries.some(([, o]) => o.type === 'string') ? '  a value goes as --flag VALUE or --flag=VALUE' : '';
  return `${wrap(synopsis, head, ' '.repeat(head.length)).trimEnd()}\n${[...lines, ...(values ? [values] : [])].map((l) => `${l}\n`).join('')}${spec.notes ?? ''}`;
}

/** `v` as a whole number from `min` to `max`; CLI_ERR_BAD_ARGS naming the flag otherwise. */
export function wholeNumber(v: string, flag: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) {
    throw badArgs(`${flag} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}; got "${v}".`, flag);
  }
  return n;
}

/** `v` as a whole number (see wholeNumber), or undefined when the flag was not given. */
export function optionalWholeNumber(v: string | undefined, flag: string, min: number, max?: number): number | undefined {
  return v === undefined ? undefined : wholeNumber(v, flag, min, max);
}

/** `v` checked by `parse` (which throws with a message on a bad one), or CLI_ERR_BAD_ARGS `FLAG: message`. */
export function parsedValue<R>(v: string, flag: string, parse: (v: string) => R): R {
  try {
    return parse(v);
  } catch (e) {
    throw badArgs(`${flag}: ${(e as Error).message}`, flag);
  }
}

/** `v` when it is one of `choices`; CLI_ERR_BAD_ARGS `--FLAG must be a, b or c; got "v".` otherwise. */
export function oneOf<const C extends string>(v: string, flag: string, choices: readonly C[]): C {
  if ((choices as readonly string[]).includes(v)) return v as C;
  const list = choices.length > 1 ? `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}` : choices.join('');
  throw badArgs(`${flag} must be ${list}; got "${v}".`, flag);
}

/** Codes of bad input found while parsing arguments: exit code 2. */
const BAD_INPUT_CODES = new Set(['CLI_ERR_BAD_ARGS', 'DESKTOP_ERR_BAD_PASSWORD', 'JUDGE_ERR_BAD_SPEC', 'QUEUE_ERR_BAD_RATE_LIMIT']);

/**
 * Parse a command's arguments: the options, or the exit code to return after printing the usage
 * (0 for --help, when `parse` returns undefined; 2 with the error for CLI_ERR_BAD_ARGS and
 * DESKTOP_ERR_BAD_PASSWORD, a password that is empty, unreadable or given on the command line).
 */
export function parseCommandArgs<T>(spec: CommandSpec | { command: string; usage: string }, parse: () => T | undefined): { options: T } | { exitCode: number } {
  const usage = 'usage' in spec ? spec.usage : usageText(spec);
  const command = spec.command;
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
  const [first, ...rest] = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
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
