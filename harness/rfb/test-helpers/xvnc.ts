/**
 * Test helpers that start REAL servers on 127.0.0.1: a bare TigerVNC Xvnc (the
 * display number comes back through -displayfd, the RFB port is bind-probed and
 * retried on collision), a websockify bridge in front of it, and Xvfb + x11vnc. Every process is
 * killed by stop() and, as a last resort, when the test process exits.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** A port that was free a moment ago (the caller must retry if someone takes it first). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Kill `p` when the test process exits (if it is still running then). */
export function track(p: ChildProcess): ChildProcess {
  live.add(p);
  p.once('exit', () => live.delete(p));
  return p;
}

/** SIGTERM, then SIGKILL after 3 s; resolves once `p` exited. */
export async function stopProcess(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(t);
}

/** A running Xvnc. */
export interface XvncServer {
  display: number;
  /** RFB port on 127.0.0.1. */
  port: number;
  /** Environment for X clients (DISPLAY=:N). */
  env: NodeJS.ProcessEnv;
  /** Run an X client on this display and return its stdout. */
  x(cmd: string, args: string[]): Promise<string>;
  /** What Xvnc logged so far (its stderr: "Connections: accepted: ..." per client). */
  log(): string;
  stop(): Promise<void>;
}

/** Start Xvnc (-SecurityTypes None unless told otherwise) at `geometry` (default 320x200). */
export async function startXvnc(opts: { geometry?: string; securityTypes?: string; passwordFile?: string; extraArgs?: string[] } = {}): Promise<XvncServer> {
  let lastError = '';
  for (let attempt = 0; attempt < 6; attempt++) {
    const port = await freePort();
    const args = [
      '-displayfd',
      '3',
      '-geometry',
      opts.geometry ?? '320x200',
      '-depth',
      '24',
      '-SecurityTypes',
      opts.securityTypes ?? 'None',
      ...(opts.passwordFile ? ['-PasswordFile', opts.passwordFile] : []),
      '-localhost',
      '-rfbport',
      String(port),
      '-AlwaysShared',
      '-nolisten',
      'tcp',
      ...(opts.extraArgs ?? []),
    ];
    const p = track(spawn('Xvnc', args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] }));
    let stderr = '';
    p.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const display = await displayFromFd3(p);
    if (display === null || Number.isNaN(display)) {
      lastError =
        stderr
          .split('\n')
          .filter((l) => /error|fatal|in use/i.test(l))
          .join('\n') || stderr.slice(-500);
      await stopProcess(p);
      continue;
    }
    const env = { ...process.env, DISPLAY: `:${display}` };
    return {
      display,
      port,
      env,
      async x(cmd, a) {
        const { stdout } = await run(cmd, a, { env, timeout: 10_000 });
        return stdout;
      },
      log: () => stderr,
      stop: () => stopProcess(p),
    };
  }
  throw new Error(`Xvnc did not start: ${lastError}`);
}

/** Resolve once something accepts TCP connections on 127.0.0.1:port. */
export async function waitForPort(port: number, p: ChildProcess, timeoutMs = 10_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end && p.exitCode === null) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return false;
}

/** A running websockify bridge. */
export interface Bridge {
  port: number;
  stop(): Promise<void>;
}

/** Start `websockify 127.0.0.1:<free> 127.0.0.1:<targetPort>`. */
export async function startWebsockify(targetPort: number, extraArgs: string[] = []): Promise<Bridge> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const port = await freePort();
    const p = track(spawn('websockify', [...extraArgs, `127.0.0.1:${port}`, `127.0.0.1:${targetPort}`], { stdio: ['ignore', 'ignore', 'ignore'] }));
    if (await waitForPort(port, p)) return { port, stop: () => stopProcess(p) };
    await stopProcess(p);
  }
  throw new Error('websockify did not start');
}

/** A running Xvfb + x11vnc pair (a second, LibVNCServer-based server for interoperability tests). */
export interface X11vncServer {
  display: number;
  port: number;
  env: NodeJS.ProcessEnv;
  x(cmd: string, args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** Start Xvfb at `geometry` and x11vnc on it (no password, shared, localhost, its native WebSocket on the same port). */
export async function startX11vnc(opts: { geometry?: string } = {}): Promise<X11vncServer> {
  const xvfb = track(spawn('Xvfb', ['-displayfd', '3', '-screen', '0', `${opts.geometry ?? '320x200'}x24`, '-nolisten', 'tcp'], { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] }));
  const display = await displayFromFd3(xvfb);
  if (display === null) {
    await stopProcess(xvfb);
    throw new Error('Xvfb did not start');
  }
  const env = { ...process.env, DISPLAY: `:${display}` };
  for (let attempt = 0; attempt < 6; attempt++) {
    const port = await freePort();
    const p = track(
      spawn('x11vnc', ['-display', `:${display}`, '-rfbport', String(port), '-localhost', '-nopw', '-shared', '-forever', '-quiet'], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    let out = '';
    p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const end = Date.now() + 15_000;
    while (!out.includes(`PORT=${port}`) && p.exitCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    if (!out.includes(`PORT=${port}`)) {
      await stopProcess(p);
      continue;
    }
    return {
      display,
      port,
      env,
      async x(cmd, a) {
        const { stdout } = await run(cmd, a, { env, timeout: 10_000 });
        return stdout;
      },
      async stop() {
        await stopProcess(p);
        await stopProcess(xvfb);
      },
    };
  }
  await stopProcess(xvfb);
  throw new Error('x11vnc did not start');
}

/** The display number an X server started with `-displayfd 3` writes to fd 3, or null if it exits or takes over 10 s. */
function displayFromFd3(x: ChildProcess): Promise<number | null> {
  return new Promise<number | null>((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(null), 10_000);
    (x.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(Number(out.trim()));
      }
    });
    x.once('exit', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
}
