/**
 * `vncua desktop up|down|list`: start a local desktop in the foreground (one JSON line on
 * stdout, then run until Ctrl-C, SIGTERM or `vncua desktop down`), stop recorded ones, list
 * them. Each running `up` records itself in <state dir>/<pid>.json (mode 0600: its URLs carry
 * the desktop's token); the state dir is $VNCUA_STATE_DIR, else $XDG_RUNTIME_DIR/vncua-desktops,
 * else <tmpdir>/vncua-desktops-<uid>, and must be this user's with mode 0700.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { VncuaError } from '../harness/errors.ts';
import { groupMembers, launchDesktop, parseScreenSize, procStat, stopGroup } from '../harness/desktop/index.ts';
import { readPassword } from '../harness/desktop/password.ts';
import { redactUrl } from '../harness/redact.ts';
import { oneOf, optionalWholeNumber, parseCommandArgs, parseCommandLine, parsedValue, usageText, wholeNumber, type CommandSpec } from './command.ts';

/** `desktop up`'s options: its --help is generated from them. */
export const DESKTOP_UP_SPEC = {
  command: 'desktop up',
  options: {
    size: { type: 'string', value: 'WxH', description: 'screen size (default 1280x800)' },
    url: { type: 'string', value: 'URL', description: 'page the browser opens (default about:blank)' },
    server: { type: 'string', value: 'xvnc|x11vnc', description: 'the VNC server (default xvnc)' },
    'timeout-ms': { type: 'string', value: 'N', description: 'how long the desktop may take to start' },
    'password-file': { type: 'string', value: 'FILE', description: 'VNC password: the first line of FILE (else $VNCUA_VNC_PASSWORD; never on the command line)' },
  },
  refused: {
    password: () =>
      new VncuaError(
        'DESKTOP_ERR_BAD_PASSWORD',
        '--password is refused: `ps` would show the password to every user; use --password-file FILE or the environment variable VNCUA_VNC_PASSWORD.',
        {
          details: { argument: '--password' },
        },
      ),
  },
  notes: `start a desktop, print one JSON line {vncUrl, cdpUrl, tcpUrl, display, xauthority, pid, ...}, run until
Ctrl-C / SIGTERM / \`vncua desktop down\`. vncUrl and cdpUrl carry the desktop's secret token.
`,
} as const satisfies CommandSpec;

/** `desktop down`'s options. */
export const DESKTOP_DOWN_SPEC = {
  command: 'desktop down',
  options: {
    pid: { type: 'string', value: 'PID', description: 'stop the desktop of this `desktop up` (or desktop script) pid' },
    all: { type: 'boolean', description: 'stop all of them (the default)' },
  },
  notes: 'stop the desktops started by `desktop up`\n',
} as const satisfies CommandSpec;

/** `desktop list`'s options: none. */
export const DESKTOP_LIST_SPEC = {
  command: 'desktop list',
  options: {},
  notes: 'print one JSON line per running desktop (only you can read them: they hold the tokens)\n',
} as const satisfies CommandSpec;

const EXIT_CODES = 'exit code: 0 ok, 1 the desktop failed or stopped on its own, 2 bad arguments (a bad password too)\n';
const USAGE = [DESKTOP_UP_SPEC, DESKTOP_DOWN_SPEC, DESKTOP_LIST_SPEC].map((spec) => usageText(spec)).join('') + EXIT_CODES;

/** What `desktop up` records about itself. */
interface DesktopRecord {
  /** Pid of the `vncua desktop up` process. */
  pid: number;
  /** Its start time (/proc ticks), so a reused pid is never mistaken for it. */
  startTicks: number;
  /** Pid (and process group) of the desktop's start script. */
  desktopPid: number;
  vncUrl: string;
  tcpUrl?: string;
  cdpUrl: string;
  display: string;
  xauthority: string;
  width: number;
  height: number;
  startedAt: string;
}

/** Directory holding one <pid>.json per running `vncua desktop up`. */
export function stateDir(): string {
  const env = process.env;
  if (env.VNCUA_STATE_DIR) return env.VNCUA_STATE_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'vncua-desktops');
  return join(tmpdir(), `vncua-desktops-${process.getuid?.() ?? 'user'}`);
}

/** Why `st` is not a private directory of this user, or undefined when it is one. */
function notPrivate(st: Stats): string | undefined {
  const uid = process.getuid?.();
  if (!st.isDirectory()) return 'not a directory';
  if (uid !== undefined && st.uid !== uid) return `owned by uid ${st.uid}, not you`;
  if ((st.mode & 0o077) !== 0) return `open to other users (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/**
 * The state dir (created 0700 with `create`; undefined when it does not exist); DESKTOP_ERR_STATE_DIR
 * unless it is a directory of this user that nobody else can enter (its records hold tokens).
 */
function privateStateDir(create: boolean): string | undefined {
  const dir = stateDir();
  if (create) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new VncuaError(
        'DESKTOP_ERR_STATE_DIR',
        `Cannot create the state dir ${dir} (${(e as NodeJS.ErrnoException).code ?? String(e)}); set VNCUA_STATE_DIR to a directory of yours.`,
        {
          details: { dir },
        },
      );
    }
  }
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch {
    return undefined;
  }
  const why = notPrivate(st);
  if (why !== undefined) {
    throw new VncuaError(
      'DESKTOP_ERR_STATE_DIR',
      `The state dir ${dir} is ${why}: its records hold the desktops' tokens. Use a directory of yours with mode 0700 (chmod 700 it, or set VNCUA_STATE_DIR).`,
      {
        details: { dir },
      },
    );
  }
  return dir;
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
      return list(rest);
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(sub ? `vncua desktop: CLI_ERR_BAD_ARGS: unknown subcommand "${sub}"\n${USAGE}` : USAGE);
      return 2;
  }
}

/** What `desktop up` was asked for. */
interface UpOptions {
  size?: string;
  url?: string;
  server?: 'xvnc' | 'x11vnc';
  timeoutMs?: number;
  password?: string;
}

function parseUp(argv: string[]): UpOptions | undefined {
  const line = parseCommandLine(DESKTOP_UP_SPEC, argv);
  if (line === undefined) return undefined;
  const v = line.values;
  const o: UpOptions = {};
  if (v.size !== undefined) {
    parsedValue(v.size, '--size', parseScreenSize);
    o.size = v.size;
  }
  if (v.url !== undefined) o.url = v.url;
  if (v['timeout-ms'] !== undefined) o.timeoutMs = wholeNumber(v['timeout-ms'], '--timeout-ms', 1);
  if (v.server !== undefined) o.server = oneOf(v.server, '--server', ['xvnc', 'x11vnc']);
  const password = readPassword({ file: v['password-file'] }, { warn: (m) => process.stderr.write(`vncua desktop up: warning: ${m}\n`) });
  if (password !== undefined) o.password = password;
  return o;
}

async function up(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(DESKTOP_UP_SPEC, () => parseUp(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  const dir = privateStateDir(true)!;

  // Ctrl-C while starting cancels the start (nothing is left running).
  const starting = new AbortController();
  const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let stopRequested: () => void = () => starting.abort(new Error('stopped by a signal'));
  const onSignal = () => stopRequested();
  for (const s of stopSignals) process.on(s, onSignal);
  try {
    const desktop = await launchDesktop({
      ...o,
      // The password was read above (--password-file or VNCUA_VNC_PASSWORD); none means none.
      env: { VNCUA_VNC_PASSWORD: undefined },
      signal: starting.signal,
    });
    const record: DesktopRecord = {
      vncUrl: desktop.vncUrl,
      tcpUrl: desktop.tcpUrl,
      cdpUrl: desktop.cdpUrl,
      display: desktop.display,
      xauthority: desktop.xauthority,
      pid: process.pid,
      startTicks: procStat(process.pid)?.startTicks ?? 0,
      desktopPid: desktop.pid,
      width: desktop.width,
      height: desktop.height,
      startedAt: new Date().toISOString(),
    };
    const file = join(dir, `${process.pid}.json`);
    try {
      rmSync(file, { force: true }); // a stale record of an earlier process with our pid
      writeFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600, flag: 'wx' });
    } catch (e) {
      process.stderr.write(`vncua desktop up: could not record the desktop in ${file} (${String(e)}); \`desktop down\` will not see it\n`);
    }
    process.stdout.write(
      `${JSON.stringify({ ...record, rfbSocket: desktop.rfbSocket, rfbPort: desktop.rfbPort ?? null, wsPort: desktop.wsPort, cdpPort: desktop.cdpPort, vncAuth: desktop.vncAuth })}\n`,
    );

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
  const dir = privateStateDir(false);
  if (dir === undefined) return [];
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
  const parsed = parseCommandArgs(DESKTOP_DOWN_SPEC, () => {
    const line = parseCommandLine(DESKTOP_DOWN_SPEC, argv);
    if (line === undefined) return undefined;
    return { pid: optionalWholeNumber(line.values.pid, '--pid', 1) };
  });
  if ('exitCode' in parsed) return parsed.exitCode;
  const { pid } = parsed.options;
  const records = readRecords().filter((r) => pid === undefined || r.pid === pid || r.desktopPid === pid);
  if (records.length === 0) {
    const which = pid === undefined ? 'No desktop' : `No desktop with pid ${pid}`;
    throw new VncuaError('DESKTOP_ERR_NOT_RUNNING', `${which} started by \`vncua desktop up\` is running (state dir ${stateDir()}).`, {
      details: { pid, stateDir: stateDir() },
    });
  }
  const results = await Promise.all(records.map(stopRecorded));
  for (const [i, r] of records.entries()) {
    process.stdout.write(`stopped desktop ${r.display} (pid ${r.pid}, ${redactUrl(r.vncUrl)}, ${redactUrl(r.cdpUrl)})${results[i] ? '' : ' [forced]'}\n`);
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

function list(argv: string[]): number {
  const parsed = parseCommandArgs(DESKTOP_LIST_SPEC, () => parseCommandLine(DESKTOP_LIST_SPEC, argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  for (const r of readRecords()) process.stdout.write(`${JSON.stringify(r)}\n`);
  return 0;
}
