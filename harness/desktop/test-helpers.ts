/**
 * Test helpers for desktop tests: read the RFB greeting and security types over WebSocket
 * or TCP, talk to CDP, ask X for the screen and window sizes, serve a page on port 0.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';
import { cdpHttpUrl } from '../cdp/endpoint.ts';

const execFileP = promisify(execFile);

/** Reads bytes from a WebSocket or TCP socket in order, `take(n)` at a time. */
class ByteReader {
  private chunks: Buffer[] = [];
  private size = 0;
  private waiter: (() => void) | undefined;
  private failed: Error | undefined;

  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    this.waiter?.();
  }

  fail(e: Error): void {
    this.failed = e;
    this.waiter?.();
  }

  async take(n: number, timeoutMs = 15_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.size < n) {
      if (this.failed) throw this.failed;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} bytes`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
      this.waiter = undefined;
    }
    const all = Buffer.concat(this.chunks);
    this.chunks = [all.subarray(n)];
    this.size = all.length - n;
    return all.subarray(0, n);
  }
}

/** An open RFB byte stream (WebSocket or TCP) with a reader and a writer. */
export interface RfbStream {
  read(n: number): Promise<Buffer>;
  write(b: Buffer | string): void;
  close(): void;
}

/** Open `ws://`, `tcp://` or `unix:///path` (a desktop's rfbSocket) RFB endpoints as a plain byte stream. */
export async function openRfb(url: string): Promise<RfbStream> {
  const reader = new ByteReader();
  const u = new URL(url);
  if (u.protocol === 'tcp:' || u.protocol === 'unix:') {
    const sock: Socket = u.protocol === 'unix:' ? connect({ path: decodeURIComponent(u.pathname) }) : connect({ host: u.hostname, port: Number(u.port) });
    sock.on('data', (b) => reader.push(b));
    sock.on('error', (e) => reader.fail(e));
    sock.on('close', () => reader.fail(new Error('socket closed')));
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    return { read: (n) => reader.take(n), write: (b) => void sock.write(b), close: () => sock.destroy() };
  }
  const ws = new WebSocket(url);
  ws.binaryType = 'nodebuffer';
  // Listen before 'open': the greeting may arrive in the same read as the 101 response.
  ws.on('message', (d: Buffer) => reader.push(d));
  ws.on('error', (e) => reader.fail(e));
  ws.on('close', () => reader.fail(new Error('websocket closed')));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return { read: (n) => reader.take(n), write: (b) => ws.send(typeof b === 'string' ? Buffer.from(b) : b), close: () => ws.terminate() };
}

/** The 12-byte ProtocolVersion greeting the server sends first, e.g. "RFB 003.008\n". */
export async function rfbGreeting(url: string): Promise<string> {
  const s = await openRfb(url);
  try {
    return (await s.read(12)).toString('latin1');
  } finally {
    s.close();
  }
}

/** The security types the server offers to an RFB 3.8 client. */
export async function rfbSecurityTypes(url: string): Promise<number[]> {
  const s = await openRfb(url);
  try {
    await s.read(12);
    s.write('RFB 003.008\n');
    const n = (await s.read(1))[0]!;
    return [...(await s.read(n))];
  } finally {
    s.close();
  }
}

/** GET a CDP HTTP endpoint (/json/version, /json/list) as JSON. */
export async function cdpJson<T = unknown>(cdpUrl: string, path: string): Promise<T> {
  const r = await fetch(cdpHttpUrl(cdpUrl, path));
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return (await r.json()) as T;
}

/** A page target as /json/list describes it. */
export interface CdpTarget {
  type: string;
  url: string;
  webSocketDebuggerUrl: string;
}

/** Evaluate `expression` in the first page target and return its value. */
export async function cdpEvaluate(cdpUrl: string, expression: string): Promise<unknown> {
  const targets = await cdpJson<CdpTarget[]>(cdpUrl, '/json/list');
  const page = targets.find((t) => t.type === 'page');
  if (!page) throw new Error('no page target');
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const reply = new Promise<{ result?: { result?: { value?: unknown } }; error?: unknown }>((resolve) =>
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as { id?: number };
        if (m.id === 1) resolve(m as never);
      }),
    );
    ws.send(JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression, returnByValue: true } }));
    const m = await reply;
    if (m.error) throw new Error(JSON.stringify(m.error));
    return m.result?.result?.value;
  } finally {
    ws.terminate();
  }
}

/** The environment of an X client of a desktop's display (DISPLAY and XAUTHORITY). */
export function xEnv(d: { display: string; xauthority: string }): NodeJS.ProcessEnv {
  return { ...process.env, DISPLAY: d.display, XAUTHORITY: d.xauthority };
}

/** The screen size X reports for the desktop's display (xdpyinfo). */
export async function xScreenSize(d: { display: string; xauthority: string }): Promise<{ width: number; height: number }> {
  const { stdout } = await execFileP('xdpyinfo', ['-display', d.display], { env: xEnv(d) });
  const m = /dimensions:\s+(\d+)x(\d+) pixels/.exec(stdout);
  if (!m) throw new Error(`xdpyinfo gave no dimensions:\n${stdout}`);
  return { width: Number(m[1]), height: Number(m[2]) };
}

/** Geometry of the visible Chromium windows on the desktop's display (xdotool). */
export async function chromiumWindows(d: { display: string; xauthority: string }): Promise<Array<{ x: number; y: number; width: number; height: number }>> {
  const { stdout } = await execFileP('xdotool', ['search', '--onlyvisible', '--class', 'chromium', 'getwindowgeometry', '%@'], {
    env: xEnv(d),
  }).catch(() => ({ stdout: '' }));
  const out: Array<{ x: number; y: number; width: number; height: number }> = [];
  const re = /Position: (-?\d+),(-?\d+).*\n\s*Geometry: (\d+)x(\d+)/g;
  for (const m of stdout.matchAll(re)) out.push({ x: Number(m[1]), y: Number(m[2]), width: Number(m[3]), height: Number(m[4]) });
  return out;
}

/** True when nothing accepts TCP connections on 127.0.0.1:`port`. */
export function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes (then returns the last value). */
export async function eventually<T>(fn: () => Promise<T> | T, timeoutMs = 10_000, pollMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let v: T | undefined;
    try {
      v = await fn();
      if (v) return v;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    if (Date.now() > deadline) return v as T;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** A one-page HTTP server on 127.0.0.1, OS-assigned port. */
export async function servePage(html: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/start.html`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
