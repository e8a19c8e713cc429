/**
 * Scripted fake RFB servers on 127.0.0.1 (OS-assigned ports), over plain TCP or
 * WebSocket, for tests of how the client reacts to bad servers. A script gets a
 * connection it can write to and read exact byte counts from.
 */
import http from 'node:http';
import net from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** One accepted client connection, as the server sees it. */
export interface ScriptedConnection {
  /** Send bytes to the client. */
  write(bytes: Uint8Array): void;
  /** Wait for exactly `n` bytes from the client (rejects if it disconnects first). */
  read(n: number): Promise<Uint8Array>;
  /** Wait for at least one byte from the client and take everything it has sent so far (rejects if it disconnects first). */
  readAny(): Promise<Uint8Array>;
  /** Close gracefully. */
  end(): void;
  /** Resolves when the client side is gone. */
  closed: Promise<void>;
}

/** A running fake server. */
export interface FakeServer {
  url: string;
  port: number;
  /** Connections accepted so far. */
  connections: number;
  close(): Promise<void>;
}

/** Buffers incoming bytes and serves exact-size reads. */
class Reader {
  private buf = Buffer.alloc(0);
  /** `any`: take everything buffered once there is at least one byte. */
  private wanted: { n: number; any: boolean; resolve: (b: Uint8Array) => void; reject: (e: Error) => void } | null = null;
  private ended = false;

  push(chunk: Buffer): void {
    this.buf = Buffer.concat([this.buf, chunk]);
    this.serve();
  }

  end(): void {
    this.ended = true;
    if (this.wanted) {
      this.wanted.reject(new Error(`client disconnected while the fake server waited for ${this.wanted.n} bytes`));
      this.wanted = null;
    }
  }

  read(n: number, any = false): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      if (this.ended && this.buf.length < (any ? 1 : n)) return reject(new Error('client already disconnected'));
      this.wanted = { n, any, resolve, reject };
      this.serve();
    });
  }

  /** Everything buffered, once there is at least one byte. */
  readAny(): Promise<Uint8Array> {
    return this.read(1, true);
  }

  private serve(): void {
    if (this.wanted && this.buf.length >= this.wanted.n) {
      const n = this.wanted.any ? this.buf.length : this.wanted.n;
      const out = this.buf.subarray(0, n);
      this.buf = this.buf.subarray(n);
      const w = this.wanted;
      this.wanted = null;
      w.resolve(out);
    }
  }
}

function runScript(script: (c: ScriptedConnection) => Promise<void> | void, c: ScriptedConnection, onError: () => void): void {
  Promise.resolve()
    .then(() => script(c))
    .catch(() => onError()); // a script stopped by the client hanging up is expected in these tests
}

/** A TCP fake server running `script` for each connection. */
export async function fakeTcpServer(script: (c: ScriptedConnection) => Promise<void> | void): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((sock) => {
    sockets.add(sock);
    info.connections++;
    const reader = new Reader();
    sock.on('data', (d) => reader.push(d));
    sock.on('error', () => {});
    const closed = new Promise<void>((r) =>
      sock.once('close', () => {
        sockets.delete(sock);
        reader.end();
        r();
      }),
    );
    runScript(script, { write: (b) => void (sock.destroyed || sock.write(b)), read: (n) => reader.read(n), readAny: () => reader.readAny(), end: () => sock.end(), closed }, () =>
      sock.destroy(),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const info: FakeServer = {
    url: `tcp://127.0.0.1:${port}`,
    port,
    connections: 0,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
  return info;
}

/** A WebSocket fake server; `subprotocol: null` makes it answer with no subprotocol. */
export async function fakeWsServer(
  script: (c: ScriptedConnection) => Promise<void> | void,
  opts: { subprotocol?: string | null; httpStatus?: number; textFrames?: boolean } = {},
): Promise<FakeServer & { origins: Array<string | undefined> }> {
  const httpServer = http.createServer((_req, res) => {
    res.writeHead(opts.httpStatus ?? 404).end('not a websocket');
  });
  const origins: Array<string | undefined> = [];
  const wss = opts.httpStatus
    ? null
    : new WebSocketServer({
        server: httpServer,
        handleProtocols: (protocols) => (opts.subprotocol === null ? false : protocols.has(opts.subprotocol ?? 'binary') ? (opts.subprotocol ?? 'binary') : false),
      });
  if (opts.httpStatus) {
    httpServer.on('upgrade', (_req, socket) => {
      socket.end(`HTTP/1.1 ${opts.httpStatus} Nope\r\nContent-Length: 0\r\n\r\n`);
    });
  }
  const clients = new Set<WebSocket>();
  wss?.on('connection', (ws, req) => {
    origins.push(req.headers.origin);
    clients.add(ws);
    info.connections++;
    const reader = new Reader();
    ws.on('message', (d) => reader.push(Buffer.isBuffer(d) ? d : Buffer.concat(d as Buffer[])));
    ws.on('error', () => {});
    const closed = new Promise<void>((r) =>
      ws.once('close', () => {
        clients.delete(ws);
        reader.end();
        r();
      }),
    );
    runScript(
      script,
      {
        write: (b) => ws.readyState === ws.OPEN && ws.send(opts.textFrames ? Buffer.from(b).toString('latin1') : b, { binary: !opts.textFrames }),
        read: (n) => reader.read(n),
        readAny: () => reader.readAny(),
        end: () => ws.close(),
        closed,
      },
      () => ws.terminate(),
    );
  });
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  const port = (httpServer.address() as net.AddressInfo).port;
  const info = {
    url: `ws://127.0.0.1:${port}/websockify`,
    port,
    connections: 0,
    origins,
    close: () =>
      new Promise<void>((r) => {
        for (const c of clients) c.terminate();
        wss?.close();
        httpServer.closeAllConnections();
        httpServer.close(() => r());
      }),
  };
  return info;
}
