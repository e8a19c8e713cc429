/**
 * `vncua run`: run an agent on a desktop and leave its trace in an output directory.
 *
 * The agent is a module (a .ts/.js path resolved from the cwd, or a built-in name such as
 * `scripted`) whose default export is an `Agent` subclass (constructed with
 * `{ task, outputDir, vncUrl, cdpUrl }`) or a builder `(ctx: AgentContext) => Agent | Promise<Agent>`.
 * The desktop is started locally (launchDesktop at --url) unless --vnc and --cdp name a running one.
 * Ctrl-C cancels the run (status `cancelled`); the desktop is always torn down.
 */
import { existsSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import '../recorder/register.ts'; // runs record by default (the Agent's record option)
import { AGENTS } from './agents.ts';
import { badArgs, cancelOnSignals, flagValue, parseCommandArgs, wholeNumber } from './command.ts';
import { Agent, DEFAULT_MAX_STEPS, type AgentContext, type AgentRunResult } from '../harness/agent/index.ts';
import { MAX_SUCCESS_GRACE_MS } from '../harness/agent/options.ts';
import { SuccessChecker } from '../harness/cdp/success.ts';
import { launchDesktop, type Desktop, type VncServerKind } from '../harness/desktop/index.ts';
import { VncuaError } from '../harness/errors.ts';
import { TRACE_FILES } from '../harness/trace/index.ts';

const USAGE = `usage: vncua run --agent MODULE [--task "..."] [--url URL] [--max-steps N] [--out DIR]
                 [--vnc URL --cdp URL] [--size WxH] [--server xvnc|x11vnc] [--script FILE]
                 [--success-grace-ms MS] [-- ARGS...]
  MODULE   a .ts/.js file whose default export is an Agent subclass or a builder (ctx) => Agent,
           or a built-in agent: ${Object.keys(AGENTS).join(', ')}
  --url    page the local desktop opens (default about:blank)
  --vnc/--cdp  use a running desktop instead of starting one (give both)
  --out    output directory (default runs/<timestamp>-<agent>/)
  --success-grace-ms  re-check success this long after each action while the screen settles
           (default 1000; 0: only the check right after each action and the final one)
  ARGS     after --: passed to the agent's builder as ctx.args
exit code: 0 when the run finished, 1 otherwise, 2 on bad arguments
`;

/** What `vncua run` was asked to do. */
export interface RunCommandOptions {
  agent: string;
  task?: string;
  url?: string;
  maxSteps?: number;
  out?: string;
  vnc?: string;
  cdp?: string;
  size?: string;
  server?: VncServerKind;
  script?: string;
  /** --success-grace-ms: the Agent's successGraceMs. */
  successGraceMs?: number;
  args?: string[];
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
}

/** Parse `vncua run` arguments (CLI_ERR_BAD_ARGS on a bad one); undefined for --help. */
export function parseRunArgs(argv: string[]): RunCommandOptions | undefined {
  const o: Partial<RunCommandOptions> = {};
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
      mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (cause) {
      const message = ((cause as Error)?.message ?? String(cause)).replace(/\.$/, '');
      const code = (cause as NodeJS.ErrnoException)?.code ?? '';
      // tsx loads a .ts/.js file as CommonJS unless the nearest package.json says "type": "module".
      const cjs = /^ERR_REQUIRE_(ESM|CYCLE_MODULE|ASYNC_MODULE)$/.test(code) || /require\(\) ES Module|import statement outside a module|exports is not defined/.test(message);
      const hint = cjs ? ' It was loaded as CommonJS: name it .mts/.mjs, or put it in a package whose package.json has "type": "module".' : '';
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
      `Agent module ${spec} default-exports ${describe(f)}, which does not extend Agent (import Agent from vncua's harness/agent, the same copy the CLI uses).`,
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

/** Load the agent, start (or use) a desktop, run the agent, tear the desktop down. Throws only before the run starts. */
export async function runAgentCommand(o: RunCommandOptions): Promise<RunCommandResult> {
  const mod = await loadAgentModule(o.agent);
  const outputDir = resolve(o.out ?? join('runs', `${timestamp()}-${mod.name}`));
  const maxSteps = o.maxSteps ?? DEFAULT_MAX_STEPS;
  let desktop: Desktop | undefined;
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
      });
      ({ vncUrl, cdpUrl } = desktop);
      if (o.url !== undefined) await waitForPageLoad(cdpUrl, o.signal);
    }
    const agentOptions = { ...(o.task !== undefined ? { task: o.task } : {}), outputDir, vncUrl, cdpUrl, ...(o.successGraceMs !== undefined ? { successGraceMs: o.successGraceMs } : {}) };
    const ctx: AgentContext = { task: o.task, outputDir, vncUrl, cdpUrl, url: o.url, maxSteps, script: o.script, args: o.args ?? [], agentOptions };
    const agent = await mod.build(ctx);
    const result = await agent.run({ maxSteps, ...(o.signal ? { signal: o.signal } : {}) });
    const tracePath = join(agent.options.outputDir, TRACE_FILES.execution);
    if (o.afterRun) await o.afterRun({ vncUrl, cdpUrl, outputDir: agent.options.outputDir, result });
    return { result, outputDir: agent.options.outputDir, tracePath };
  } finally {
    await desktop?.close();
  }
}

/** How long `vncua run` waits for the --url page to load on a desktop it started. */
const PAGE_LOAD_TIMEOUT_MS = 15_000;
/** Time given to the loaded page to paint before the agent's first look. */
const FIRST_PAINT_MS = 150;

/**
 * launchDesktop() resolves when CDP answers, which can be before the page has loaded: wait until the
 * active page's document is complete, so the agent's first action does not land on a blank window.
 * Gives up quietly after PAGE_LOAD_TIMEOUT_MS (the agent then sees whatever is on screen).
 */
async function waitForPageLoad(cdpUrl: string, signal: AbortSignal | undefined): Promise<void> {
  const checker = new SuccessChecker(cdpUrl, { expression: "document.readyState === 'complete' && location.href !== 'about:blank'" });
  const end = Date.now() + PAGE_LOAD_TIMEOUT_MS;
  try {
    while (Date.now() < end && !signal?.aborted) {
      if ((await checker.check({ timeoutMs: 2000, ...(signal ? { signal } : {}) }).catch(() => null)) === true) {
        await new Promise((r) => setTimeout(r, FIRST_PAINT_MS));
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await checker.close().catch(() => {});
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
    const { result, tracePath } = await runAgentCommand({ ...parsed.options, signal: cancel.signal });
    process.stdout.write(`trace: ${tracePath}\n${resultLine(result)}\n`);
    return result.status === 'finished' ? 0 : 1;
  } finally {
    cancel.dispose();
  }
}
