/**
 * Reliability: `vncua eval` (the real CLI, `node bin/vncua.js eval` in a child process, as a user runs
 * it) over the built-in suite (eval/suites/basic/tasks.json, --only a few tasks, the replay agent: no
 * API key) under faults, each probe into its own temp --out. Every probe runs the command (A), injects
 * its fault, then runs the same command again (B) and checks: nothing lost (finished runs keep valid
 * result.json + execution.json, byte for byte and mtime as before the fault; B completes every selected
 * task), nothing doubled (B skips exactly what was finished and runs each other task once; no moved-aside
 * `~N` / `.N` directory), no orphan process (nothing whose environment or command line carries the
 * probe's tag or its TMPDIR, where every desktop of the probe lives, outlives the CLI) and the right exit
 * code and error code (eval/README.md: infra failures, skip/resume, exit codes).
 *
 * Probes (the issue's list):
 * 1. kill -9 of the runner at a random moment (seeded, harness/prng.ts), N times (--kills N, default 4);
 * 2. SIGINT to the runner's process group (Ctrl-C) once a task finished and another one's agent runs;
 * 3. the Xvnc of a running task's desktop killed (the desktop found by parentage: task.json's start
 *    script pid, a child of the runner; Xvnc in its process group);
 * 4. the Chromium browser process of a running task's desktop killed (a crash);
 * 5. the task server (a node:http static server on 127.0.0.1:0 over the suite, --base-url) closed
 *    once the first task finished; B runs with it back on the same port;
 * 6. a full results disk: --out on a 2 MiB tmpfs (mount, root only; SKIPPED otherwise) with a filler
 *    leaving ~400 KiB, so the third task fills it; B runs after the filler is removed;
 * 7. overload: --workers 4 × cores, the whole suite at 1280x800.
 *
 * Prints one markdown table (a row per probe: PASS / FAIL with why / SKIPPED with why) and notes;
 * exits 0 when it ran, even when probes failed, and 1 only when the script itself broke.
 *
 * Run: npx tsx bench/reliability.ts [--kills N] [--quick] [--seed S] [--probe 1,3]
 * (--quick: 2 kills instead of 4; --probe: only those probes of the list)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isInfraErrorCode } from '../eval/infra.ts';
import { groupMembers, procStat } from '../harness/desktop/procs.ts';
import { mulberry32 } from '../harness/prng.ts';
import { table } from './stats.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BIN = join(ROOT, 'bin/vncua.js');
const SUITE_DIR = join(ROOT, 'eval/suites/basic');
const SUITE = join(SUITE_DIR, 'tasks.json');
const AGENT = 'replay';
const RES = '1280_800';

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const quick = argv.includes('--quick');
const kills = Number(flag('--kills') ?? (quick ? 2 : 4));
const seed = Number(flag('--seed') ?? 1);
/** --probe 1,3: only these probes (numbers from the list above). */
const onlyProbes = flag('--probe')?.split(',').map(Number);
const wanted = (n: number) => !onlyProbes || onlyProbes.includes(n);
if (!Number.isInteger(kills) || kills < 0 || !Number.isInteger(seed)) {
  process.stderr.write('usage: npx tsx bench/reliability.ts [--kills N] [--quick] [--seed S] [--probe 1,3]\n');
  process.exit(1);
}
const rng = mulberry32(seed);
const log = (s: string) => process.stderr.write(`reliability: ${s}\n`);

// ---------------------------------------------------------------- children and their processes

/** A probe's own corner: its directory, the TMPDIR its desktops live under, the tag its runner carries. */
interface Ctx {
  id: string;
  dir: string;
  /** TMPDIR of the CLI: start.sh makes each desktop's temp dir (its parts' VNCUA_DESKTOP_TAG) under it. */
  tmp: string;
  tag: string;
  out: string;
}

/** One `vncua eval` child. */
interface EvalRun {
  child: ChildProcess;
  pid: number;
  t0: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Resolves when it exited (and its pipes closed, or 2 s after the exit). */
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
  exited: boolean;
}

const liveChildren = new Set<EvalRun>();
const contexts: Ctx[] = [];
let work = '';

async function makeCtx(id: string): Promise<Ctx> {
  const dir = join(work, id);
  const ctx = { id, dir, tmp: join(dir, 't'), tag: `${id}-${process.pid}-${Date.now()}`, out: join(dir, 'out') };
  await mkdir(ctx.tmp, { recursive: true });
  contexts.push(ctx);
  return ctx;
}

/** Start `vncua eval ARGS` in its own process group (so a Ctrl-C can be sent to it), tagged with the probe. */
function startEval(ctx: Ctx, args: string[], deadlineMs: number): EvalRun {
  const child = spawn(process.execPath, [BIN, 'eval', ...args], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: ctx.tmp, VNCUA_RELIABILITY_TAG: ctx.tag },
  });
  const run: EvalRun = { child, pid: child.pid!, t0: performance.now(), stdout: '', stderr: '', timedOut: false, exited: false, done: undefined as never };
  liveChildren.add(run);
  child.stdout!.on('data', (d) => (run.stdout += d));
  child.stderr!.on('data', (d) => (run.stderr += d));
  const timer = setTimeout(() => {
    run.timedOut = true;
    killGroup(run.pid, 'SIGKILL');
  }, deadlineMs);
  run.done = new Promise((resolveDone) => {
    child.once('error', (e) => {
      run.stderr += `spawn failed: ${e.message}\n`;
    });
    child.once('exit', (code, signal) => {
      run.exited = true;
      clearTimeout(timer);
      liveChildren.delete(run);
      const ms = performance.now() - run.t0;
      const finish = () => resolveDone({ code, signal, ms });
      // Wait for the pipes (the last lines), but not for a grandchild that would hold them open.
      const t = setTimeout(finish, 2000);
      child.once('close', () => {
        clearTimeout(t);
        finish();
      });
    });
  });
  return run;
}

function killGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    // gone
  }
}

function readProc(pid: number, what: string): Buffer | undefined {
  try {
    return readFileSync(`/proc/${pid}/${what}`);
  } catch {
    return undefined;
  }
}

const comm = (pid: number) => readProc(pid, 'comm')?.toString().trim() ?? '?';
const cmdline = (pid: number) => readProc(pid, 'cmdline')?.toString().split('\0').filter(Boolean) ?? [];

/**
 * Live processes tied to a probe: its runner and whatever carries its tag (the runner's environment),
 * or its TMPDIR in the environment or command line (start.sh, and every desktop part: their
 * VNCUA_DESKTOP_TAG and TMPDIR are the desktop's temp dir under it; Chromium's --user-data-dir too).
 */
function tiedProcesses(ctx: Ctx): Array<{ pid: number; comm: string }> {
  const tag = Buffer.from(`VNCUA_RELIABILITY_TAG=${ctx.tag}\0`);
  const under = Buffer.from(`${ctx.tmp}`);
  const out: Array<{ pid: number; comm: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const pid = Number(name);
    const env = readProc(pid, 'environ');
    const cmd = readProc(pid, 'cmdline');
    if (!(env?.includes(tag) || env?.includes(under) || cmd?.includes(under))) continue;
    const s = procStat(pid);
    if (s && s.state !== 'Z') out.push({ pid, comm: comm(pid) });
  }
  return out;
}

/** Wait until nothing tied to the probe runs; what is still there after `ms` (then SIGKILLed, so that the next probe starts clean). */
async function orphansAfter(ctx: Ctx, ms = 20_000): Promise<{ left: Array<{ pid: number; comm: string }>; waitedMs: number }> {
  const t0 = performance.now();
  let left = tiedProcesses(ctx);
  while (left.length > 0 && performance.now() - t0 < ms) {
    await sleep(100);
    left = tiedProcesses(ctx);
  }
  const waitedMs = performance.now() - t0;
  for (const p of left) killPid(p.pid);
  return { left, waitedMs };
}

function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** The runner's desktops: start scripts (group leaders) whose parent is the runner. */
function desktopsOf(runnerPid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    if (s && s.ppid === runnerPid && s.state !== 'Z' && cmdline(s.pid).some((a) => a.endsWith('docker/start.sh'))) out.push(s.pid);
  }
  return out;
}

async function waitFor<T>(what: string, ms: number, probe: () => T | undefined | false | Promise<T | undefined | false>, run?: EvalRun): Promise<T> {
  const t0 = performance.now();
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (run?.exited) throw new Error(`the runner exited before ${what}: ${tail(run)}`);
    if (performance.now() - t0 > ms) throw new Error(`no ${what} within ${Math.round(ms / 1000)} s${run ? `: ${tail(run)}` : ''}`);
    await sleep(25);
  }
}

/** `: <the last line on stderr>` (what went wrong), or nothing. */
const lastWords = (run: EvalRun) => {
  const l = run.stderr
    .trim()
    .split('\n')
    .filter((x) => x.trim() && !/^\s+at /.test(x))
    .pop();
  return l ? `: "${l.trim().slice(0, 200)}"` : '';
};
const tail = (run: EvalRun) => `${run.stdout}${run.stderr}`.trim().split('\n').slice(-4).join(' / ').slice(0, 400);

// ---------------------------------------------------------------- what is on disk

interface FileSig {
  hash: string;
  mtimeMs: number;
}

/** One task directory under OUT/replay/1280_800/. */
interface RunState {
  name: string;
  status?: string;
  errorCode?: string;
  /** A valid result.json whose status is neither cancelled nor an infra failure (the runner skips it). */
  finished: boolean;
  resultValid: boolean;
  /** null: no execution.json. */
  executionValid: boolean | null;
  task?: { attempt?: number; infra_errors?: Array<{ code: string }>; ended_at?: number; status?: string; desktop?: { pid?: number; display?: string } };
  files: Record<string, FileSig>;
  tmpFiles: string[];
}

function parseJson(path: string): { ok: true; value: unknown } | { ok: false } | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function runState(dir: string, name: string): RunState {
  const s: RunState = { name, finished: false, resultValid: false, executionValid: null, files: {}, tmpFiles: [] };
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return s;
  }
  s.tmpFiles = entries.filter((e) => e.includes('.tmp-'));
  for (const f of ['result.json', 'execution.json', 'task.json']) {
    const p = join(dir, f);
    if (!existsSync(p)) continue;
    s.files[f] = { hash: createHash('sha256').update(readFileSync(p)).digest('hex'), mtimeMs: statSync(p).mtimeMs };
  }
  const result = parseJson(join(dir, 'result.json'));
  if (result?.ok) {
    const r = result.value as { status?: string; error?: { code?: string } };
    s.resultValid = typeof r.status === 'string';
    s.status = r.status;
    s.errorCode = r.error?.code;
    const infra = r.status === 'infra_error' || (r.status === 'error' && isInfraErrorCode(r.error?.code));
    s.finished = s.resultValid && r.status !== 'cancelled' && !infra;
  }
  const exec = parseJson(join(dir, 'execution.json'));
  if (exec) s.executionValid = exec.ok && Array.isArray(exec.value);
  const task = parseJson(join(dir, 'task.json'));
  if (task?.ok) s.task = task.value as RunState['task'];
  return s;
}

interface DiskState {
  runs: Map<string, RunState>;
  /** Directories that are not a selected task's (moved-aside `~N`, `.N`, or unknown). */
  stray: string[];
}

function scan(out: string, selected: readonly string[]): DiskState {
  const base = join(out, AGENT, RES);
  const runs = new Map<string, RunState>();
  const stray: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(base);
  } catch {
    // nothing yet
  }
  for (const n of names) {
    if (!selected.includes(n)) stray.push(n);
    else runs.set(n, runState(join(base, n), n));
  }
  const agents = existsSync(out) ? readdirSync(out).filter((n) => n !== AGENT && !/^scores\./.test(n)) : [];
  stray.push(...agents.map((a) => `${a}/`));
  return { runs, stray };
}

const finishedNames = (d: DiskState) => [...d.runs.values()].filter((r) => r.finished).map((r) => r.name);

// ---------------------------------------------------------------- what the command said

interface Said {
  total?: number;
  skipped?: number;
  /** task id -> statuses of its `eval: [i/n] id@WxH: status` lines. */
  done: Map<string, string[]>;
  retries: Array<{ task: string; attempt: number; code: string }>;
  codes: Set<string>;
  /** `vncua eval: CODE: …` lines (not the --workers warning). */
  errorLines: string[];
  /** An uncaught error's stack on stderr: its first line, else undefined. */
  stack: string | undefined;
}

function said(run: EvalRun): Said {
  const text = `${run.stdout}\n${run.stderr}`;
  const s: Said = { done: new Map(), retries: [], codes: new Set(), errorLines: [], stack: undefined };
  const start = /^eval: (\d+) runs?, (\d+) already done/m.exec(run.stdout);
  if (start) {
    s.total = Number(start[1]);
    s.skipped = Number(start[2]);
  }
  for (const m of run.stdout.matchAll(/^eval: \[\d+\/\d+\] ([\w.-]+)@\d+x\d+: (\w+)/gm)) s.done.set(m[1]!, [...(s.done.get(m[1]!) ?? []), m[2]!]);
  for (const m of run.stdout.matchAll(/^eval: ([\w.-]+)@\d+x\d+: infra failure on attempt (\d+) \(([A-Z][A-Z0-9_]+)/gm))
    s.retries.push({ task: m[1]!, attempt: Number(m[2]), code: m[3]! });
  for (const m of text.matchAll(/\b([A-Z][A-Z0-9]*_ERR_[A-Z0-9_]+)\b/g)) s.codes.add(m[1]!);
  s.errorLines = run.stderr.split('\n').filter((l) => /^vncua eval: [A-Z][A-Z0-9_]+: /.test(l));
  if (/^\s+at .+:\d+:\d+\)?$/m.test(run.stderr) || /^(node:internal|Uncaught)/m.test(run.stderr)) {
    const first = run.stderr.split('\n').find((l) => /^\w*(Error|Exception)\b|^\w+Error:|^Error/.test(l.trim()) && !/^vncua eval: /.test(l));
    s.stack = (first ?? run.stderr.split('\n').find((l) => l.trim()) ?? '').trim().slice(0, 300);
  }
  return s;
}

/** An uncaught stack trace on a run's stderr is never the right outcome. */
function stackProblems(a: Said | undefined, b: Said | undefined, code: string[]): void {
  if (a?.stack) code.push(`A: a stack trace on stderr (${a.stack})`);
  if (b?.stack) code.push(`B: a stack trace on stderr (${b.stack})`);
}

/** Error codes in the results: result.json errors and task.json infra_errors. */
function diskCodes(d: DiskState): string[] {
  const out: string[] = [];
  for (const r of d.runs.values()) {
    if (r.errorCode) out.push(`${r.name}: ${r.status} ${r.errorCode}`);
    for (const e of r.task?.infra_errors ?? []) out.push(`${r.name}: attempt failed ${e.code}`);
  }
  return out;
}

const exitText = (x: { code: number | null; signal: NodeJS.Signals | null; ms: number }, run: EvalRun) =>
  `${run.timedOut ? 'TIMED OUT, ' : ''}${x.signal ? `killed by ${x.signal}` : `exit ${x.code}`} after ${(x.ms / 1000).toFixed(1)} s`;

// ---------------------------------------------------------------- rows

interface Check {
  ok: boolean;
  text: string;
}
const yes = (text = 'yes'): Check => ({ ok: true, text });
const no = (text: string): Check => ({ ok: false, text: `NO: ${text}` });
function checkOf(problems: string[], okText = 'yes'): Check {
  return problems.length === 0 ? yes(okText) : no(problems.join('; '));
}

interface Row {
  probe: string;
  happened: string;
  lost?: Check;
  doubled?: Check;
  orphans?: Check;
  code?: Check;
  outcome: 'PASS' | 'FAIL' | 'SKIPPED';
  why?: string;
}

function row(probe: string, happened: string, lost: Check, doubled: Check, orphans: Check, code: Check): Row {
  const failed = [
    ['nothing lost', lost],
    ['nothing doubled', doubled],
    ['no orphan', orphans],
    ['right code', code],
  ]
    .filter(([, c]) => !(c as Check).ok)
    .map(([n]) => n as string);
  return { probe, happened, lost, doubled, orphans, code, outcome: failed.length ? 'FAIL' : 'PASS', why: failed.length ? `failed: ${failed.join(', ')}` : undefined };
}

const notes: string[] = [];
let currentProbe = '';
const note = (text: string) => notes.push(`${currentProbe}: ${text}`);

/**
 * The common checks once the fault happened (A ended) and the same command ran again (B):
 * `before` = finished runs right after A; `expectBSkips` = B should find every task done already.
 */
function commonChecks(
  selected: readonly string[],
  before: DiskState,
  after: DiskState,
  a: Said,
  b: Said,
  opts: { aFinishedMustBeOnDisk?: boolean } = {},
): { lost: string[]; doubled: string[] } {
  const lost: string[] = [];
  const doubled: string[] = [];
  const finishedBefore = finishedNames(before);
  for (const name of finishedBefore) {
    const was = before.runs.get(name)!;
    const now = after.runs.get(name);
    for (const [f, sig] of Object.entries(was.files)) {
      const n = now?.files[f];
      if (!n) lost.push(`${name}/${f} finished before the fault, gone after the rerun`);
      else if (n.hash !== sig.hash || n.mtimeMs !== sig.mtimeMs) lost.push(`${name}/${f} finished before the fault, changed by the rerun`);
    }
  }
  for (const name of selected) {
    const r = after.runs.get(name);
    if (!r?.resultValid) lost.push(`${name}: no valid result.json after the rerun`);
    else if (r.status !== 'finished') lost.push(`${name}: ${r.status}${r.errorCode ? ` ${r.errorCode}` : ''} after the rerun`);
    else if (r.executionValid !== true) lost.push(`${name}: execution.json ${r.executionValid === null ? 'missing' : 'not valid JSON'}`);
    if (r?.tmpFiles.length) note(`${name}: temp files left in a run directory: ${r.tmpFiles.join(', ')}`);
    // The runner writes task.json's ended_at and status after the Agent's result.json: a kill in between leaves a finished run whose task.json never says it ended.
    if (r?.finished && r.task && (r.task.ended_at === undefined || r.task.status === undefined))
      note(`${name}: finished (result.json ${r.status}) but its task.json has no ended_at/status`);
  }
  for (const r of before.runs.values()) {
    if (r.finished && r.executionValid !== true) lost.push(`${r.name}: finished before the rerun, execution.json ${r.executionValid === null ? 'missing' : 'not valid JSON'}`);
  }
  if (after.stray.length) doubled.push(`stray directories ${after.stray.join(', ')}`);
  // B skips exactly what was finished, and runs each other task once.
  if (b.skipped !== finishedBefore.length) doubled.push(`the rerun skipped ${b.skipped ?? '?'} runs, ${finishedBefore.length} were finished`);
  for (const [task, statuses] of b.done) {
    if (finishedBefore.includes(task)) doubled.push(`${task} finished before the fault and ran again`);
    if (statuses.length > 1) doubled.push(`${task} reported ${statuses.length} times by the rerun`);
  }
  for (const [task, statuses] of a.done) {
    if (statuses.length > 1) doubled.push(`${task} reported ${statuses.length} times`);
    if (opts.aFinishedMustBeOnDisk !== false && statuses.includes('finished') && !finishedBefore.includes(task))
      lost.push(`${task} was reported finished, no finished result on disk`);
  }
  return { lost, doubled };
}

function orphanText(label: string, o: Orphans): string | undefined {
  if (o.left.length === 0) return undefined;
  return `${label}: ${o.left.length} process${o.left.length === 1 ? '' : 'es'} left ${Math.round(o.waitedMs / 1000)} s after the exit (${o.left
    .slice(0, 6)
    .map((p) => `${p.comm}[${p.pid}]`)
    .join(', ')}${o.left.length > 6 ? ', …' : ''})`;
}

const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

type Orphans = { left: Array<{ pid: number; comm: string }>; waitedMs: number };

/** No process of the probe outlived A (within 20 s of its end) nor B. */
function orphanCheck(a: Orphans, b: Orphans, extra: Array<string | undefined> = []): Check {
  const problems = [orphanText('after A', a), orphanText('after B', b), ...extra].filter((x): x is string => !!x);
  return checkOf(problems, `yes (A's last process gone ${fmtS(a.waitedMs)} after its end)`);
}

// ---------------------------------------------------------------- probes

const KILL_TASKS = ['click-button', 'hover-menu', 'modal-dialog', 'type-unicode', 'keyboard-arrows'];
const evalArgs = (ctx: Ctx, only: readonly string[], extra: string[] = []) => ['--tasks', SUITE, '--agent', AGENT, '--only', only.join(','), '--out', ctx.out, ...extra];
const RUN_DEADLINE = 240_000;

/** The second half every probe shares: wait for the faulted run A, run the same command again (B) after `between`, then the lost/doubled checks. */
async function thenRerun(
  ctx: Ctx,
  a: EvalRun,
  o: { args: string[]; tasks: readonly string[]; out?: string; deadlineMs?: number; afterA?: () => void; between?: () => Promise<void> | void },
) {
  const ax = await a.done;
  o.afterA?.();
  const oa = await orphansAfter(ctx);
  const before = scan(o.out ?? ctx.out, o.tasks);
  await o.between?.();
  const b = startEval(ctx, o.args, o.deadlineMs ?? RUN_DEADLINE);
  const bx = await b.done;
  const ob = await orphansAfter(ctx);
  const after = scan(o.out ?? ctx.out, o.tasks);
  const sa = said(a);
  const sb = said(b);
  return { ax, oa, before, b, bx, ob, after, sa, sb, ...commonChecks(o.tasks, before, after, sa, sb) };
}

/** Probe 1 (one round): kill -9 the runner at a random moment, then rerun to the end. */
async function probeKill(round: number): Promise<Row> {
  const ctx = await makeCtx(`k${round}`);
  const args = evalArgs(ctx, KILL_TASKS, ['--workers', '2']);
  const delay = 500 + rng() * 9500;
  const label = `1. kill -9 #${round} (at ${fmtS(delay)})`;
  const a = startEval(ctx, args, RUN_DEADLINE);
  await Promise.race([sleep(delay), a.done]);
  let at: string;
  if (a.exited) {
    at = `A ended on its own before the kill moment (${exitText(await a.done, a)}): no kill this round`;
  } else {
    const disk = scan(ctx.out, KILL_TASKS);
    const running = [...disk.runs.values()].filter((r) => !r.finished).length;
    const desktops = desktopsOf(a.pid).length;
    const procs = tiedProcesses(ctx).length;
    process.kill(a.pid, 'SIGKILL');
    at = `A killed at ${fmtS(performance.now() - a.t0)} with ${finishedNames(disk).length} finished, ${running} started, ${desktops} desktop${desktops === 1 ? '' : 's'} up (${procs} process${procs === 1 ? '' : 'es'})`;
  }
  const { ax, oa, b, bx, ob, after, sa, sb, lost, doubled } = await thenRerun(ctx, a, { args, tasks: KILL_TASKS });
  const codes = [...diskCodes(after)];
  const happened = `${at}; B: ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}; codes: ${codes.length ? codes.join(', ') : 'none'}`;
  const code: string[] = [];
  if (!a.exited || (ax.signal !== 'SIGKILL' && ax.code !== 0)) code.push(`A: ${exitText(ax, a)}`);
  if (bx.code !== 0) code.push(`B: ${exitText(bx, b)} (expected 0: every run finished)${lastWords(b)}`);
  if (sb.errorLines.length) code.push(`B said ${sb.errorLines.join(' / ')}`);
  stackProblems(sa, sb, code);
  return row(label, happened, checkOf(lost), checkOf(doubled), orphanCheck(oa, ob), checkOf(code, 'yes: B exit 0, no error code'));
}

/** Probe 2: SIGINT (Ctrl-C) once a task finished and another one's agent runs; then the same command. */
async function probeSigint(): Promise<Row> {
  const ctx = await makeCtx('int');
  const args = evalArgs(ctx, KILL_TASKS, ['--workers', '2']);
  const a = startEval(ctx, args, RUN_DEADLINE);
  const base = join(ctx.out, AGENT, RES);
  const runningAt = await waitFor(
    'finished task with another agent running',
    150_000,
    () => {
      const d = scan(ctx.out, KILL_TASKS);
      const running = KILL_TASKS.filter((t) => existsSync(join(base, t, 'partial_execution.json')) && !d.runs.get(t)?.finished);
      return finishedNames(d).length >= 1 && running.length >= 1 ? running : undefined;
    },
    a,
  );
  const desktops = desktopsOf(a.pid).length;
  const procs = tiedProcesses(ctx).length;
  killGroup(a.pid, 'SIGINT'); // what Ctrl-C in a terminal does: the foreground process group
  const t = performance.now();
  let cancelMs = 0;
  const { ax, oa, before, b, bx, ob, after, sa, sb, lost, doubled } = await thenRerun(ctx, a, {
    args,
    tasks: KILL_TASKS,
    afterA: () => {
      cancelMs = performance.now() - t;
    },
  });
  const leftovers = [...before.runs.values()].filter((r) => !r.finished).map((r) => `${r.name}${r.status ? ` (${r.status})` : ''}`);
  const code: string[] = [];
  if (ax.code !== 1) code.push(`A: ${exitText(ax, a)} (expected exit 1: cancelled)`);
  if (!/vncua eval: SIGINT, cancelling/.test(a.stderr)) code.push('A did not say "SIGINT, cancelling"');
  if (leftovers.length) code.push(`cancelled runs left on disk: ${leftovers.join(', ')} (README: removed)`);
  if (/^scores: /m.test(a.stdout)) code.push('a cancelled run wrote scores');
  if (bx.code !== 0) code.push(`B: ${exitText(bx, b)}${lastWords(b)}`);
  stackProblems(sa, sb, code);
  const happened = `A: SIGINT at ${fmtS(t - a.t0)} (${finishedNames(before).length} finished, agent running in ${runningAt.join(', ')}, ${desktops} desktop${desktops === 1 ? '' : 's'} up, ${procs} processes) -> ${exitText(ax, a)}, ${fmtS(cancelMs)} after the signal; B: ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}; codes: ${diskCodes(after).join(', ') || 'none'}`;
  return row('2. SIGINT (Ctrl-C) mid-run, then rerun', happened, checkOf(lost), checkOf(doubled), orphanCheck(oa, ob), checkOf(code, 'yes: exit 1 (cancelled), then 0'));
}

/** Probes 3 and 4: kill a part (Xvnc, or Chromium's browser process) of the desktop of a running task. */
async function probeDesktopPart(part: 'xvnc' | 'chromium'): Promise<Row> {
  const ctx = await makeCtx(part);
  const tasks = ['nav-forward', 'click-button'];
  const target = tasks[0]!;
  const args = evalArgs(ctx, tasks, ['--workers', '1']);
  const label = part === 'xvnc' ? '3. Xvnc of a running task killed' : '4. Chromium (browser process) of a running task killed';
  const a = startEval(ctx, args, RUN_DEADLINE);
  const dir = join(ctx.out, AGENT, RES, target);
  // The agent runs (its trace exists) on a desktop task.json names.
  const { pid: desktopPid, display } = await waitFor(
    `agent running on ${target}`,
    150_000,
    () => {
      if (!existsSync(join(dir, 'partial_execution.json'))) return undefined;
      const t = parseJson(join(dir, 'task.json'));
      const desktop = t?.ok ? (t.value as RunState['task'])?.desktop : undefined;
      return typeof desktop?.pid === 'number' ? { pid: desktop.pid, display: desktop.display } : undefined;
    },
    a,
  );
  await sleep(500);
  const st = procStat(desktopPid);
  if (!st || st.ppid !== a.pid) throw new Error(`the desktop of ${target} (start script ${desktopPid}) is not a live child of the runner ${a.pid} (ppid ${st?.ppid})`);
  const members = groupMembers(desktopPid);
  const victim = members.find((pid) => (part === 'xvnc' ? comm(pid) === 'Xvnc' : comm(pid) === 'chromium' && !cmdline(pid).some((x) => x.startsWith('--type='))));
  if (victim === undefined) throw new Error(`no ${part} process in the desktop's group ${desktopPid} (${members.map((p) => comm(p)).join(', ')})`);
  const desktopTag = readProc(victim, 'environ')
    ?.toString()
    .split('\0')
    .find((e) => e.startsWith('VNCUA_DESKTOP_TAG='))
    ?.slice('VNCUA_DESKTOP_TAG='.length);
  const killedAt = performance.now() - a.t0;
  process.kill(victim, 'SIGKILL');
  // The broken desktop goes away while the runner goes on.
  const tk = performance.now();
  const desktopGoneMs = await waitFor('teardown of the broken desktop', 30_000, () =>
    groupMembers(desktopPid).length === 0 && (!desktopTag || !tiedProcesses(ctx).some((p) => readProc(p.pid, 'environ')?.includes(Buffer.from(desktopTag)) ?? false))
      ? performance.now() - tk
      : undefined,
  ).catch((e: Error) => e.message);
  const { ax, oa, before, b, bx, ob, after, sa, sb, lost, doubled } = await thenRerun(ctx, a, { args, tasks });
  const tr = after.runs.get(target);
  const attemptCodes = (tr?.task?.infra_errors ?? []).map((e) => e.code);
  const code: string[] = [];
  if (attemptCodes.length === 0) code.push(`${target}: no infra failure recorded in task.json (status ${tr?.status ?? '?'} ${tr?.errorCode ?? ''})`);
  const nonInfra = attemptCodes.filter((c) => !isInfraErrorCode(c));
  if (nonInfra.length) code.push(`not infra codes: ${nonInfra.join(', ')}`);
  const retryLine = sa.retries.find((r) => r.task === target);
  if (attemptCodes.length && !retryLine) code.push('no "infra failure on attempt 1 … retrying" line');
  const aExpected = before.runs.get(target)?.status === 'infra_error' ? 1 : 0;
  if (ax.code !== aExpected) code.push(`A: ${exitText(ax, a)} (expected ${aExpected})`);
  if (bx.code !== 0) code.push(`B: ${exitText(bx, b)}${lastWords(b)}`);
  stackProblems(sa, sb, code);
  // Xvnc's display lock: removed by the start script once Xvnc is gone.
  let lockNote = '';
  if (part === 'xvnc' && display) {
    const lock = `/tmp/.X${display.slice(1)}-lock`;
    const owner = existsSync(lock) ? Number(readFileSync(lock, 'utf8').trim()) : undefined;
    if (owner === victim) lockNote = `; the killed Xvnc's lock ${lock} is left`;
  }
  const orphans = orphanCheck(oa, ob, [typeof desktopGoneMs === 'string' ? `the broken desktop: ${desktopGoneMs}` : undefined, lockNote ? lockNote.slice(2) : undefined]);
  if (part === 'xvnc') note(`the killed Xvnc's display ${display ?? '?'}: lock file ${lockNote ? 'LEFT' : 'removed'} by the start script`);
  const happened = `A: ${part === 'xvnc' ? 'Xvnc' : 'Chromium'} pid ${victim} of ${target}'s desktop (start script ${desktopPid}, child of the runner) SIGKILLed at ${fmtS(killedAt)}, its desktop gone ${typeof desktopGoneMs === 'number' ? `${fmtS(desktopGoneMs)} later` : 'NOT'}; ${target}: attempt ${tr?.task?.attempt ?? '?'} ${tr?.status ?? '?'} after ${attemptCodes.join(', ') || 'no infra error'}; A: ${exitText(ax, a)}; B: ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}`;
  return row(label, happened, checkOf(lost), checkOf(doubled), orphans, checkOf(code, `yes: ${attemptCodes.join(', ')} (infra), retried, exit ${ax.code}`));
}

/** Serve a directory on 127.0.0.1 (port 0: any), GET only. */
async function serveSuite(port = 0): Promise<{ url: string; port: number; server: Server; close(): Promise<void> }> {
  const base = resolve(SUITE_DIR) + sep;
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.css': 'text/css',
    '.js': 'text/javascript',
    '.json': 'application/json',
    '.png': 'image/png',
    '.svg': 'image/svg+xml',
  };
  const server = createServer((req, res) => {
    const path = normalize(join(base, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (req.method !== 'GET' || !path.startsWith(base)) return void res.writeHead(404).end();
    readFile(path).then(
      (data) => res.writeHead(200, { 'content-type': types[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(data),
      () => res.writeHead(404).end(),
    );
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => ok());
  });
  const p = (server.address() as AddressInfo).port;
  let closed = false;
  return {
    url: `http://127.0.0.1:${p}/`,
    port: p,
    server,
    close: () => {
      if (closed) return Promise.resolve();
      closed = true;
      return new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      });
    },
  };
}

/** Probe 5: the task server stops once the first task finished; B with it back on the same port. */
async function probeServer(): Promise<Row> {
  const ctx = await makeCtx('srv');
  const tasks = ['click-button', 'hover-menu', 'double-click-file'];
  let srv = await serveSuite();
  try {
    const args = evalArgs(ctx, tasks, ['--workers', '1', '--base-url', srv.url]);
    const a = startEval(ctx, args, RUN_DEADLINE);
    await waitFor('first finished task', 150_000, () => finishedNames(scan(ctx.out, tasks)).length >= 1, a);
    const stoppedAt = performance.now() - a.t0;
    await srv.close();
    const { ax, oa, before, b, bx, ob, sa, sb, lost, doubled } = await thenRerun(ctx, a, {
      args,
      tasks,
      between: async () => {
        srv = await serveSuite(srv.port);
      },
    });
    const unreached = [...before.runs.values()].filter((r) => !r.finished);
    const code: string[] = [];
    if (unreached.length === 0) code.push('every task finished although the server was stopped');
    for (const r of unreached)
      if (r.status !== 'infra_error' || r.errorCode !== 'PAGE_ERR_UNREACHABLE')
        code.push(`${r.name}: ${r.status ?? 'no result'} ${r.errorCode ?? ''} (expected infra_error PAGE_ERR_UNREACHABLE)`);
    const expectedA = unreached.length ? 1 : 0;
    if (ax.code !== expectedA) code.push(`A: ${exitText(ax, a)} (expected ${expectedA}: infra errors remain)`);
    if (unreached.length && !/infra errors? \(PAGE_ERR_UNREACHABLE/.test(a.stdout)) code.push('no "infra errors (PAGE_ERR_UNREACHABLE ×N)" in the last line');
    if (bx.code !== 0) code.push(`B: ${exitText(bx, b)}${lastWords(b)}`);
    stackProblems(sa, sb, code);
    const happened = `A: server closed at ${fmtS(stoppedAt)} after 1 finished -> ${exitText(ax, a)}; ${unreached.map((r) => `${r.name}: ${r.status} ${r.errorCode ?? ''} after ${r.task?.infra_errors?.length ?? '?'} attempts`).join(', ') || 'nothing unfinished'}; B (server back on port ${srv.port}): ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}`;
    return row(
      '5. task server stops mid-suite',
      happened,
      checkOf(lost),
      checkOf(doubled),
      orphanCheck(oa, ob),
      checkOf(code, 'yes: infra_error PAGE_ERR_UNREACHABLE, exit 1, then 0'),
    );
  } finally {
    await srv.close();
  }
}

/** Probe 6: --out on a nearly full 2 MiB tmpfs. */
async function probeDisk(): Promise<Row> {
  const label = '6. full disk for the results root (2 MiB tmpfs)';
  const ctx = await makeCtx('disk');
  const mnt = join(ctx.dir, 'mnt');
  await mkdir(mnt);
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { encoding: 'utf8', timeout: 10_000 });
  if (m.status !== 0) {
    return { probe: label, happened: 'not run', outcome: 'SKIPPED', why: `mount -t tmpfs failed: ${(m.stderr || m.error?.message || `exit ${m.status}`).trim()}` };
  }
  mounts.push(mnt);
  try {
    const out = join(mnt, 'out');
    ctx.out = out;
    // ~400 KiB left: the first two small runs fit (~100 KiB each), the third (scroll-find, ~600 KiB) fills the disk.
    const filler = join(mnt, 'filler');
    await writeFile(filler, Buffer.alloc(1600 * 1024));
    const tasks = ['click-button', 'hover-menu', 'scroll-find', 'form-signup'];
    const args = evalArgs(ctx, tasks, ['--workers', '1']);
    const a = startEval(ctx, args, RUN_DEADLINE);
    // Between A and B the user frees the disk, then runs the same command.
    const { ax, oa, before, b, bx, ob, sa, sb, lost, doubled } = await thenRerun(ctx, a, { args, tasks, out, between: () => rm(filler) });
    const code: string[] = [];
    const enospc = /ENOSPC|no space left/i.test(a.stderr + a.stdout);
    stackProblems(sa, sb, code);
    if (ax.code === 0) code.push('A: exit 0 on a full disk');
    if (!enospc) code.push('ENOSPC never mentioned');
    if (sa.errorLines.length === 0 && !diskCodes(before).length) code.push('no coded error');
    // A run that ended on the disk error but counts as finished would be skipped forever (and scored as the agent's failure).
    for (const r of before.runs.values())
      if (r.finished && r.status !== 'finished') code.push(`${r.name}: ${r.status} ${r.errorCode ?? ''} counts as finished (the rerun skips it)`);
    if (bx.code !== 0) code.push(`B: ${exitText(bx, b)}${lastWords(b)}`);
    const partial = [...before.runs.values()].filter((r) => !r.finished).map((r) => `${r.name} (${Object.keys(r.files).join('+') || 'empty'})`);
    const happened = `A: ${exitText(ax, a)}; ${sa.errorLines.map((l) => l.replace(/^vncua eval: /, '').slice(0, 220)).join(' / ') || 'no error line'}; finished ${finishedNames(before).join(', ') || 'none'}; unfinished ${partial.join(', ') || 'none'}; B (filler removed): ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}`;
    const codeOk = `yes: ${sa.errorLines.map((l) => /^vncua eval: ([A-Z_]+)/.exec(l)?.[1]).join(', ')} (ENOSPC), exit ${ax.code}, then 0`;
    return row(label, happened, checkOf(lost), checkOf(doubled), orphanCheck(oa, ob), checkOf(code, codeOk));
  } finally {
    await unmount(mnt);
  }
}

const mounts: string[] = [];
async function unmount(mnt: string): Promise<void> {
  if (!mounts.includes(mnt)) return;
  for (let i = 0; i < 20; i++) {
    if (spawnSync('umount', [mnt], { timeout: 10_000 }).status === 0) break;
    await sleep(250);
    if (i === 19) spawnSync('umount', ['-l', mnt], { timeout: 10_000 });
  }
  mounts.splice(mounts.indexOf(mnt), 1);
}

/** Probe 7: --workers 4 × cores over the whole suite at 1280x800. */
async function probeOverload(): Promise<Row> {
  const ctx = await makeCtx('load');
  const all = (JSON.parse(readFileSync(SUITE, 'utf8')) as Array<{ id: string }>).map((t) => t.id);
  const workers = 4 * cpus().length;
  const args = ['--tasks', SUITE, '--agent', AGENT, '--resolution', '1280x800', '--workers', String(workers), '--out', ctx.out];
  let peak = 0;
  const a = startEval(ctx, args, 420_000);
  const sampler = setInterval(() => (peak = Math.max(peak, desktopsOf(a.pid).length)), 500);
  const { ax, oa, before, b, bx, ob, sa, sb, lost, doubled } = await thenRerun(ctx, a, {
    args,
    tasks: all,
    deadlineMs: 420_000,
    afterA: () => clearInterval(sampler),
  });
  const code: string[] = [];
  const warning = a.stderr.split('\n').find((l) => l.startsWith(`vncua eval: warning: --workers ${workers} is more than this machine can hold`));
  if (!warning) code.push('no --workers warning line');
  const infra = [...before.runs.values()].filter((r) => !r.finished);
  const nonInfra = [...before.runs.values()].filter((r) => r.finished && r.status !== 'finished');
  for (const r of nonInfra) code.push(`${r.name}: ${r.status} ${r.errorCode ?? ''}`);
  if (ax.code !== (infra.length ? 1 : 0)) code.push(`A: ${exitText(ax, a)} with ${infra.length} infra errors`);
  for (const r of infra) if (!isInfraErrorCode(r.errorCode)) code.push(`${r.name}: ${r.status} ${r.errorCode ?? ''} (not an infra code)`);
  if (bx.code !== 0) code.push(`B: ${exitText(bx, b)}${lastWords(b)}`);
  stackProblems(sa, sb, code);
  const retried = sa.retries.map((r) => `${r.task}#${r.attempt} ${r.code}`);
  const succeeded = /(\d+) succeeded/.exec(
    a.stdout
      .split('\n')
      .filter((l) => l.includes('done'))
      .pop() ?? '',
  )?.[1];
  const happened = `A: ${all.length} tasks, ${workers} workers on ${cpus().length} cores (peak ${peak} desktops at once) -> ${exitText(ax, a)}, ${succeeded ?? '?'} succeeded, ${retried.length} infra retries${retried.length ? ` (${retried.slice(0, 4).join(', ')}${retried.length > 4 ? ', …' : ''})` : ''}, ${infra.length} infra errors left; B: ${exitText(bx, b)}, skipped ${sb.skipped ?? '?'}, ran ${sb.done.size}`;
  const ok = `yes: warning "${warning?.replace(/^.*recommended: /, 'recommended: ') ?? ''}", exit ${ax.code}`;
  return row(`7. overload: --workers ${workers} (4 × ${cpus().length} cores), whole suite`, happened, checkOf(lost), checkOf(doubled), orphanCheck(oa, ob), checkOf(code, ok));
}

// ---------------------------------------------------------------- main

async function guarded(name: string, fn: () => Promise<Row>): Promise<Row> {
  log(`${name}...`);
  currentProbe = name;
  const t = performance.now();
  let r: Row;
  try {
    r = await fn();
  } catch (e) {
    r = { probe: name, happened: 'the probe could not complete', outcome: 'FAIL', why: (e as Error).message.replace(/\s+/g, ' ').slice(0, 600) };
  }
  // Whatever the probe left running (a runner it gave up on, a desktop) goes before the next one.
  for (const run of [...liveChildren]) killGroup(run.pid, 'SIGKILL');
  for (const ctx of contexts) await orphansAfter(ctx, 0);
  log(`${name}: ${r.outcome}${r.why ? ` (${r.why})` : ''} in ${fmtS(performance.now() - t)}`);
  return r;
}

const cell = (s: string | undefined) => (s ?? '').replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

async function main(): Promise<void> {
  const t0 = performance.now();
  work = await mkdtemp(join(tmpdir(), 'vrel-'));
  const rows: Row[] = [];
  // Ctrl-C / SIGTERM of the bench itself: stop what it started, unmount, remove its files, exit 1.
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: cleaning up`);
    for (const run of [...liveChildren]) killGroup(run.pid, 'SIGKILL');
    for (const ctx of contexts) for (const p of tiedProcesses(ctx)) killPid(p.pid);
    for (const mnt of mounts) if (spawnSync('umount', [mnt], { timeout: 10_000 }).status !== 0) spawnSync('umount', ['-l', mnt], { timeout: 10_000 });
    rmSync(work, { recursive: true, force: true });
    process.exit(1);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (wanted(1)) for (let i = 1; i <= kills; i++) rows.push(await guarded(`1. kill -9 #${i}`, () => probeKill(i)));
    if (wanted(2)) rows.push(await guarded('2. SIGINT (Ctrl-C) mid-run, then rerun', probeSigint));
    if (wanted(3)) rows.push(await guarded('3. Xvnc of a running task killed', () => probeDesktopPart('xvnc')));
    if (wanted(4)) rows.push(await guarded('4. Chromium (browser process) of a running task killed', () => probeDesktopPart('chromium')));
    if (wanted(5)) rows.push(await guarded('5. task server stops mid-suite', probeServer));
    if (wanted(6)) rows.push(await guarded('6. full disk for the results root (2 MiB tmpfs)', probeDisk));
    if (wanted(7)) rows.push(await guarded(`7. overload: --workers ${4 * cpus().length}`, probeOverload));
  } finally {
    for (const run of [...liveChildren]) killGroup(run.pid, 'SIGKILL');
    for (const ctx of contexts) await orphansAfter(ctx, 2000);
    for (const mnt of [...mounts]) await unmount(mnt);
    await rm(work, { recursive: true, force: true }).catch((e: Error) => log(`could not remove ${work}: ${e.message}`));
  }
  const pass = rows.filter((r) => r.outcome === 'PASS').length;
  const fail = rows.filter((r) => r.outcome === 'FAIL').length;
  const skip = rows.filter((r) => r.outcome === 'SKIPPED').length;
  const header = `\nFault probes on \`vncua eval\` (the CLI in a child process; basic suite, replay agent, --only a few tasks; A = the run with the fault, B = the same command again), seed ${seed}, ${kills} kill${kills === 1 ? '' : 's'}, ${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${fmtS(performance.now() - t0)} in all: ${pass} PASS, ${fail} FAIL, ${skip} SKIPPED.\n\n`;
  const body = table(
    ['Probe', 'What happened', 'Nothing lost', 'Nothing doubled', 'No orphan process', 'Right code', 'Outcome'],
    rows.map((r) =>
      [r.probe, r.happened, r.lost?.text ?? '-', r.doubled?.text ?? '-', r.orphans?.text ?? '-', r.code?.text ?? '-', `${r.outcome}${r.why ? `: ${r.why}` : ''}`].map(cell),
    ),
  );
  const extra = notes.length ? `\n\nNotes:\n\n${[...new Set(notes)].map((n) => `- ${n}`).join('\n')}\n` : '\n';
  process.stdout.write(header + body + extra);
}

try {
  await main();
} catch (e) {
  process.stderr.write(`reliability: the script broke: ${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
}
