/**
 * launchDesktop(): a real local desktop (Xvnc + matchbox + websockify + Chromium with CDP)
 * started through docker/start.sh, the same script the Docker image runs. The script leads
 * its own process group; close() stops that group and waits until no process of it is left.
 * The desktop also dies with this Node process, even on SIGKILL: the script watches its
 * stdin pipe for EOF.
 *
 * The desktop belongs to this user (README "Security"): its vncUrl and cdpUrl carry a secret
 * token, X needs the cookie in `xauthority`, the plain RFB socket sits in a 0700 dir. The
 * script gets a scrubbed environment (no API keys) and the password on a pipe (fd 3), never
 * in argv or its environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { existsSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scope, type Cancellation } from '../cancel.ts';
import { VncuaError, type ErrorCode } from '../errors.ts';
import { desktopPassword, scrubbedEnv } from './env.ts';
import { isAlive, stopGroup, stopTagged } from './procs.ts';
import { DEFAULT_SCREEN_SIZE, parseScreenSize, type ScreenSize } from './size.ts';

/** Options of launchDesktop(). */
export interface LaunchDesktopOptions {
  /** Screen size, "WxH" or { width, height } (default 1280x800). */
  size?: string | ScreenSize;
  /** Page Chromium opens in kiosk mode (default about:blank, opened as an empty data: page: Chromium's app mode would show its new-tab page). */
  url?: string;
  /** VNC server: TigerVNC Xvnc (default) or Xvfb + x11vnc (a second server, for interoperability). */
  server?: VncServerKind;
  /**
   * Turn on VNC Authentication with this password (only its first 8 characters count); the desktop
   * then also serves plain RFB on 127.0.0.1 (tcpUrl). Default: VNCUA_VNC_PASSWORD from `env`, else
   * from process.env, if set. An empty password (or an empty VNCUA_VNC_PASSWORD) is
   * DESKTOP_ERR_BAD_PASSWORD, never "no password".
   */
  password?: string;
  /** Give up (and stop everything started) after this many ms (default 30 000). */
  timeoutMs?: number;
  /** Cancel the start; the promise rejects with DESKTOP_ERR_ABORTED and nothing is left running. */
  signal?: AbortSignal;
  /**
   * Extra environment for the start script (e.g. VNCUA_CHROMIUM to use another browser). The script
   * otherwise gets only an allowlist of this process's environment (PATH, HOME, locale, TMPDIR,
   * XDG dirs, proxies, VNCUA_* program overrides): no API keys reach the desktop.
   */
  env?: Record<string, string | undefined>;
}

/** The VNC servers the start script can run. */
export type VncServerKind = 'xvnc' | 'x11vnc';

/** How a desktop's start script ended. */
export interface DesktopExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running desktop: its endpoints, and close(). Its URLs carry its token: keep them out of logs (redactUrl). */
export interface Desktop {
  /** RFB over WebSocket, with the desktop's token as path, e.g. ws://127.0.0.1:41234/<token>. */
  vncUrl: string;
  /** Plain RFB over TCP (Xvnc itself) on 127.0.0.1, e.g. tcp://127.0.0.1:40001: only with a password (VNC Authentication guards it). */
  tcpUrl?: string;
  /** Plain RFB on a unix socket in the desktop's 0700 temp dir (no token, no password needed: only this user can open it). */
  rfbSocket: string;
  /** Chromium's DevTools endpoint, e.g. http://127.0.0.1:39001/<token>/ (resolve json/version relative to it: cdpHttpUrl). */
  cdpUrl: string;
  /** X display, e.g. ":3"; X clients also need XAUTHORITY=xauthority. */
  display: string;
  /** The X authority file (mode 0600) with the display's cookie. */
  xauthority: string;
  /** True when the VNC server requires VNC Authentication (a password was given). */
  vncAuth: boolean;
  /** The VNC password, when there is one (not enumerable: JSON.stringify and console.log leave it out). */
  readonly password?: string;
  /** Which VNC server runs the display. */
  server: VncServerKind;
  /** Pid of the start script; also the desktop's process group id. */
  pid: number;
  width: number;
  height: number;
  /** The plain RFB TCP port (tcpUrl's), only with a password. */
  rfbPort?: number;
  wsPort: number;
  cdpPort: number;
  /** The desktop's temp dir (0700: each part's log, the X cookie, the token, Chromium's profile and TMPDIR); removed when it stops. */
  tmpDir: string;
  /** Resolves when the start script has exited (after close(), or if a part of the desktop died). */
  exited: Promise<DesktopExit>;
  /** Stop every process of the desktop and wait until they are gone. Idempotent; never throws. */
  close(): Promise<void>;
}

/** The JSON line docker/start.sh prints when ready. */
interface ReadyLine {
  vncUrl: string;
  tcpUrl: string | null;
  rfbSocket: string;
  xauthority: string;
  cdpUrl: string;
  display: string;
  pid: number;
  rfbPort: number | null;
  wsPort: number;
  cdpPort: number;
  width: number;
  height: number;
  tmpDir: string;
  server: VncServerKind;
  vncAuth: boolean;
}

/** The JSON line docker/start.sh prints (with --json) when it fails. */
interface ErrorLine {
  error: string;
  message: string;
  program?: string;
  package?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const STDERR_TAIL_CHARS = 4000;

/** Script exit status -> error code, when it printed no error line. */
const EXIT_STATUS_CODES: Record<number, ErrorCode> = {
  3: 'DESKTOP_ERR_BAD_SIZE',
  4: 'DESKTOP_ERR_MISSING_BINARY',
  6: 'DESKTOP_ERR_TIMEOUT',
};

/** Absolute path of docker/start.sh, found relative to this module (source or dist/ build). */
export function startScriptPath(): string {
  const candidates = ['../../docker/start.sh', '../../../docker/start.sh'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** Start a desktop; resolves once VNC (over WebSocket) and CDP both answer. */
export async function launchDesktop(opts: LaunchDesktopOptions = {}): Promise<Desktop> {
  const size = parseScreenSize(opts.size ?? DEFAULT_SCREEN_SIZE);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (opts.signal?.aborted) throw abortedError(opts.signal);

  const password = desktopPassword(opts.password, opts.env);
  const args = [startScriptPath(), '--json', '--size', `${size.width}x${size.height}`];
  // The script's own deadline is a backstop; ours fires first.
  args.push('--timeout', String(Math.ceil(timeoutMs / 1000) + 5));
  if (opts.url !== undefined) args.push('--url', opts.url);
  if (opts.server !== undefined) args.push('--server', opts.server);
  // The password goes through a pipe on fd 3: never in argv (`ps`), never in an environment.
  if (password !== undefined) args.push('--password-file', '/dev/fd/3');

  const stdio = password === undefined ? ['pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe'];
  const child = spawn('bash', args, { detached: true, stdio: stdio as ['pipe', 'pipe', 'pipe'], env: scrubbedEnv(process.env, opts.env) });
  const secret = child.stdio[3] as Writable | null | undefined;
  if (secret && password !== undefined) {
    secret.on('error', () => {}); // the script may exit (bad size) before reading it
    secret.end(`${password}\n`);
  }
  return waitReady(child, timeoutMs, opts.signal, password);
}

function abortedError(signal: AbortSignal, pid?: number): VncuaError {
  return new VncuaError('DESKTOP_ERR_ABORTED', 'Starting the desktop was cancelled; nothing was left running.', {
    cause: signal.reason,
    details: { pid },
  });
}

/** Keeps the last `max` characters of a stream. */
function tail(max: number): { push(s: string): void; text(): string } {
  let buf = '';
  return {
    push(s) {
      buf += s;
      if (buf.length > 2 * max) buf = buf.slice(-max);
    },
    text: () => buf.slice(-max).trim(),
  };
}

function waitReady(child: ChildProcess, timeoutMs: number, signal: AbortSignal | undefined, password: string | undefined): Promise<Desktop> {
  const pid = child.pid;
  const stderr = tail(STDERR_TAIL_CHARS);
  let stdout = '';
  let exitInfo: DesktopExit | undefined;
  const exited = new Promise<DesktopExit>((resolve) => {
    child.once('exit', (code, sig) => {
      exitInfo = { code, signal: sig };
      resolve(exitInfo);
    });
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => stderr.push(s));
  child.stdout!.setEncoding('utf8');
  // Writing to a script that is gone must not crash the process.
  child.stdin!.on('error', () => {});

  return new Promise<Desktop>((resolve, reject) => {
    let settled = false;
    // The caller's signal and our deadline in one; the error is built after the stop (it carries all of stderr).
    const cancel = scope({ signal, timeoutMs, mapError: (c) => c });
    const onCancel = () => {
      const c = cancel.signal.reason as Cancellation;
      fail(() =>
        c.kind === 'timeout'
          ? new VncuaError('DESKTOP_ERR_TIMEOUT', `The desktop was not ready within ${timeoutMs} ms; everything started was stopped.`, {
              details: { timeoutMs, pid, stderr: stderr.text() },
            })
          : abortedError(signal!, pid),
      );
    };

    const finish = () => {
      settled = true;
      cancel.dispose();
      cancel.signal.removeEventListener('abort', onCancel);
      child.stdout!.removeListener('data', onStdout);
      child.removeListener('close', onClose);
      child.removeListener('error', onError);
    };

    // Stop whatever was started, then reject (the error is built afterwards, so it carries
    // all of the script's stderr).
    const fail = (makeError: () => VncuaError) => {
      if (settled) return;
      finish();
      void (async () => {
        if (pid !== undefined) await stopGroup(pid, pid).catch(() => false);
        await Promise.race([exited, new Promise((r) => setTimeout(r, 1000))]);
        reject(makeError());
      })();
    };

    const onStdout = (s: string) => {
      stdout += s;
      const nl = stdout.indexOf('\n');
      if (nl < 0) return;
      const line = stdout.slice(0, nl);
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        fail(() => startFailed("The start script printed a line that is not JSON (not shown: it may hold the desktop's token).", stderr.text(), exitInfo, pid));
        return;
      }
      if (isErrorLine(parsed)) {
        fail(() => fromErrorLine(parsed, stderr.text(), pid));
        return;
      }
      if (!isReadyLine(parsed)) {
        fail(() => startFailed("The start script printed an incomplete ready line (not shown: it may hold the desktop's token).", stderr.text(), exitInfo, pid));
        return;
      }
      finish();
      resolve(makeDesktop(child, parsed, exited, password));
    };

    // 'close' (not 'exit') so an error line printed just before exiting is read first.
    const onClose = (code: number | null, sig: NodeJS.Signals | null) => {
      const status = code ?? -1;
      const errCode = EXIT_STATUS_CODES[status] ?? 'DESKTOP_ERR_START_FAILED';
      const why = sig ? `was killed by ${sig}` : `exited with status ${code}`;
      fail(
        () =>
          new VncuaError(errCode, `The desktop start script ${why} before the desktop was ready: ${stderr.text() || '(no output)'}`, {
            details: { exitCode: code, signal: sig, stderr: stderr.text(), pid },
          }),
      );
    };

    const onError = (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') {
        fail(
          () =>
            new VncuaError('DESKTOP_ERR_MISSING_BINARY', "'bash' is not installed: run apt-get install bash", {
              cause: e,
              details: { program: 'bash', package: 'bash' },
            }),
        );
      } else {
        fail(() => startFailed(`Could not run the desktop start script: ${e.message}`, stderr.text(), exitInfo, pid, e));
      }
    };

    child.stdout!.on('data', onStdout);
    child.once('close', onClose);
    child.once('error', onError);
    if (cancel.signal.aborted) onCancel();
    else cancel.signal.addEventListener('abort', onCancel, { once: true });
  });
}

function isErrorLine(x: unknown): x is ErrorLine {
  return typeof x === 'object' && x !== null && typeof (x as ErrorLine).error === 'string';
}

function isReadyLine(x: unknown): x is ReadyLine {
  const r = x as ReadyLine;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof r.vncUrl === 'string' &&
    (r.tcpUrl === null || typeof r.tcpUrl === 'string') &&
    (r.rfbPort === null || Number.isInteger(r.rfbPort)) &&
    typeof r.rfbSocket === 'string' &&
    typeof r.xauthority === 'string' &&
    typeof r.cdpUrl === 'string' &&
    typeof r.display === 'string' &&
    typeof r.tmpDir === 'string' &&
    typeof r.vncAuth === 'boolean' &&
    [r.pid, r.wsPort, r.cdpPort, r.width, r.height].every((n) => Number.isInteger(n))
  );
}

function fromErrorLine(e: ErrorLine, stderrText: string, pid: number | undefined): VncuaError {
  const code = (e.error in EXIT_CODE_NAMES ? e.error : 'DESKTOP_ERR_START_FAILED') as ErrorCode;
  const details: Record<string, unknown> = { stderr: stderrText, pid };
  if (e.program !== undefined) details.program = e.program;
  if (e.package !== undefined) details.package = e.package;
  return new VncuaError(code, e.message, { details });
}

/** Codes the script may report in its error line. */
const EXIT_CODE_NAMES: Record<string, true> = {
  DESKTOP_ERR_MISSING_BINARY: true,
  DESKTOP_ERR_START_FAILED: true,
  DESKTOP_ERR_TIMEOUT: true,
  DESKTOP_ERR_BAD_SIZE: true,
  DESKTOP_ERR_BAD_PASSWORD: true,
};

function startFailed(message: string, stderrText: string, exit: DesktopExit | undefined, pid: number | undefined, cause?: unknown): VncuaError {
  return new VncuaError('DESKTOP_ERR_START_FAILED', `${message}\n${stderrText}`.trim(), {
    cause,
    details: { stderr: stderrText, exitCode: exit?.code, signal: exit?.signal, pid },
  });
}

function makeDesktop(child: ChildProcess, r: ReadyLine, exited: Promise<DesktopExit>, password: string | undefined): Desktop {
  const pid = child.pid!;
  // Keep reading stderr (a full pipe would block the script) but let Node exit without us:
  // when it does, the script sees EOF on its stdin and tears the desktop down.
  for (const s of [child.stdin, child.stdout, child.stderr, child.stdio[3]]) (s as unknown as { unref?: () => void } | null)?.unref?.();
  child.stdout!.resume();
  child.unref();

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      try {
        await stopGroup(pid, pid);
      } catch {
        // best effort: fall through to the remaining steps
      }
      try {
        // Normally the script already did this; not if it was SIGKILLed.
        await stopTagged(r.tmpDir);
      } catch {
        // best effort
      }
      try {
        if (isAlive(pid)) child.kill('SIGKILL');
        // A timer that holds the event loop: the child is unref'd, so with nothing else alive an
        // unref'd one let Node exit (code 13) before the 'exit' event of a script already gone came.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 2000)))]);
        clearTimeout(timer);
      } catch {
        // already gone
      }
      try {
        // The script removes its temp dir itself unless it was SIGKILLed.
        if (basename(r.tmpDir).startsWith('vncua-desktop.') && existsSync(r.tmpDir)) {
          rmSync(r.tmpDir, { recursive: true, force: true });
        }
      } catch {
        // nothing more to do
      }
    })());

  const desktop: Desktop = {
    vncUrl: r.vncUrl,
    tcpUrl: r.tcpUrl ?? undefined,
    rfbSocket: r.rfbSocket,
    cdpUrl: r.cdpUrl,
    display: r.display,
    xauthority: r.xauthority,
    vncAuth: r.vncAuth,
    server: r.server ?? 'xvnc',
    pid,
    width: r.width,
    height: r.height,
    rfbPort: r.rfbPort ?? undefined,
    wsPort: r.wsPort,
    cdpPort: r.cdpPort,
    tmpDir: r.tmpDir,
    exited,
    close,
  };
  if (password !== undefined) Object.defineProperty(desktop, 'password', { value: password, enumerable: false });
  return desktop;
}
