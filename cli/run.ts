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
import { join } from 'node:path';
import { AGENTS, loadAgentModule } from './agents.ts';
import { checkDomainFlags, parseDomainFlags } from './domains.ts';
import {
  AGENT_REST,
  AGENT_RUN_OPTIONS,
  OUTPUT_ERROR_CODES,
  badArgs,
  badInputExit,
  cancelOnSignals,
  oneOf,
  parseCommandArgs,
  parseCommandLine,
  parsedValue,
  positiveUsd,
  wholeNumber,
  type CommandSpec,
} from './command.ts';
import { DEFAULT_MAX_STEPS, type AgentContext, type AgentRunResult } from '../harness/agent/index.ts';
import { follow } from '../harness/cancel.ts';
import { waitForPageReady } from '../harness/cdp/page-ready.ts';
import { MAX_SUCCESS_GRACE_MS } from '../harness/agent/options.ts';
import { checkCdpUrl } from '../harness/cdp/success.ts';
import { launchDesktop, type Desktop, type VncServerKind } from '../harness/desktop/index.ts';
import { readPassword, type PasswordSource } from '../harness/desktop/password.ts';
import { VncuaError } from '../harness/errors.ts';
import { allowStartPage, mergeDomainLists } from '../harness/guard/patterns.ts';
import { parseVncUrl } from '../harness/rfb/transport.ts';
import { TRACE_FILES } from '../harness/trace/index.ts';
import { checkOutputDir, moveAside, runExistsError, runFiles } from '../harness/trace/out-dir.ts';
import { recordingProxyRecorder } from '../recorder/recorder-factory.ts';
import type { ViewerServer } from '../viewer/server.ts';
import { SERVE_OPTIONS, SERVE_START_ERROR_CODES, type ServeRequest, serveRequest, startCommandViewer, withServeValue } from './serve-option.ts';

/** `--password` on the command line: refused (`ps` shows every process's arguments to every user). */
const passwordRefused = () =>
  new VncuaError(
    'DESKTOP_ERR_BAD_PASSWORD',
    '--password is refused: `ps` would show the password to every user; use --password-file FILE or --password-env NAME (default VNCUA_VNC_PASSWORD).',
    {
      details: { argument: '--password' },
    },
  );

/** `vncua run`'s options: the --help is generated from them. */
export const RUN_SPEC = {
  command: 'run',
  options: {
    agent: {
      type: 'string',
      value: 'MODULE',
      required: 'a .ts/.js file, or a built-in agent name',
      description: `a .ts/.js file whose default export is an Agent subclass or a builder (ctx) => Agent, or a built-in agent: ${Object.keys(AGENTS).join(', ')}`,
    },
    task: { type: 'string', value: '"..."', description: "the task, the agent's ctx.task" },
    url: { type: 'string', value: 'URL', description: 'page the local desktop opens (default about:blank)' },
    'max-steps': { type: 'string', value: 'N', description: `steps at most (default ${DEFAULT_MAX_STEPS})` },
    out: { type: 'string', value: 'DIR', description: 'output directory (default runs/<timestamp>-<agent>/); one that holds a run is refused' },
    overwrite: { type: 'boolean', description: 'move the run already in --out aside to DIR.1 (DIR.2, ...) instead; nothing is deleted' },
    vnc: { type: 'string', value: 'URL', description: 'use a running desktop instead of starting one: its VNC URL with its token (with --cdp)' },
    cdp: { type: 'string', value: 'URL', description: "the running desktop's CDP URL with its token (with --vnc)" },
    'password-file': { type: 'string', value: 'FILE', description: 'the VNC password, for --vnc or the local desktop: the first line of FILE (never on the command line)' },
    'password-env': { type: 'string', value: 'NAME', description: 'the VNC password from the variable NAME (default: VNCUA_VNC_PASSWORD when set)' },
    size: { type: 'string', value: 'WxH', description: "the local desktop's screen size (default 1280x800)" },
    server: { type: 'string', value: 'xvnc|x11vnc', description: "the local desktop's VNC server (default xvnc)" },
    ...SERVE_OPTIONS,
    ...AGENT_RUN_OPTIONS,
  },
  rest: AGENT_REST,
  refused: { password: passwordRefused },
  notes: 'exit code: 0 when the run finished, 1 otherwise, 2 on bad arguments (a bad password too), an unusable --out or a --serve port in use\n',
} as const satisfies CommandSpec;

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
  /** --no-live: the Agent's live option off. */
  live?: boolean;
  /** --max-cost: the Agent's maxCostUsd. */
  maxCostUsd?: number;
  /** --needs-human: the Agent's needsHuman. */
  needsHuman?: 'end' | 'ask';
  /** --allowed-domains: the navigation guard's allow list (the --url origin is added). */
  allowedDomains?: string[];
  /** --blocked-domains. */
  blockedDomains?: string[];
  /** --secrets-file: the Agent's secretsFile (its variables are looked up there first; no binding is given on this command line). */
  secretsFile?: string;
  args?: string[];
  /** The VNC password (of --vnc, or of the local desktop); read from a file or the environment, never argv. */
  password?: string;
  /** --serve [PORT]: the viewer in this process over the output directory while the run runs. */
  serve?: ServeRequest;
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
  const line = parseCommandLine(RUN_SPEC, withServeValue(argv));
  if (line === undefined) return undefined;
  const v = line.values;
  const o: RunCommandOptions = { agent: v.agent };
  const serve = serveRequest(v.serve, v['serve-host']);
  if (serve) o.serve = serve;
  for (const k of ['task', 'url', 'out', 'vnc', 'cdp', 'size', 'script'] as const) if (v[k] !== undefined) o[k] = v[k];
  if (v.overwrite) o.overwrite = true;
  if (v.server !== undefined) o.server = oneOf(v.server, '--server', ['xvnc', 'x11vnc']);
  if (v['max-steps'] !== undefined) o.maxSteps = wholeNumber(v['max-steps'], '--max-steps', 1);
  if (v['success-grace-ms'] !== undefined) o.successGraceMs = wholeNumber(v['success-grace-ms'], '--success-grace-ms', 0, MAX_SUCCESS_GRACE_MS);
  if (v['no-live']) o.live = false;
  if (v['max-cost'] !== undefined) o.maxCostUsd = positiveUsd(v['max-cost'], '--max-cost');
  if (v['needs-human'] !== undefined) o.needsHuman = oneOf(v['needs-human'], '--needs-human', ['end', 'ask']);
  Object.assign(o, parseDomainFlags(v['allowed-domains'], v['blocked-domains']));
  if (v['secrets-file'] !== undefined) o.secretsFile = v['secrets-file'];
  if (line.rest.length > 0) o.args = line.rest;
  if ((o.vnc === undefined) !== (o.cdp === undefined)) {
    throw badArgs(
      `--vnc and --cdp go together (the running desktop's VNC and CDP endpoints); only ${o.vnc !== undefined ? '--vnc' : '--cdp'} was given.`,
      o.vnc !== undefined ? '--cdp' : '--vnc',
    );
  }
  if (o.vnc !== undefined && (o.url !== undefined || o.size !== undefined || o.server !== undefined)) {
    throw badArgs(
      '--url, --size and --server start a local desktop; they cannot be used with --vnc/--cdp.',
      o.url !== undefined ? '--url' : o.size !== undefined ? '--size' : '--server',
    );
  }
  // The endpoints now (messages never repeat a URL's token or password).
  if (o.vnc !== undefined) parsedValue(o.vnc, '--vnc', parseVncUrl);
  if (o.cdp !== undefined) parsedValue(o.cdp, '--cdp', checkCdpUrl);
  const secret: PasswordSource = {};
  if (v['password-file'] !== undefined) secret.file = v['password-file'];
  if (v['password-env'] !== undefined) secret.env = v['password-env'];
  const password = readPassword(secret, { env, warn: (m) => process.stderr.write(`vncua run: warning: ${m}\n`) });
  if (password !== undefined) o.password = password;
  return o;
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
  checkDomainFlags(o);
  const mod = await loadAgentModule(o.agent);
  const { dir: outputDir, movedAside } = await prepareRunOutDir(o.out ?? (await freshDefaultOut(mod.name)), o.overwrite === true);
  const maxSteps = o.maxSteps ?? DEFAULT_MAX_STEPS;
  let desktop: Desktop | undefined;
  let viewer: ViewerServer | undefined;
  let ready: Promise<unknown> | undefined;
  const pageWait = new AbortController();
  const stopFollowing = follow(o.signal, pageWait);
  try {
    // The viewer over the run's directory (ROOT is the run: its page is ?run=.); a port in use stops here.
    if (o.serve) viewer = await startCommandViewer('run', outputDir, o.serve, { out: process.stdout, err: process.stderr, path: '?run=.' });
    let vncUrl: string;
    let cdpUrl: string;
    if (o.vnc !== undefined && o.cdp !== undefined) {
      vncUrl = o.vnc;
      cdpUrl = o.cdp;
    } else {
      desktop = await launchDesktop({
        url: o.url,
        size: o.size,
        server: o.server,
        signal: o.signal,
        // The password was read with the arguments (file, --password-env or VNCUA_VNC_PASSWORD); none means none.
        password: o.password,
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
      ...(o.live === false ? { live: false } : {}),
      ...(o.maxCostUsd !== undefined ? { maxCostUsd: o.maxCostUsd } : {}),
      ...(o.needsHuman !== undefined ? { needsHuman: o.needsHuman } : {}),
      ...(o.allowedDomains || o.blockedDomains ? allowStartPage(mergeDomainLists(o), o.url) : {}),
      ...(o.secretsFile ? { secretsFile: o.secretsFile } : {}),
      // Runs record by default (the Agent's record option), whichever Agent class the builder makes.
      recorder: recordingProxyRecorder,
    };
    const ctx: AgentContext = { task: o.task, outputDir, vncUrl, cdpUrl, url: o.url, maxSteps, script: o.script, args: o.args ?? [], agentOptions };
    const agent = await mod.build(ctx);
    const result = await agent.run({ maxSteps, signal: o.signal, ready });
    const tracePath = join(agent.options.outputDir, TRACE_FILES.execution);
    if (o.afterRun) await o.afterRun({ vncUrl, cdpUrl, outputDir: agent.options.outputDir, result });
    return { result, outputDir: agent.options.outputDir, tracePath, movedAside };
  } finally {
    stopFollowing();
    pageWait.abort();
    await desktop?.close();
    await viewer?.close();
  }
}

/** The one-line summary of a run's result. */
export function resultLine(r: AgentRunResult): string {
  const base = `result: ${r.status} (${r.steps} step${r.steps === 1 ? '' : 's'}, ${Math.round(r.durationMs)} ms${r.cost_usd === undefined ? '' : `, $${r.cost_usd}`})`;
  const why = r.reason === undefined ? base : `${base}: ${r.reason}`;
  return r.error ? `${why}: ${r.error.code}: ${r.error.message}` : why;
}

/** Run `vncua run ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(RUN_SPEC, () => parseRunArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const cancel = cancelOnSignals('run', 'cancelling the run');
  try {
    const { result, tracePath, movedAside } = await runAgentCommand({ ...parsed.options, signal: cancel.signal });
    if (movedAside) process.stdout.write(`the previous run: ${movedAside}\n`);
    process.stdout.write(`trace: ${tracePath}\n${resultLine(result)}\n`);
    return result.status === 'finished' ? 0 : 1;
  } catch (e) {
    return badInputExit('run', e, new Set([...OUTPUT_ERROR_CODES, ...SERVE_START_ERROR_CODES, 'GUARD_ERR_BAD_PATTERN']));
  } finally {
    cancel.dispose();
  }
}
