/**
 * `vncua run`: run an agent on a desktop and leave its trace in an output directory.
 *
 * The agent is a module (a .ts/.js path resolved from the cwd, or a built-in name such as
 * `scripted`) whose default export is an `Agent` subclass (constructed with
 * `{ task, outputDir, vncUrl, cdpUrl }`) or a builder `(ctx: AgentContext) => Agent | Promise<Agent>`.
 * The desktop is started locally (launchDesktop at --url; the agent's first act() comes once that
 * page is ready, harness/cdp/page-ready.ts) unless --vnc and --cdp name a running one. A page that
 * never becomes ready (refused, 404, blank...) ends the run with status error and PAGE_ERR_*, exit 1.
 * Ctrl-C cancels the run (status `cancelled`); the desktop is always torn down.
 */
import { existsSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import '../recorder/register.ts'; // runs record by default (the Agent's record option)
import { prepareAgentImport } from './agent-loader.ts';
import { AGENTS } from './agents.ts';
import { OUTPUT_ERROR_CODES, badArgs, badInputExit, cancelOnSignals, flagValue, parseCommandArgs, wholeNumber } from './command.ts';
import { Agent, DEFAULT_MAX_STEPS, type AgentContext, type AgentRunResult } from '../harness/agent/index.ts';
import { waitForPageReady } from '../harness/cdp/page-ready.ts';
import { MAX_SUCCESS_GRACE_MS } from '../harness/agent/options.ts';
import { SuccessChecker, checkCdpUrl } from '../harness/cdp/success.ts';
import { launchDesktop, type Desktop, type VncServerKind } from '../harness/desktop/index.ts';
import { readPassword, type PasswordSource } from '../harness/desktop/password.ts';
import { VncuaError } from '../harness/errors.ts';
import { parseVncUrl } from '../harness/rfb/transport.ts';
import { TRACE_FILES } from '../harness/trace/index.ts';
import { checkOutputDir, moveAside, runExistsError, runFiles } from '../harness/trace/out-dir.ts';

const USAGE = `usage: vncua run --agent MODULE [--task "..."] [--url URL] [--max-steps N] [--out DIR] [--overwrite]
                 [--vnc URL --cdp URL] [--password-file FILE | --password-env NAME]
                 [--size WxH] [--server xvnc|x11vnc] [--script FILE] [--success-grace-ms MS] [-- ARGS...]
  MODULE   a .ts/.js file whose default export is an Agent subclass or a builder (ctx) => Agent,
           or a built-in agent: ${Object.keys(AGENTS).join(', ')}
  --url    page the local desktop opens (default about:blank)
  --vnc/--cdp  use a running desktop instead of starting one (give both; its URLs with their token)
  --password-file FILE / --password-env NAME
           the VNC password (the file's first line, or the variable NAME; default: VNCUA_VNC_PASSWORD
           when set), for --vnc, or for the local desktop. Never on the command line.
  --out    output directory (default runs/<timestamp>-<agent>/); one that holds a run is refused
  --overwrite  move the run already in --out aside to DIR.1 (DIR.2, ...) instead; nothing is deleted
  --success-grace-ms  re-check success this long after each action while the screen settles
           (default 1000; 0: only the check right after each action and the final one)
  ARGS     after --: passed to the agent's builder as ctx.args
exit code: 0 when the run finished, 1 otherwise, 2 on bad arguments (a bad password too) or an unusable --out
`;

/** What `vncua run` was asked to do. */
export interface RunCommandOptions {
  agent: string;
  task?: string;
  url?: string;
  maxSteps?: number;
  out?: string;
  /** Move a run already in `out` aside (DIR.1, …) instead of refusing it. */
  overwrite?: boolean;
  vnc?: string;
  cdp?: string;
  size?: string;
  server?: VncServerKind;
  script?: string;
  /** --success-grace-ms: the Agent's successGraceMs. */
  successGraceMs?: number;
  args?: string[];
  /** The VNC password (of --vnc, or of the local desktop); read from a file or the environment, never argv. */
  password?: string;
  /** Cancel the run (the CLI wires Ctrl-C / SIGTERM to it). */
  signal?: AbortSignal;
  /** Called after the run, before the desktop is torn down (the demo takes its screenshot here). */
  afterRun?: (info: { vncUrl: string; cdpUrl: string; outputDir: string; result: AgentRunResult }) => Promise<void>;
}

/** What runAgentCommand() resolves to. */
export interface RunCommandResult {
  result: AgentRunResult;
  outputDir: string;
  tracePath: string;
  /** Where the run that was in the output directory went (--overwrite). */
  movedAside?: string;
}

/** Parse `vncua run` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseRunArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): RunCommandOptions | undefined {
  const o: Partial<RunCommandOptions> = {};
  const secret: PasswordSource = {};
  const take = (i: number, flag: string): string => flagValue(argv, i, flag);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '-h':
      case '--help':
        return undefined;
      case '--':
        o.args = argv.slice(i + 1);
        i = argv.length;
        break;
      case '--agent':
        o.agent = take(i++, a);
        break;
      case '--task':
        o.task = take(i++, a);
        break;
      case '--url':
        o.url = take(i++, a);
        break;
      case '--out':
        o.out = take(i++, a);
        break;
      case '--overwrite':
        o.overwrite = true;
        break;
      case '--vnc':
        o.vnc = take(i++, a);
        break;
      case '--cdp':
        o.cdp = take(i++, a);
        break;
      case '--size':
        o.size = take(i++, a);
        break;
      case '--script':
        o.script = take(i++, a);
        break;
      case '--password-file':
        secret.file = take(i++, a);
        break;
      case '--password-env':
        secret.env = take(i++, a);
        break;
      case '--password':
        throw new VncuaError('DESKTOP_ERR_BAD_PASSWORD', '--password is refused: `ps` would show the password to every user; use --password-file FILE or --password-env NAME (default VNCUA_VNC_PASSWORD).', {
          details: { argument: a },
        });
      case '--server': {
        const v = take(i++, a);
        if (v !== 'xvnc' && v !== 'x11vnc') throw badArgs(`--server must be xvnc or x11vnc; got "${v}".`, a);
        o.server = v;
        break;
      }
      case '--max-steps':
        o.maxSteps = wholeNumber(take(i++, a), a, 1);
        break;
      case '--success-grace-ms':
        o.successGraceMs = wholeNumber(take(i++, a), a, 0, MAX_SUCCESS_GRACE_MS);
        break;
      default:
        throw badArgs(`unknown argument "${a}".`, a);
    }
  }
  if (!o.agent) throw badArgs('--agent MODULE is required (a .ts/.js file, or a built-in agent name).', '--agent');
  if ((o.vnc === undefined) !== (o.cdp === undefined)) {
    throw badArgs(`--vnc and --cdp go together (the running desktop's VNC and CDP endpoints); only ${o.vnc !== undefined ? '--vnc' : '--cdp'} was given.`, o.vnc !== undefined ? '--cdp' : '--vnc');
  }
  if (o.vnc !== undefined && (o.url !== undefined || o.size !== undefined || o.server !== undefined)) {
    throw badArgs('--url, --size and --server start a local desktop; they cannot be used with --vnc/--cdp.', o.url !== undefined ? '--url' : o.size !== undefined ? '--size' : '--server');
  }
  // The endpoints now (messages never repeat a URL's token or password).
  if (o.vnc !== undefined) {
    try {
      parseVncUrl(o.vnc);
    } catch (e) {
      throw badArgs(`--vnc: ${(e as Error).message}`, '--vnc');
    }
  }
  if (o.cdp !== undefined) {
    try {
      checkCdpUrl(o.cdp);
    } catch (e) {
      throw badArgs(`--cdp: ${(e as Error).message}`, '--cdp');
    }
  }
  const password = readPassword(secret, { env, warn: (m) => process.stderr.write(`vncua run: warning: ${m}\n`) });
  if (password !== undefined) o.password = password;
  return o as RunCommandOptions;
}

/** Describe a value for an error message (what a module exported). */
function describe(v: unknown): string {
  if (v === undefined) return 'nothing (no default export)';
  if (v === null) return 'null';
  if (typeof v === 'function') return `${isClass(v) ? 'a class' : 'a function'} ${v.name ? `"${v.name}"` : '(anonymous)'}`;
  if (typeof v === 'object') return `an object with keys ${JSON.stringify(Object.keys(v))}`;
  return `a ${typeof v} (${JSON.stringify(v)})`;
}

function isClass(f: Function): boolean {
  return /^class[\s{]/.test(Function.prototype.toString.call(f));
}

/** True when `f` is a class whose prototype chain reaches Agent.prototype. */
export function isAgentClass(f: unknown): f is new (options: AgentContext['agentOptions']) => Agent {
  return typeof f === 'function' && typeof f.prototype === 'object' && f.prototype !== null && Agent.prototype.isPrototypeOf(f.prototype);
}

/** A loaded agent module: its name (for --out) and how to build the agent. */
export interface LoadedAgentModule {
  name: string;
  build(ctx: AgentContext): Promise<Agent>;
}

/** Load `spec` (a built-in name or a module path resolved from the cwd); CLI_ERR_BAD_AGENT if unusable. */
export async function loadAgentModule(spec: string): Promise<LoadedAgentModule> {
  const builtin = Object.hasOwn(AGENTS, spec) ? AGENTS[spec] : undefined;
  const name = builtin ? spec : basename(spec, extname(spec));
  let exported: unknown = builtin;
  if (!builtin) {
    const file = resolve(spec);
    if (!existsSync(file)) {
      throw new VncuaError('CLI_ERR_BAD_AGENT', `Agent module ${spec} not found (looked at ${file}); give a .ts/.js file or one of the built-in agents: ${Object.keys(AGENTS).join(', ')}.`, {
        details: { module: spec, path: file },
      });
    }
    let mod: Record<string, unknown>;
    try {
      await prepareAgentImport();
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (cause) {
      const message = ((cause as Error)?.message ?? String(cause)).replace(/\s*\n\s*/g, ' ').replace(/\.$/, ''); // one line (esbuild's are several)
      const code = (cause as NodeJS.ErrnoException)?.code ?? '';
      // A .ts/.mts file is always an ES module (cli/agent-hooks.ts); a .js or .cts file may be loaded as CommonJS.
      const cjs = /^ERR_REQUIRE_(ESM|CYCLE_MODULE|ASYNC_MODULE)$/.test(code) || /require\(\) ES Module|import statement outside a module|exports is not defined/.test(message);
      const hint = cjs ? ' It was loaded as CommonJS: name it .ts, .mts or .mjs, or put it in a package whose package.json has "type": "module".' : '';
      throw new VncuaError('CLI_ERR_BAD_AGENT', `Agent module ${spec} could not be loaded: ${message}.${hint}`, { cause, details: { module: spec, path: file } });
    }
    exported = mod.default;
    if (typeof exported !== 'function') {
      const named = Object.keys(mod).filter((k) => k !== 'default');
      throw new VncuaError(
        'CLI_ERR_BAD_AGENT',
        `Agent module ${spec} default-exports ${describe(exported)}${named.length ? ` (named exports: ${named.join(', ')})` : ''}; export default an Agent subclass or a function (ctx) => Agent.`,
        { details: { module: spec, exported: describe(exported), named } },
      );
    }
  }
  const f = exported as Function;
  if (isAgentClass(f)) {
    const AgentClass = f;
    return { name, build: async (ctx) => new AgentClass(ctx.agentOptions) };
  }
  if (isClass(f)) {
    throw new VncuaError(
      'CLI_ERR_BAD_AGENT',
      `Agent module ${spec} default-exports ${describe(f)}, which does not extend Agent (import { Agent } from 'vncua').`,
      { details: { module: spec, exported: describe(f) } },
    );
  }
  return {
    name,
    build: async (ctx) => {
      const agent: unknown = await (f as (ctx: AgentContext) => unknown)(ctx);
      if (!(agent instanceof Agent)) {
        throw new VncuaError('CLI_ERR_BAD_AGENT', `The builder default-exported by agent module ${spec} returned ${describe(agent)}, not an Agent.`, {
          details: { module: spec, returned: describe(agent) },
        });
      }
      return agent;
    },
  };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
}

/** `runs/<timestamp>-<name>`, or `…-2`, `…-3` when a run started in the same second already holds it. */
async function freshDefaultOut(name: string): Promise<string> {
  const base = join('runs', `${timestamp()}-${name}`);
  let dir = base;
  for (let n = 2; (await runFiles(dir)).length > 0; n++) dir = `${base}-${n}`;
  return dir;
}

/**
 * Check the output directory before anything starts (OUTPUT_ERR_NOT_A_DIRECTORY / _NOT_WRITABLE /
 * _PSEUDO_FS) and keep a run already in it: OUTPUT_ERR_RUN_EXISTS (nothing touched), or with
 * `overwrite` moved aside to DIR.1, DIR.2, … Resolves to the absolute directory and where the old run went.
 */
export async function prepareRunOutDir(out: string, overwrite: boolean): Promise<{ dir: string; movedAside?: string }> {
  const dir = await checkOutputDir(out, '--out');
  const found = await runFiles(dir);
  if (found.length === 0) return { dir };
  if (!overwrite) throw runExistsError(dir, found, 'Give --overwrite to move it aside to DIR.1 (nothing is deleted), or another --out.');
  return { dir, movedAside: await moveAside(dir) };
}

/** Load the agent, start (or use) a desktop, run the agent, tear the desktop down. Throws only before the run starts. */
export async function runAgentCommand(o: RunCommandOptions): Promise<RunCommandResult> {
  const mod = await loadAgentModule(o.agent);
  const { dir: outputDir, movedAside } = await prepareRunOutDir(o.out ?? (await freshDefaultOut(mod.name)), o.overwrite === true);
  const maxSteps = o.maxSteps ?? DEFAULT_MAX_STEPS;
  let desktop: Desktop | undefined;
  let ready: Promise<unknown> | undefined;
  const pageWait = new AbortController();
  const stopPageWait = () => pageWait.abort(o.signal?.reason);
  o.signal?.addEventListener('abort', stopPageWait, { once: true });
  try {
    let vncUrl: string;
    let cdpUrl: string;
    if (o.vnc !== undefined && o.cdp !== undefined) {
      vncUrl = o.vnc;
      cdpUrl = o.cdp;
    } else {
      desktop = await launchDesktop({
        ...(o.url !== undefined ? { url: o.url } : {}),
        ...(o.size !== undefined ? { size: o.size } : {}),
        ...(o.server !== undefined ? { server: o.server } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
        // The password was read with the arguments (file, --password-env or VNCUA_VNC_PASSWORD); none means none.
        ...(o.password !== undefined ? { password: o.password } : {}),
        env: { VNCUA_VNC_PASSWORD: undefined },
      });
      ({ vncUrl, cdpUrl } = desktop);
      // The first act() comes on a ready page (loaded, showing something, DOM settled); the agent
      // connects meanwhile. A page that never gets ready ends the run with PAGE_ERR_* naming the URL.
      if (o.url !== undefined) {
        ready = waitForPageReady(cdpUrl, { url: o.url, signal: pageWait.signal });
        ready.catch(() => {});
      }
    }
    const agentOptions = {
      ...(o.task !== undefined ? { task: o.task } : {}),
      outputDir,
      vncUrl,
      cdpUrl,
      ...(o.password !== undefined ? { password: o.password } : {}),
      ...(o.successGraceMs !== undefined ? { successGraceMs: o.successGraceMs } : {}),
    };
    const ctx: AgentContext = { task: o.task, outputDir, vncUrl, cdpUrl, url: o.url, maxSteps, script: o.script, args: o.args ?? [], agentOptions };
    const agent = await mod.build(ctx);
    const result = await agent.run({ maxSteps, ...(o.signal ? { signal: o.signal } : {}), ...(ready ? { ready } : {}) });
    const tracePath = join(agent.options.outputDir, TRACE_FILES.execution);
    if (o.afterRun) await o.afterRun({ vncUrl, cdpUrl, outputDir: agent.options.outputDir, result });
    return { result, outputDir: agent.options.outputDir, tracePath, ...(movedAside ? { movedAside } : {}) };
  } finally {
    o.signal?.removeEventListener('abort', stopPageWait);
    pageWait.abort();
    await desktop?.close();
  }
}

/** The one-line summary of a run's result. */
export function resultLine(r: AgentRunResult): string {
  const base = `result: ${r.status} (${r.steps} step${r.steps === 1 ? '' : 's'}, ${Math.round(r.durationMs)} ms)`;
  return r.error ? `${base}: ${r.error.code}: ${r.error.message}` : base;
}

/** Run `vncua run ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('run', USAGE, () => parseRunArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const cancel = cancelOnSignals('run', 'cancelling the run');
  try {
    const { result, tracePath, movedAside } = await runAgentCommand({ ...parsed.options, signal: cancel.signal });
    if (movedAside) process.stdout.write(`the previous run: ${movedAside}\n`);
    process.stdout.write(`trace: ${tracePath}\n${resultLine(result)}\n`);
    return result.status === 'finished' ? 0 : 1;
  } catch (e) {
    return badInputExit('run', e, OUTPUT_ERROR_CODES);
  } finally {
    cancel.dispose();
  }
}
