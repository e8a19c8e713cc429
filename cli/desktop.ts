/**
 * `vncua desktop up|down|list`: start a local desktop in the foreground (one JSON line on
 * stdout, then run until Ctrl-C, SIGTERM or `vncua desktop down`), stop recorded ones, list
 * them. Each running `up` records itself in <state dir>/<pid>.json; the state dir is
 * $VNCUA_STATE_DIR, else $XDG_RUNTIME_DIR/vncua-desktops, else <tmpdir>/vncua-desktops.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { VncuaError } from '../harness/errors.ts';
import { groupMembers, launchDesktop, procStat, stopGroup } from '../harness/desktop/index.ts';

const USAGE = `usage:
  vncua desktop up [--size WxH] [--url URL] [--password P] [--server xvnc|x11vnc] [--timeout-ms N]
      start a desktop, print one JSON line {vncUrl, tcpUrl, cdpUrl, display, pid, ...},
      run until Ctrl-C / SIGTERM / \`vncua desktop down\`
  vncua desktop down [--pid PID | --all]
      stop the desktops started by \`desktop up\` (default: all of them)
  vncua desktop list
      print one JSON line per running desktop
`;

/** What `desktop up` records about itself. */
interface DesktopRecord {
  /** Pid of the `vncua desktop up` process. */
  pid: number;
  /** Its start time (/proc ticks), so a reused pid is never mistaken for it. */
  startTicks: number;
  /** Pid (and process group) of the desktop's start script. */
  desktopPid: number;
  vncUrl: string;
  tcpUrl: string;
  cdpUrl: string;
  display: string;
  width: number;
  height: number;
  startedAt: string;
}

/** Directory holding one <pid>.json per running `vncua desktop up`. */
export function stateDir(): string {
  const env = process.env;
  if (env.VNCUA_STATE_DIR) return env.VNCUA_STATE_DIR;
  return join(env.XDG_RUNTIME_DIR || tmpdir(), 'vncua-desktops');
}

/** Run `vncua desktop ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'up':
      return up(rest);
    case 'down':
      return down(rest);
    case 'list':
    case 'ls':
      return list();
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(sub ? `vncua desktop: unknown subcommand "${sub}"\n${USAGE}` : USAGE);
      return 2;
  }
}

/** Parse `--name value` / `--name=value` options; flags listed in `flags` take no value. */
function parseOptions(argv: string[], valued: string[], flags: string[] = []): Map<string, string> | string {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (flags.includes(name) && eq < 0) {
      out.set(name, 'true');
    } else if (valued.includes(name)) {
      const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined) return `${name} needs a value`;
      out.set(name, value);
    } else {
      return `unknown argument "${arg}"`;
    }
  }
  return out;
}

async function up(argv: string[]): Promise<number> {
  const opts = parseOptions(argv, ['--size', '--url', '--password', '--server', '--timeout-ms']);
  if (typeof opts === 'string') {
    process.stderr.write(`vncua desktop up: ${opts}\n${USAGE}`);
    return 2;
  }
  const timeoutMs = opts.has('--timeout-ms') ? Number(opts.get('--timeout-ms')) : undefined;
  if (timeoutMs !== undefined && !(timeoutMs > 0)) {
    process.stderr.write(`vncua desktop up: --timeout-ms must be a positive number of ms\n`);
    return 2;
  }
  const server = opts.get('--server');
  if (server !== undefined && server !== 'xvnc' && server !== 'x11vnc') {
    process.stderr.write(`vncua desktop up: --server must be xvnc or x11vnc, not "${server}"\n`);
    return 2;
  }

  // Ctrl-C while starting cancels the start (nothing is left running).
  const starting = new AbortController();
  const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let stopRequested: () => void = () => starting.abort(new Error('stopped by a signal'));
  const onSignal = () => stopRequested();
  for (const s of stopSignals) process.on(s, onSignal);
  try {
    const desktop = await launchDesktop({
      size: opts.get('--size'),
      url: opts.get('--url'),
      password: opts.get('--password'),
      server,
      timeoutMs,
      signal: starting.signal,
    });
    const record: DesktopRecord = {
      vncUrl: desktop.vncUrl,
      tcpUrl: desktop.tcpUrl,
      cdpUrl: desktop.cdpUrl,
      display: desktop.display,
      pid: process.pid,
      startTicks: procStat(process.pid)?.startTicks ?? 0,
      desktopPid: desktop.pid,
      width: desktop.width,
      height: desktop.height,
      startedAt: new Date().toISOString(),
    };
    const file = join(stateDir(), `${process.pid}.json`);
    try {
      mkdirSync(stateDir(), { recursive: true, mode: 0o700 });
      writeFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
    } catch (e) {
      process.stderr.write(`vncua desktop up: could not record the desktop in ${file} (${String(e)}); \`desktop down\` will not see it\n`);
    }
    process.stdout.write(`${JSON.stringify({ ...record, rfbPort: desktop.rfbPort, wsPort: desktop.wsPort, cdpPort: desktop.cdpPort })}\n`);

    // Run until a signal or until the desktop dies on its own.
    const keepAlive = setInterval(() => {}, 1 << 30);
    const outcome = await new Promise<'signal' | 'died'>((resolve) => {
      stopRequested = () => resolve('signal');
      void desktop.exited.then(() => resolve('died'));
    });
    clearInterval(keepAlive);
    await desktop.close();
    try {
      rmSync(file, { force: true });
    } catch {
      // nothing to do
    }
    if (outcome === 'died') {
      process.stderr.write('vncua desktop up: the desktop stopped on its own (a part of it exited)\n');
      return 1;
    }
    return 0;
  } finally {
    for (const s of stopSignals) process.off(s, onSignal);
  }
}

/** The recorded desktops whose `up` process is still running; stale records are removed. */
function readRecords(): DesktopRecord[] {
  const dir = stateDir();
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const out: DesktopRecord[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let rec: DesktopRecord | undefined;
    try {
      rec = JSON.parse(readFileSync(file, 'utf8')) as DesktopRecord;
    } catch {
      rec = undefined;
    }
    const running = rec && Number.isInteger(rec.pid) && (upIsAlive(rec) || groupMembers(rec.desktopPid).length > 0);
    if (rec && running) out.push(rec);
    else rmSync(file, { force: true });
  }
  return out.sort((a, b) => a.pid - b.pid);
}

async function down(argv: string[]): Promise<number> {
  const opts = parseOptions(argv, ['--pid'], ['--all']);
  if (typeof opts === 'string') {
    process.stderr.write(`vncua desktop down: ${opts}\n${USAGE}`);
    return 2;
  }
  const pidArg = opts.get('--pid');
  const pid = pidArg === undefined ? undefined : Number(pidArg);
  if (pidArg !== undefined && !Number.isInteger(pid)) {
    process.stderr.write(`vncua desktop down: --pid needs a process id\n`);
    return 2;
  }
  const records = readRecords().filter((r) => pid === undefined || r.pid === pid || r.desktopPid === pid);
  if (records.length === 0) {
    const which = pid === undefined ? 'No desktop' : `No desktop with pid ${pid}`;
    throw new VncuaError('DESKTOP_ERR_NOT_RUNNING', `${which} started by \`vncua desktop up\` is running (state dir ${stateDir()}).`, {
      details: { pid, stateDir: stateDir() },
    });
  }
  const results = await Promise.all(records.map(stopRecorded));
  for (const [i, r] of records.entries()) {
    process.stdout.write(`stopped desktop ${r.display} (pid ${r.pid}, ${r.vncUrl}, ${r.cdpUrl})${results[i] ? '' : ' [forced]'}\n`);
  }
  return 0;
}

/** The recorded `desktop up` process still runs (same pid and same start time). */
function upIsAlive(r: DesktopRecord): boolean {
  const s = procStat(r.pid);
  return s !== undefined && s.state !== 'Z' && s.startTicks === r.startTicks;
}

/** SIGTERM a `desktop up` process and wait until it and its desktop are gone (forcing after 15 s). */
async function stopRecorded(r: DesktopRecord): Promise<boolean> {
  try {
    if (upIsAlive(r)) process.kill(r.pid, 'SIGTERM');
  } catch {
    // already gone: its desktop dies on its own (stdin EOF) or is stopped below
  }
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (!upIsAlive(r) && groupMembers(r.desktopPid).length === 0) {
      rmSync(join(stateDir(), `${r.pid}.json`), { force: true });
      return true;
    }
    await sleep(20);
  }
  await stopGroup(r.desktopPid, r.desktopPid);
  try {
    if (upIsAlive(r)) process.kill(r.pid, 'SIGKILL');
  } catch {
    // gone
  }
  rmSync(join(stateDir(), `${r.pid}.json`), { force: true });
  return false;
}

function list(): number {
  for (const r of readRecords()) process.stdout.write(`${JSON.stringify(r)}\n`);
  return 0;
}
