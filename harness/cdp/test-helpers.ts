/**
 * Test and bench helpers for CDP: the one Chromium launcher (headless by default, or with the desktop's
 * flags on an X display) with CDP on an OS-assigned port, a tiny HTTP page server, and a CDP WebSocket
 * proxy that a test can cut.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer, type RawData } from 'ws';

/** Path of the Chromium binary (the /usr/bin wrapper misbehaves). */
export const CHROMIUM_BIN = '/usr/lib/chromium/chromium';

/** Flags every Chromium of ours starts with: none of Chromium's background traffic, no sandbox, no GPU, no /dev/shm. */
const QUIET_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

/** docker/start.sh's CHROMIUM_FLAGS (keep the two in step): the desktop's Chromium, for benches that start one beside it. */
export const DESKTOP_CHROMIUM_FLAGS: readonly string[] = [
  ...QUIET_FLAGS,
  '--ozone-platform=x11',
  '--password-store=basic',
  '--use-mock-keychain',
  '--disable-features=Translate,MediaRouter,OptimizationHints',
  '--disable-default-apps',
  '--disable-extensions',
  '--disable-smooth-scrolling',
  '--kiosk',
];

/** The flags launchChromium() uses by default. */
const HEADLESS_FLAGS: readonly string[] = ['--headless=new', ...QUIET_FLAGS];

/** The CDP endpoint Chromium wrote to DevToolsActivePort in `profileDir`, or null while it has not. */
export async function devToolsEndpoint(profileDir: string): Promise<{ port: number; cdpUrl: string; wsUrl: string } | null> {
  try {
    const [portLine, pathLine] = (await readFile(join(profileDir, 'DevToolsActivePort'), 'utf8')).split('\n');
    const port = Number(portLine);
    return port > 0 && pathLine ? { port, cdpUrl: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}${pathLine}` } : null;
  } catch {
    return null; // not written yet
  }
}

/** A running Chromium with its CDP endpoint. */
export interface TestChromium {
  /** http://127.0.0.1:PORT — what `connectOverCDP` takes. */
  readonly cdpUrl: string;
  /** The browser's ws:// debugger URL from DevToolsActivePort. */
  readonly wsUrl: string;
  /** The CDP port. */
  readonly port: number;
  /** The Chromium process. */
  readonly proc: ChildProcess;
  /** Kill Chromium (SIGKILL) and remove its profile directory. */
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;
/** SIGKILL Chromium's whole process group (browser, zygote, renderers, crashpad). */
function killGroup(proc: ChildProcess): void {
  try {
    if (proc.pid !== undefined) process.kill(-proc.pid, 'SIGKILL');
  } catch {
    try {
      proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

function killOnExit(proc: ChildProcess): void {
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const p of live) killGroup(p);
    });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Start Chromium with CDP on port 0; resolves once DevToolsActivePort exists. By default headless on `url`
 * (default about:blank); `flags` replace the headless flags and the URL (e.g. DESKTOP_CHROMIUM_FLAGS with
 * `--app=URL`), `env` adds to its environment (DISPLAY and XAUTHORITY of a desktop).
 */
export async function launchChromium(opts: { url?: string; timeoutMs?: number; flags?: readonly string[]; env?: Record<string, string> } = {}): Promise<TestChromium> {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-cdp-'));
  const proc = spawn(
    CHROMIUM_BIN,
    ['--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1', `--user-data-dir=${dir}`, ...(opts.flags ?? [...HEADLESS_FLAGS, opts.url ?? 'about:blank'])],
    // Its own process group, so close() can kill every Chromium process at once; its TMPDIR inside
    // the profile dir, so no temp folder of Chromium's outlives close() (even after a crash).
    { stdio: 'ignore', detached: true, env: { ...process.env, ...opts.env, TMPDIR: dir } },
  );
  killOnExit(proc);
  let exited = false;
  const exitedP = new Promise<void>((r) =>
    proc.once('exit', () => {
      exited = true;
      r();
    }),
  );
  const close = async (): Promise<void> => {
    if (!exited) killGroup(proc);
    await Promise.race([exitedP, sleep(5000)]);
    try {
      await rm(dir, { recursive: true, force: true });
    } catch {
      /* best effort */
    }
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  try {
    for (;;) {
      if (exited) throw new Error('Chromium exited before opening its CDP port');
      if (Date.now() > deadline) throw new Error('Chromium did not write DevToolsActivePort in time');
      const endpoint = await devToolsEndpoint(dir);
      if (endpoint) return { ...endpoint, proc, close };
      await sleep(25);
    }
  } catch (e) {
    await close();
    throw e;
  }
}

/** A small HTTP server on 127.0.0.1 serving fixed pages by path. */
export interface PageServer {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** Set or replace the HTML served at `path`. */
  set(path: string, html: string): void;
  /** Stop the server (drops open connections). */
  close(): Promise<void>;
}

/** Start a page server; `pages` maps paths ('/a') to HTML. Unknown paths get 404. */
export async function servePages(pages: Record<string, string> = {}): Promise<PageServer> {
  const table = new Map(Object.entries(pages));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const html = table.get(path);
    if (html === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
  });
  await listen(server);
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    set: (path, html) => void table.set(path, html),
    close: () => closeServer(server),
  };
}

/** A CDP proxy: `/json/version` names the proxy's own ws URL; every WebSocket is relayed to Chromium. */
export interface CdpProxy {
  /** http://127.0.0.1:PORT of the proxy — give this to the checker. */
  readonly cdpUrl: string;
  /** How many WebSocket connections the proxy has accepted so far. */
  readonly connections: number;
  /** Cut every relayed connection (both sides), as a network drop would; new connections still work. */
  cut(): void;
  /** Cut everything and stop listening. */
  close(): Promise<void>;
}

/** Start a CDP proxy in front of `target` (a launched Chromium). */
export async function startCdpProxy(target: { cdpUrl: string; wsUrl: string }): Promise<CdpProxy> {
  const pairs = new Set<{ a: WebSocket; b: WebSocket }>();
  let connections = 0;
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/json/version' && path !== '/json/version/') {
      res.writeHead(404).end();
      return;
    }
    try {
      const upstream = await fetch(`${target.cdpUrl}/json/version`);
      const info = (await upstream.json()) as Record<string, unknown>;
      const port = (server.address() as AddressInfo).port;
      info.webSocketDebuggerUrl = `ws://127.0.0.1:${port}${new URL(target.wsUrl).pathname}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info));
    } catch {
      res.writeHead(502).end();
    }
  });
  const wss = new WebSocketServer({ server, maxPayload: 256 * 1024 * 1024 });
  wss.on('connection', (a: WebSocket) => {
    connections++;
    const b = new WebSocket(target.wsUrl, { maxPayload: 256 * 1024 * 1024, perMessageDeflate: false });
    const pair = { a, b };
    pairs.add(pair);
    const queued: Array<{ data: RawData; isBinary: boolean }> = [];
    const end = () => {
      pairs.delete(pair);
      a.terminate();
      b.terminate();
    };
    a.on('message', (data, isBinary) => {
      if (b.readyState === WebSocket.OPEN) b.send(data, { binary: isBinary });
      else queued.push({ data, isBinary });
    });
    b.on('open', () => {
      for (const m of queued.splice(0)) b.send(m.data, { binary: m.isBinary });
    });
    b.on('message', (data, isBinary) => {
      if (a.readyState === WebSocket.OPEN) a.send(data, { binary: isBinary });
    });
    a.on('close', end);
    b.on('close', end);
    a.on('error', end);
    b.on('error', end);
  });
  await listen(server);
  const port = (server.address() as AddressInfo).port;
  const cut = () => {
    for (const p of [...pairs]) {
      pairs.delete(p);
      p.a.terminate();
      p.b.terminate();
    }
  };
  return {
    cdpUrl: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    cut,
    close: async () => {
      cut();
      try {
        wss.close();
      } catch {
        /* already closed */
      }
      await closeServer(server);
    },
  };
}

/** Resolve with a 127.0.0.1 port that was just bound and closed (nothing listens on it). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await listen(server);
  const port = (server.address() as AddressInfo).port;
  await closeServer(server);
  return port;
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
