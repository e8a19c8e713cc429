/**
 * Test-only: a desktop served by x11vnc instead of Xvnc (Xvfb + matchbox + Chromium with the
 * flags of docker/start.sh + `x11vnc -localhost -autoport <base> -shared -forever -nopw`), for
 * running the agent tests against a second RFB server. x11vnc speaks plain TCP here (its own
 * WebSocket support is unreliable, see shared/notes/desktop.md), so `vncUrl` is tcp://.
 *
 * Every process carries VNCUA_DESKTOP_TAG=<temp dir> in its environment; close() stops them
 * in reverse start order, then whatever still carries the tag (Chromium's crashpad handler),
 * then removes the temp dir. It replaces `launchDesktop({ server: 'x11vnc' })` until that exists.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopTagged } from '../../desktop/procs.ts';

/** A running x11vnc desktop. */
export interface X11vncDesktop {
  /** tcp://127.0.0.1:PORT of x11vnc. */
  vncUrl: string;
  /** http://127.0.0.1:PORT of Chromium's DevTools. */
  cdpUrl: string;
  /** The X display, e.g. ":7". */
  display: string;
  width: number;
  height: number;
  /** Stop every process and remove the temp dir; idempotent, never throws. */
  close(): Promise<void>;
}

/** Options of launchX11vncDesktop(). */
export interface X11vncDesktopOptions {
  /** Screen size (default 1280x800). */
  width?: number;
  height?: number;
  /** Page Chromium opens (default about:blank). */
  url?: string;
  /** Give up after this many ms (default 30 000). */
  timeoutMs?: number;
}

/** The Chromium flags of docker/start.sh. */
const CHROMIUM_FLAGS = [
  '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
  '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic',
  '--disable-dev-shm-usage', '--ozone-platform=x11', '--password-store=basic', '--use-mock-keychain',
  '--disable-features=Translate,MediaRouter,OptimizationHints', '--disable-default-apps',
  '--disable-extensions', '--kiosk',
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A port the OS just handed out (closed again: x11vnc's -autoport scans upwards from it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Start Xvfb, matchbox, Chromium and x11vnc; resolves when x11vnc printed its port and CDP answers. */
export async function launchX11vncDesktop(opts: X11vncDesktopOptions = {}): Promise<X11vncDesktop> {
  const width = opts.width ?? 1280;
  const height = opts.height ?? 800;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const tmp = mkdtempSync(join(tmpdir(), 'vncua-x11vnc.'));
  const env = { ...process.env, VNCUA_DESKTOP_TAG: tmp };
  const procs: ChildProcess[] = [];
  let closing: Promise<void> | undefined;

  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const p of [...procs].reverse()) {
        try {
          if (p.exitCode === null && p.signalCode === null) {
            p.kill('SIGTERM');
            const exited = new Promise((r) => p.once('exit', r));
            const t = setTimeout(() => p.kill('SIGKILL'), 3000);
            await exited;
            clearTimeout(t);
          }
        } catch {
          // already gone
        }
      }
      try {
        await stopTagged(tmp);
      } catch {
        // best effort
      }
      try {
        rmSync(tmp, { recursive: true, force: true });
      } catch {
        // best effort
      }
    })());

  const waitUntil = async <T>(what: string, probe: () => T | undefined): Promise<T> => {
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      const dead = procs.find((p) => p.exitCode !== null || p.signalCode !== null);
      if (dead) throw new Error(`${String(dead.spawnfile)} exited while waiting for ${what}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(10);
    }
  };

  try {
    const xvfb = spawn('Xvfb', ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp'], {
      env, stdio: ['ignore', 'ignore', 'ignore', 'pipe'],
    });
    procs.push(xvfb);
    let fdText = '';
    xvfb.stdio[3]!.on('data', (d: Buffer) => (fdText += d.toString()));
    const displayNum = await waitUntil('the Xvfb display number', () => (/^\d+\n/.test(fdText) ? Number.parseInt(fdText, 10) : undefined));
    const display = `:${displayNum}`;
    const xenv = { ...env, DISPLAY: display };

    procs.push(spawn('matchbox-window-manager', ['-use_titlebar', 'no', '-use_cursor', 'yes'], { env: xenv, stdio: 'ignore' }));
    const profile = join(tmp, 'chromium');
    procs.push(
      spawn('/usr/lib/chromium/chromium', ['--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1', `--user-data-dir=${profile}`, ...CHROMIUM_FLAGS, `--app=${opts.url ?? 'about:blank'}`], {
        env: xenv,
        stdio: 'ignore',
      }),
    );

    const base = await freePort();
    const x11vnc = spawn('x11vnc', ['-display', display, '-localhost', '-autoport', String(base), '-shared', '-forever', '-nopw'], {
      env: xenv,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    procs.push(x11vnc);
    let out = '';
    x11vnc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const rfbPort = await waitUntil('x11vnc PORT=', () => {
      const m = /PORT=(\d+)/.exec(out);
      return m ? Number(m[1]) : undefined;
    });

    const cdpPort = await waitUntil('Chromium DevToolsActivePort', () => {
      try {
        return Number(readFileSync(join(profile, 'DevToolsActivePort'), 'utf8').split('\n')[0]) || undefined;
      } catch {
        return undefined;
      }
    });
    const cdpUrl = `http://127.0.0.1:${cdpPort}`;
    for (;;) {
      try {
        if ((await fetch(`${cdpUrl}/json/version`)).ok) break;
      } catch {
        // not yet
      }
      if (Date.now() > deadline) throw new Error('timed out waiting for CDP');
      await sleep(20);
    }
    return { vncUrl: `tcp://127.0.0.1:${rfbPort}`, cdpUrl, display, width, height, close };
  } catch (e) {
    await close();
    throw e;
  }
}
