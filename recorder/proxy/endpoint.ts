/**
 * One side of a relayed connection, whatever carries it: a plain TCP socket, or a WebSocket with
 * binary frames (framing removed: only the RFB bytes come out and go in). Both expose the same
 * small surface the relay needs: chunks in, chunks out with a congestion flag, pause/resume of
 * reading, and a single end report.
 */
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';

/** Outgoing bytes above this count as congestion: the relay pauses the other side's reader. */
export const HIGH_WATER_BYTES = 256 * 1024;

/** What an endpoint reports to. */
export interface EndpointHandlers {
  /** A chunk received (owned by the receiver). */
  onData(chunk: Buffer): void;
  /** The endpoint closed; `error` when it ended badly. Called exactly once. */
  onEnd(error: Error | null): void;
}

/** A byte pipe end. Nothing is delivered before start(); what arrives earlier is kept in order. */
export interface Endpoint {
  readonly transport: 'tcp' | 'ws';
  start(handlers: EndpointHandlers): void;
  /** Send now; returns false when congested (then `onDrain` fires once the backlog is gone). */
  send(chunk: Uint8Array): boolean;
  /** Call `cb` once the outgoing backlog has drained (at once when there is none). */
  onDrain(cb: () => void): void;
  pause(): void;
  resume(): void;
  /** Close after flushing what was sent; forced after `graceMs`. */
  end(graceMs: number): void;
  /** Close at once. */
  destroy(): void;
  /** Resolves once the underlying socket is closed. */
  readonly closed: Promise<void>;
}

/** Collects data and the end until start(). */
class Inbox {
  private handlers: EndpointHandlers | null = null;
  private early: Buffer[] = [];
  private ended: { error: Error | null } | null = null;
  private endReported = false;

  start(h: EndpointHandlers): void {
    if (this.handlers) throw new Error('internal: endpoint started twice');
    this.handlers = h;
    const early = this.early;
    this.early = [];
    for (const c of early) h.onData(c);
    if (this.ended) this.reportEnd(this.ended.error);
  }

  data(chunk: Buffer): void {
    if (this.ended) return;
    if (this.handlers) this.handlers.onData(chunk);
    else this.early.push(chunk);
  }

  end(error: Error | null): void {
    if (this.ended) return;
    this.ended = { error };
    if (this.handlers) this.reportEnd(error);
  }

  private reportEnd(error: Error | null): void {
    if (this.endReported) return;
    this.endReported = true;
    this.handlers!.onEnd(error);
  }
}

/** Wrap a connected TCP socket (Nagle off, keep-alive on). */
export function tcpEndpoint(socket: net.Socket): Endpoint {
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 30_000);
  const inbox = new Inbox();
  let error: Error | null = null;
  socket.on('error', (e) => {
    error ??= e;
  });
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      resolve();
      inbox.end(error);
    });
  });
  let graceTimer: NodeJS.Timeout | undefined;
  void closed.then(() => clearTimeout(graceTimer));
  return {
    transport: 'tcp',
    start(h) {
      inbox.start(h);
      socket.on('data', (c: Buffer) => inbox.data(c));
    },
    send(chunk) {
      if (socket.destroyed || socket.writableEnded) return true;
      socket.write(chunk);
      return socket.writableLength <= HIGH_WATER_BYTES;
    },
    onDrain(cb) {
      if (!socket.writableNeedDrain || socket.destroyed) cb();
      else {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          cb();
        };
        socket.on('drain', done);
        socket.on('close', done);
      }
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    end(graceMs) {
      if (socket.destroyed) return;
      socket.end();
      graceTimer ??= setTimeout(() => socket.destroy(), graceMs);
    },
    destroy: () => socket.destroy(),
    closed,
  };
}

/**
 * Wrap an open WebSocket whose raw socket is `raw` (for congestion: ws writes straight to it when
 * per-message deflate is off). Text frames end the connection: RFB needs binary frames.
 */
export function wsEndpoint(ws: WebSocket, raw: Duplex): Endpoint {
  const inbox = new Inbox();
  let error: Error | null = null;
  ws.on('error', (e) => {
    error ??= e;
  });
  ws.on('message', (data, isBinary) => {
    if (!isBinary) {
      error ??= new Error('the peer sent a WebSocket text frame; RFB needs binary frames (is a bridge in base64 mode?)');
      ws.close(1003, 'binary frames only');
      inbox.end(error);
      return;
    }
    inbox.data(Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data));
  });
  const closed = new Promise<void>((resolve) => {
    ws.once('close', () => {
      resolve();
      inbox.end(error);
    });
  });
  let graceTimer: NodeJS.Timeout | undefined;
  void closed.then(() => clearTimeout(graceTimer));
  const open = () => ws.readyState === 1; // WebSocket.OPEN
  return {
    transport: 'ws',
    start: (h) => inbox.start(h),
    send(chunk) {
      if (!open()) return true;
      ws.send(chunk, { binary: true, compress: false });
      return ws.bufferedAmount <= HIGH_WATER_BYTES;
    },
    onDrain(cb) {
      if (!raw.writableNeedDrain || !open()) cb();
      else {
        const done = () => {
          raw.off('drain', done);
          raw.off('close', done);
          cb();
        };
        raw.on('drain', done);
        raw.on('close', done);
      }
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    end(graceMs) {
      if (ws.readyState === 3) return; // CLOSED
      if (open()) ws.close(1000);
      else if (ws.readyState === 0) ws.terminate(); // CONNECTING
      // (CLOSING: the close handshake is under way; ws would wait 30 s for the peer.)
      graceTimer ??= setTimeout(() => ws.terminate(), graceMs);
    },
    destroy: () => ws.terminate(),
    closed,
  };
}
