/**
 * Test-only: a LiveControl driven by the test (a run's status, takeover rules, a framebuffer it paints, the
 * input it received), and a live endpoint serving it in `dir` (live.json announced, removed by close()).
 */
import { writeFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { type WebSocket, WebSocketServer } from 'ws';
import { VncuaError, type ErrorCode } from '../../harness/errors.ts';
import type { HumanInput, LiveAnnouncement, LiveControl, LiveStatus } from '../../harness/live/control.ts';
import { Framebuffer } from '../../harness/rfb/framebuffer.ts';
import { packRgb } from '../../harness/rfb/sink.ts';

/** A LiveControl whose run the test drives: setState(), askHelp(), paint(); takeover rules as the Agent's. */
export class TestControl implements LiveControl {
  private s: LiveStatus = { state: 'running', holder: null, help: null, steps: 0 };
  private readonly statusListeners = new Set<(s: LiveStatus) => void>();
  private readonly fbListeners = new Set<(fb: Framebuffer | null) => void>();
  fb: Framebuffer | null;
  /** Every input a holder sent, with who. */
  readonly inputs: Array<{ who: string; event: HumanInput }> = [];

  constructor(width = 64, height = 48) {
    this.fb = new Framebuffer(width, height);
  }

  status(): LiveStatus {
    return { ...this.s };
  }
  onStatus(listener: (status: LiveStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }
  framebuffer(): Framebuffer | null {
    return this.fb;
  }
  onFramebuffer(listener: (fb: Framebuffer | null) => void): () => void {
    this.fbListeners.add(listener);
    return () => this.fbListeners.delete(listener);
  }
  async takeover(who: string): Promise<LiveStatus> {
    if (this.s.holder !== null && this.s.holder !== who) {
      throw new VncuaError('LIVE_ERR_TAKEN' as ErrorCode, `${this.s.holder} holds mouse and keyboard.`, { details: { holder: this.s.holder } });
    }
    this.set({ state: 'paused', holder: who, help: null });
    return this.status();
  }
  async handback(who: string): Promise<LiveStatus> {
    if (this.s.holder !== who) throw new VncuaError('LIVE_ERR_NOT_HOLDER' as ErrorCode, `${who} does not hold mouse and keyboard.`, { details: { holder: this.s.holder } });
    this.set({ state: 'running', holder: null });
    return this.status();
  }
  input(who: string, event: HumanInput): void {
    if (who === this.s.holder) this.inputs.push({ who, event });
  }

  /** Change the status and tell the listeners. */
  set(patch: Partial<LiveStatus>): void {
    this.s = { ...this.s, ...patch };
    for (const l of this.statusListeners) l(this.status());
  }
  /** One more step. */
  step(): void {
    this.set({ steps: this.s.steps + 1 });
  }
  /** The agent asks for help (paused, flagged). */
  askHelp(reason: string): void {
    this.set({ state: 'help', help: reason });
  }
  /** Fill the framebuffer with one colour. */
  paint(r: number, g: number, b: number): void {
    const fb = this.fb!;
    fb.fill(0, 0, fb.width, fb.height, packRgb(r, g, b));
  }
}

/** A running test endpoint. */
export interface TestEndpoint {
  announcement: LiveAnnouncement;
  /** Requests it got (path and query, token included): the viewer's calls. */
  requests: string[];
  /** End the run: a final "ended" status, sockets closed, live.json removed (unless `keepAnnouncement`). */
  end(opts?: { keepAnnouncement?: boolean }): Promise<void>;
  /** Stop answering at once (a crashed runner): sockets cut, nothing said, live.json left. */
  crash(): Promise<void>;
}

/**
 * Serve `control` in `dir` by the live protocol (/events, /control; /rfb is not served here) and announce it in
 * `dir`/live.json with `pid` (default this process).
 */
export async function serveTestEndpoint(dir: string, control: TestControl, opts: { pid?: number } = {}): Promise<TestEndpoint> {
  const token = randomBytes(16).toString('hex');
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const reply = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.searchParams.get('token') !== token) return reply(403, { code: 'LIVE_ERR_TOKEN', message: 'bad token' });
    if (url.pathname !== '/control' || req.method !== 'POST') return reply(404, { code: 'LIVE_ERR_BAD_REQUEST', message: 'no such path' });
    let text = '';
    req.on('data', (d: Buffer) => (text += d));
    req.on('end', () => {
      let body: { op?: string; who?: string };
      try {
        body = JSON.parse(text) as typeof body;
      } catch {
        return reply(400, { code: 'LIVE_ERR_BAD_REQUEST', message: 'not JSON' });
      }
      const who = body.who ?? '';
      const op = body.op === 'takeover' ? control.takeover(who) : body.op === 'handback' ? control.handback(who) : body.op === 'status' ? Promise.resolve(control.status()) : null;
      if (!op) return reply(400, { code: 'LIVE_ERR_BAD_REQUEST', message: 'bad op' });
      op.then(
        (s) => reply(200, s),
        (e: VncuaError) => reply(409, { code: e.code, message: e.message, holder: (e.details as { holder?: string | null }).holder ?? null }),
      );
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<WebSocket>();
  server.on('upgrade', (req, socket, head) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('token') !== token || (url.pathname !== '/events' && url.pathname !== '/rfb')) return void socket.destroy();
    if (url.pathname === '/rfb') {
      // Until the real endpoint: what a watcher sends comes back unchanged.
      return void wss.handleUpgrade(req, socket, head, (ws) => {
        sockets.add(ws);
        ws.on('close', () => sockets.delete(ws));
        ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      });
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('close', () => sockets.delete(ws));
      const send = (s: LiveStatus) => ws.send(JSON.stringify({ type: 'status', ...s }));
      const off = control.onStatus(send);
      ws.on('close', off);
      send(control.status());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const announcement: LiveAnnouncement = {
    version: 1,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    pid: opts.pid ?? process.pid,
    started_at: Date.now(),
  };
  await writeFile(join(dir, 'live.json'), JSON.stringify(announcement), { mode: 0o600 });
  const stop = async () => {
    for (const ws of sockets) ws.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return {
    announcement,
    requests,
    async end(o = {}) {
      control.set({ state: 'ended', holder: null, help: null });
      for (const ws of sockets) ws.close(1000, 'run ended');
      await stop();
      if (!o.keepAnnouncement) await rm(join(dir, 'live.json'), { force: true });
    },
    crash: stop,
  };
}
