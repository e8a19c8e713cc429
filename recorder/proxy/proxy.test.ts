/**
 * The recording proxy against real loopback peers (TCP and WebSocket servers and clients on
 * 127.0.0.1, OS-assigned ports): exact relaying and recording in both directions for every
 * client/upstream pairing, backpressure, close propagation, failed upstream dials, start errors.
 * The VNC servers themselves (Xvnc and x11vnc) are in proxy.servers.desktop.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { isVncuaError } from '../../harness/errors.ts';
import { connectVnc } from '../../harness/rfb/index.ts';
import { now } from '../../harness/trace/clock.ts';
import { eventually, portRefuses } from '../../harness/desktop/test-helpers.ts';
import { type RecordingProxy, startRecordingProxy } from './proxy.ts';
import { expectSoundIndex, readManifest, readStream } from './test-helpers.ts';

let dir: string;
const cleanups: Array<() => Promise<unknown> | unknown> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vncua-proxy-'));
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep cleaning
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A peer connection as seen by a test: bytes in, bytes out, close. */
interface Peer {
  received: Buffer[];
  send(b: Buffer): void;
  /** Stop / restart reading (to make the other side congested). */
  pause(): void;
  resume(): void;
  /** Bytes the peer's own socket could not hand to the kernel yet. */
  backlog(): number;
  close(): void;
  closed: Promise<void>;
  /** WebSocket close code seen, if any. */
  closeCode?: number;
}

const total = (bs: Buffer[]) => bs.reduce((s, b) => s + b.length, 0);

function tcpPeer(socket: net.Socket): Peer {
  const p: Peer = {
    received: [],
    send: (b) => void socket.write(b),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    backlog: () => socket.writableLength,
    close: () => socket.end(),
    closed: new Promise((r) => socket.once('close', () => r())),
  };
  socket.on('data', (c: Buffer) => p.received.push(c));
  socket.on('error', () => {});
  return p;
}

function wsPeer(ws: WebSocket): Peer {
  const p: Peer = {
    received: [],
    send: (b) => ws.send(b, { binary: true }),
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    backlog: () => ws.bufferedAmount,
    close: () => ws.close(1000),
    closed: new Promise((r) =>
      ws.once('close', (code) => {
        p.closeCode = code;
        r();
      }),
    ),
  };
  ws.on('message', (d: Buffer) => p.received.push(d));
  ws.on('error', () => {});
  return p;
}

/** A real upstream server (tcp:// or ws://) handing each accepted connection to the test. */
async function upstreamServer(kind: 'tcp' | 'ws'): Promise<{ url: string; next(): Promise<Peer> }> {
  const queue: Peer[] = [];
  let wake: (() => void) | null = null;
  const push = (p: Peer) => {
    queue.push(p);
    wake?.();
  };
  let url: string;
  if (kind === 'tcp') {
    const server = net.createServer((s) => push(tcpPeer(s)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `tcp://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    cleanups.push(() => new Promise((r) => server.close(r)));
  } else {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await new Promise((r) => wss.once('listening', r));
    wss.on('connection', (ws) => push(wsPeer(ws)));
    url = `ws://127.0.0.1:${(wss.address() as net.AddressInfo).port}/websockify`;
    cleanups.push(() => {
      for (const c of wss.clients) c.terminate();
      return new Promise((r) => wss.close(r));
    });
  }
  return {
    url,
    async next() {
      while (queue.length === 0) await new Promise<void>((r) => (wake = r));
      return queue.shift()!;
    },
  };
}

/** Connect a viewer to the proxy over tcp:// or ws://. */
async function viewer(proxy: RecordingProxy, kind: 'tcp' | 'ws', protocols: string[] = ['binary']): Promise<Peer & { protocol: string }> {
  if (kind === 'tcp') {
    const u = new URL(proxy.url);
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    await new Promise<void>((r, j) => {
      s.once('connect', r);
      s.once('error', j);
    });
    return Object.assign(tcpPeer(s), { protocol: '' });
  }
  const ws = new WebSocket(proxy.wsUrl, protocols);
  const peer = wsPeer(ws);
  await new Promise<void>((r, j) => {
    ws.once('open', r);
    ws.once('error', j);
  });
  return Object.assign(peer, { protocol: ws.protocol });
}

async function startProxy(upstream: string, extra: Partial<Parameters<typeof startRecordingProxy>[0]> = {}): Promise<RecordingProxy> {
  const proxy = await startRecordingProxy({ upstream, dir, ...extra });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** Wait until connection `index` is recorded as closed. */
async function closedEntry(index: number) {
  const entry = await eventually(() => {
    const c = readManifest(dir).connections[index];
    return c && c.closed_at !== null ? c : null;
  });
  if (!entry) throw new Error(`connection ${index} was never recorded as closed`);
  return entry;
}

describe('relaying and recording', () => {
  for (const clientKind of ['tcp', 'ws'] as const) {
    for (const upKind of ['tcp', 'ws'] as const) {
      it(`${clientKind} viewer -> ${upKind} upstream: both directions arrive and are recorded byte for byte, with a sound time index`, async () => {
        const up = await upstreamServer(upKind);
        const proxy = await startProxy(up.url);
        const t0 = now();
        const v = await viewer(proxy, clientKind);
        const server = await up.next();
        // The server speaks first, then both sides talk in many chunks of assorted sizes.
        const greeting = Buffer.from('RFB 003.008\n', 'latin1');
        const fromServer = [greeting, ...Array.from({ length: 40 }, (_, i) => randomBytes(1 + ((i * 7919) % 200_000)))];
        const fromClient = Array.from({ length: 200 }, (_, i) => randomBytes(1 + (i % 37)));
        for (const b of fromServer) server.send(b);
        for (const b of fromClient) v.send(b);
        const wantServer = Buffer.concat(fromServer);
        const wantClient = Buffer.concat(fromClient);
        await eventually(() => total(v.received) === wantServer.length && total(server.received) === wantClient.length);
        expect(Buffer.concat(v.received).equals(wantServer)).toBe(true);
        expect(Buffer.concat(server.received).equals(wantClient)).toBe(true);
        v.close();
        await server.closed;
        const entry = await closedEntry(0);
        const t1 = now();

        expect(entry.close_reason).toBe('client closed');
        expect(entry.client_transport).toBe(clientKind);
        expect(entry.bytes).toEqual({ client: wantClient.length, server: wantServer.length });
        expect(proxy.bytes).toEqual({ client: wantClient.length, server: wantServer.length });
        expect(proxy.connections).toBe(1);
        expect(proxy.lastError).toBeNull();
        const s = readStream(dir, 'server');
        const c = readStream(dir, 'client');
        expect(s.bytes.equals(wantServer)).toBe(true);
        expect(c.bytes.equals(wantClient)).toBe(true);
        expectSoundIndex(s, { complete: true, fromMs: Math.max(t0, entry.opened_at), toMs: Math.min(t1, entry.closed_at!) });
        expectSoundIndex(c, { complete: true, fromMs: t0, toMs: t1 });
        expect(s.bytes.subarray(0, 12).toString('latin1')).toBe('RFB 003.008\n');
      });
    }
  }

  it('accepts whatever WebSocket subprotocol the viewer offers, preferring "binary"', async () => {
    const up = await upstreamServer('tcp');
    const proxy = await startProxy(up.url);
    const offers: Array<[string[], string]> = [
      [['base64', 'binary'], 'binary'],
      [['rfb'], 'rfb'],
      [[], ''],
    ];
    for (const [protocols, chosen] of offers) {
      const v = await viewer(proxy, 'ws', protocols);
      expect(v.protocol).toBe(chosen);
      const server = await up.next();
      server.send(Buffer.from('RFB 003.008\n'));
      await eventually(() => total(v.received) === 12);
      v.close();
      await server.closed;
    }
    expect(proxy.connections).toBe(3);
  });

  it('a second connection records into .1. files, the first keeps its own', async () => {
    const up = await upstreamServer('tcp');
    const proxy = await startProxy(up.url);
    const payloads = [Buffer.from('RFB 003.008\nfirst'), Buffer.from('RFB 003.007\nsecond one')];
    for (const [i, payload] of payloads.entries()) {
      const v = await viewer(proxy, 'tcp');
      const server = await up.next();
      server.send(payload);
      await eventually(() => total(v.received) === payload.length);
      v.close();
      await closedEntry(i);
    }
    expect(readStream(dir, 'server', 0).bytes.equals(payloads[0]!)).toBe(true);
    expect(readStream(dir, 'server', 1).bytes.equals(payloads[1]!)).toBe(true);
    expect(existsSync(join(dir, 'server.1.time.bin'))).toBe(true);
    expect(existsSync(join(dir, 'client.1.rfb.bin'))).toBe(true);
    expect(readManifest(dir).connections.map((c) => c.index)).toEqual([0, 1]);
  });

  it('text frames from a WebSocket viewer end its connection (RFB needs binary frames)', async () => {
    const up = await upstreamServer('tcp');
    const proxy = await startProxy(up.url);
    const u = new URL(proxy.wsUrl);
    const ws = new WebSocket(u, ['binary']);
    const peer = wsPeer(ws);
    await new Promise((r) => ws.once('open', r));
    const server = await up.next();
    ws.send('RFB 003.008\n');
    await peer.closed;
    await server.closed;
    expect(peer.closeCode).toBe(1003);
    expect(total(server.received)).toBe(0);
    expect((await closedEntry(0)).bytes.client).toBe(0);
  });
});

describe('backpressure', () => {
  const cases: Array<['tcp' | 'ws', 'tcp' | 'ws']> = [
    ['tcp', 'ws'],
    ['ws', 'tcp'],
  ];
  for (const [clientKind, upKind] of cases) {
    it(`a ${clientKind} viewer that stops reading stops the proxy reading the ${upKind} upstream; nothing is lost when it reads again`, async () => {
      const up = await upstreamServer(upKind);
      const proxy = await startProxy(up.url);
      const v = await viewer(proxy, clientKind);
      v.pause();
      const server = await up.next();
      const CHUNK = 256 * 1024;
      const COUNT = 256; // 64 MiB
      const data = randomBytes(CHUNK);
      for (let i = 0; i < COUNT; i++) {
        data.writeUInt32BE(i, 0);
        server.send(Buffer.from(data));
      }
      // Wait until the relay has stalled: the upstream's own backlog stops shrinking.
      let last = -1;
      await eventually(
        async () => {
          await new Promise((r) => setTimeout(r, 300));
          const b = server.backlog();
          const stalled = b === last;
          last = b;
          return stalled;
        },
        20_000,
        0,
      );
      expect(server.backlog()).toBeGreaterThan(0);
      expect(proxy.bytes.server).toBeLessThan(CHUNK * COUNT * 0.75);
      v.resume();
      await eventually(() => total(v.received) === CHUNK * COUNT, 30_000);
      const got = Buffer.concat(v.received);
      for (let i = 0; i < COUNT; i++) expect(got.readUInt32BE(i * CHUNK)).toBe(i);
      v.close();
      await closedEntry(0);
      const s = readStream(dir, 'server');
      expect(s.bytes.equals(got)).toBe(true);
      expectSoundIndex(s, { complete: true });
    });
  }
});

describe('closing', () => {
  for (const upKind of ['tcp', 'ws'] as const) {
    it(`the ${upKind} upstream closing closes the viewer (after what it sent), recorded as upstream closed`, async () => {
      const up = await upstreamServer(upKind);
      const proxy = await startProxy(up.url);
      const v = await viewer(proxy, 'tcp');
      const server = await up.next();
      server.send(Buffer.from('RFB 003.008\nbye'));
      server.close();
      await v.closed;
      expect(Buffer.concat(v.received).toString()).toBe('RFB 003.008\nbye');
      const entry = await closedEntry(0);
      expect(entry.close_reason).toBe('upstream closed');
      expect(entry.error_code).toBeUndefined();
      expect(proxy.lastError).toBeNull();
    });
  }

  it('close() is idempotent: it closes open connections, stops listening and finishes recording.json', async () => {
    const up = await upstreamServer('ws');
    const proxy = await startProxy(up.url);
    const tcp = await viewer(proxy, 'tcp');
    const ws = await viewer(proxy, 'ws');
    const servers = [await up.next(), await up.next()];
    for (const s of servers) s.send(Buffer.from('RFB 003.008\n'));
    await eventually(() => total(tcp.received) === 12 && total(ws.received) === 12);
    const first = proxy.close();
    const second = proxy.close();
    expect(second).toBe(first);
    await first;
    await Promise.all([tcp.closed, ws.closed, ...servers.map((s) => s.closed)]);
    expect(await portRefuses(Number(new URL(proxy.url).port))).toBe(true);
    expect(await portRefuses(Number(new URL(proxy.wsUrl).port))).toBe(true);
    const m = readManifest(dir);
    expect(m.connections).toHaveLength(2);
    for (const c of m.connections) {
      expect(c.closed_at).not.toBeNull();
      expect(c.close_reason).toBe('proxy closed');
    }
    await proxy.close();
  });
});

describe('failed upstream', () => {
  it('a refused tcp:// upstream closes the viewer and is reported (lastError, recording.json)', async () => {
    const port = await new Promise<number>((r) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => r(p));
      });
    });
    const proxy = await startProxy(`tcp://127.0.0.1:${port}`);
    const v = await viewer(proxy, 'tcp');
    await v.closed;
    expect(total(v.received)).toBe(0);
    expect(proxy.lastError?.code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
    const entry = await closedEntry(0);
    expect(entry.error_code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
    expect(entry.close_reason).toBeTruthy();
    // Our own client sees the connection close before the handshake.
    const err = await connectVnc(proxy.url, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(isVncuaError(err) && err.code).toBe('RFB_ERR_CLOSED');
    expect(proxy.connections).toBe(2);
  });

  it('a ws:// upstream that refuses the upgrade closes a WebSocket viewer and is reported', async () => {
    const http = await import('node:http');
    const server = http.createServer((_q, res) => {
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => server.close(r)));
    const proxy = await startProxy(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}/`);
    const v = await viewer(proxy, 'ws');
    await v.closed;
    expect(proxy.lastError?.code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
    expect((await closedEntry(0)).error_code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
  });

  it('an upstream that never answers is given up after connectTimeoutMs', async () => {
    // A listening socket whose backlog nobody accepts from still completes TCP connects; a
    // WebSocket upgrade to it never gets an answer.
    const server = net.createServer(() => {});
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(() => {
      server.close();
    });
    const proxy = await startProxy(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}/`, { connectTimeoutMs: 300 });
    const v = await viewer(proxy, 'tcp');
    await v.closed;
    expect(proxy.lastError?.code).toBe('RECORDER_ERR_UPSTREAM_CONNECT');
  });
});

describe('starting', () => {
  it('rejects URLs it cannot relay to with RECORDER_ERR_BAD_UPSTREAM', async () => {
    for (const upstream of ['http://127.0.0.1:5900', 'tcp://127.0.0.1', 'not a url', 'vnc://host:5900']) {
      const err = await startRecordingProxy({ upstream, dir }).catch((e: unknown) => e);
      expect(isVncuaError(err) && err.code).toBe('RECORDER_ERR_BAD_UPSTREAM');
    }
  });

  it('a directory that cannot be created is RECORDER_ERR_DIR', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const err = await startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir: join(file, 'recording') }).catch((e: unknown) => e);
    expect(isVncuaError(err) && err.code).toBe('RECORDER_ERR_DIR');
  });

  it('bad options and a cancelled start have their own codes', async () => {
    const bad = await startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir, timeoutMs: 0 }).catch((e: unknown) => e);
    expect(isVncuaError(bad) && bad.code).toBe('RECORDER_ERR_BAD_ARGUMENT');
    const ac = new AbortController();
    ac.abort();
    const aborted = await startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir, signal: ac.signal }).catch((e: unknown) => e);
    expect(isVncuaError(aborted) && aborted.code).toBe('RECORDER_ERR_ABORTED');
  });

  it('a start cancelled while under way rejects with RECORDER_ERR_ABORTED and leaves nothing listening', async () => {
    const listening = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = listening();
    const ac = new AbortController();
    const started = startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir, signal: ac.signal });
    ac.abort();
    const err = await started.catch((e: unknown) => e);
    expect(isVncuaError(err) && err.code).toBe('RECORDER_ERR_ABORTED');
    expect(await eventually(() => listening() <= before)).toBe(true);
  });

  it('creates the directory, writes an empty recording.json and replaces a previous recording there (other files stay)', async () => {
    const rec = join(dir, 'run', 'recording');
    const proxyA = await startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir: rec });
    await proxyA.close();
    writeFileSync(join(rec, 'client.3.rfb.bin'), 'stale');
    writeFileSync(join(rec, 'server.time.bin'), 'stale');
    writeFileSync(join(rec, 'notes.txt'), 'mine');
    const proxy = await startRecordingProxy({ upstream: 'tcp://127.0.0.1:5900', dir: rec });
    cleanups.push(() => proxy.close());
    expect(existsSync(join(rec, 'client.3.rfb.bin'))).toBe(false);
    expect(existsSync(join(rec, 'server.time.bin'))).toBe(false);
    expect(readFileSync(join(rec, 'notes.txt'), 'utf8')).toBe('mine');
    expect(readManifest(rec)).toEqual({
      format: 'vncua-recording',
      version: 2,
      time_unit: 'ms',
      time_encoding: 'f64',
      clock: 'epoch',
      upstream: 'tcp://127.0.0.1:5900',
      connections: [],
    });
    expect(proxy.url).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    expect(proxy.wsUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  });

  it('when the recording directory disappears, relaying goes on and the write error is reported', async () => {
    const up = await upstreamServer('tcp');
    const rec = join(dir, 'gone');
    const proxy = await startRecordingProxy({ upstream: up.url, dir: rec });
    cleanups.push(() => proxy.close());
    rmSync(rec, { recursive: true });
    const v = await viewer(proxy, 'tcp');
    const server = await up.next();
    server.send(Buffer.from('RFB 003.008\n'));
    v.send(Buffer.from('RFB 003.008\n'));
    await eventually(() => total(v.received) === 12 && total(server.received) === 12);
    expect(proxy.lastError?.code).toBe('RECORDER_ERR_WRITE');
    expect(proxy.bytes).toEqual({ client: 12, server: 12 });
  });
});
