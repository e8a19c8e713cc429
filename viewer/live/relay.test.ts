/**
 * The relay between two real WebSocket servers on 127.0.0.1: a "page" side (a ws server whose accepted socket is
 * handed to relay(), as vncua serve does) and an "endpoint" side that records what it receives. Bytes go through
 * unchanged both ways, including those the page sends before the endpoint's socket is open.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { relay, type Relay } from './relay.ts';

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  cleanup.push(() => server.closeAllConnections());
  return (server.address() as AddressInfo).port;
}

/** An endpoint: records the URL and messages it gets, sends `greeting` on connect; `gate` holds the handshake. */
async function endpoint(opts: { greeting?: Buffer[]; gate?: Promise<void>; status?: number } = {}) {
  const got: Array<{ data: Buffer; binary: boolean }> = [];
  const urls: string[] = [];
  const protocols: string[] = [];
  const sockets: WebSocket[] = [];
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => p.values().next().value ?? false });
  server.on('upgrade', async (req, socket, head) => {
    urls.push(req.url ?? '');
    protocols.push(String(req.headers['sec-websocket-protocol'] ?? ''));
    await opts.gate;
    if (opts.status) {
      socket.end(`HTTP/1.1 ${opts.status} Nope\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.push(ws);
      ws.on('message', (data, binary) => got.push({ data: Buffer.from(data as Buffer), binary }));
      for (const g of opts.greeting ?? []) ws.send(g);
    });
  });
  const port = await listen(server);
  cleanup.push(() => {
    for (const s of sockets) s.terminate();
    wss.close();
  });
  return { url: `ws://127.0.0.1:${port}/rfb?token=secret&who=ann`, got, urls, protocols, sockets };
}

/** A page side: its accepted socket is relayed to `target`; returns the page's client socket. */
async function page(target: string, protocols: string[] = []) {
  const server = createServer();
  const wss = new WebSocketServer({ server, handleProtocols: (p) => p.values().next().value ?? false });
  const relays: Relay[] = [];
  const closed: Array<string | null> = [];
  wss.on('connection', (ws, req) => {
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    relays.push(relay(ws, target, { protocols: offered, timeoutMs: 3000, onClose: (e) => closed.push(e) }));
  });
  const port = await listen(server);
  cleanup.push(() => Promise.all(relays.map((r) => r.close(200))).then(() => wss.close()));
  const client = new WebSocket(`ws://127.0.0.1:${port}/`, protocols);
  cleanup.push(() => client.terminate());
  const received: Array<{ data: Buffer; binary: boolean }> = [];
  client.on('message', (data, binary) => received.push({ data: Buffer.from(data as Buffer), binary }));
  const closeInfo = new Promise<{ code: number; reason: string }>((r) => client.on('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise<void>((r, j) => {
    client.once('open', () => r());
    client.once('error', j);
  });
  return { client, received, closeInfo, relays, closed };
}

const until = async (cond: () => boolean, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** Deterministic bytes of length n. */
const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 255));

describe('relay (real WebSocket servers on 127.0.0.1)', () => {
  it('passes every message through unchanged, in order, both ways; early page messages are held until the endpoint is open', async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const greeting = [Buffer.from('RFB 003.008\n'), bytes(70_000, 1), bytes(1, 2)];
    const ep = await endpoint({ greeting, gate });
    const p = await page(ep.url, ['binary']);
    // Sent while the endpoint's handshake is held: must arrive, in order.
    const early = [bytes(12, 3), bytes(3, 4), Buffer.from('text too')];
    p.client.send(early[0]!);
    p.client.send(early[1]!);
    p.client.send(early[2]!.toString());
    await until(() => ep.urls.length === 1, 'the endpoint to be reached');
    open();
    await until(() => p.received.length === greeting.length, 'the greeting at the page');
    expect(p.received.map((m) => m.data)).toEqual(greeting);
    expect(p.received.every((m) => m.binary)).toBe(true);
    const later = Array.from({ length: 50 }, (_, i) => bytes(1 + ((i * 977) % 5000), i));
    for (const b of later) p.client.send(b);
    await until(() => ep.got.length === early.length + later.length, 'every page message at the endpoint');
    expect(ep.got.map((m) => m.data)).toEqual([...early, ...later]);
    expect(ep.got.map((m) => m.binary)).toEqual([true, true, false, ...later.map(() => true)]);
    // The endpoint's URL (with its token) is what relay() was given; the page's subprotocol was passed on.
    expect(ep.urls[0]).toBe('/rfb?token=secret&who=ann');
    expect(ep.protocols[0]).toBe('binary');
    expect(p.client.protocol).toBe('binary');
    expect(p.relays[0]!.bytes).toEqual({ up: 12 + 3 + 8 + later.reduce((n, b) => n + b.length, 0), down: 12 + 70_000 + 1 });
  });

  it('the endpoint closing closes the page with its code and reason; the page closing closes the endpoint', async () => {
    const ep = await endpoint({ greeting: [Buffer.from('hi')] });
    const p = await page(ep.url);
    await until(() => p.received.length === 1, 'the greeting');
    ep.sockets[0]!.close(4001, 'run ended');
    expect(await p.closeInfo).toEqual({ code: 4001, reason: 'run ended' });
    await until(() => p.closed.length === 1, 'the relay to end');
    expect(p.closed[0]).toBeNull();

    const ep2 = await endpoint({ greeting: [Buffer.from('hi')] });
    const p2 = await page(ep2.url);
    await until(() => p2.received.length === 1, 'the greeting');
    const endpointClosed = new Promise<number>((r) => ep2.sockets[0]!.on('close', (code) => r(code)));
    p2.client.close(1000);
    expect(await endpointClosed).toBe(1000);
  });

  it('an endpoint that is gone or refuses: the page socket closes with 1011 and SERVE_ERR_LIVE_UNREACHABLE', async () => {
    const srv = createServer();
    const port = await listen(srv);
    await new Promise<void>((r) => srv.close(() => r())); // nothing listens there now
    const p = await page(`ws://127.0.0.1:${port}/rfb?token=x`);
    const c = await p.closeInfo;
    expect(c.code).toBe(1011);
    expect(c.reason).toMatch(/^SERVE_ERR_LIVE_UNREACHABLE: the live endpoint does not answer \(ECONNREFUSED\)/);
    await until(() => p.closed.length === 1, 'the relay to end');
    expect(p.closed[0]).toContain('ECONNREFUSED');

    const ep = await endpoint({ status: 403 });
    const p2 = await page(ep.url);
    expect(await p2.closeInfo).toEqual({ code: 1011, reason: 'SERVE_ERR_LIVE_UNREACHABLE: the live endpoint refused the connection (HTTP 403)' });
  });

  it('close() closes both sides and resolves', async () => {
    const ep = await endpoint({ greeting: [Buffer.from('hi')] });
    const p = await page(ep.url);
    await until(() => p.received.length === 1, 'the greeting');
    await p.relays[0]!.close(2000);
    expect((await p.closeInfo).code).toBe(1001);
    await until(() => ep.sockets[0]!.readyState === WebSocket.CLOSED, 'the endpoint socket to close');
  });
});
