/**
 * Byte transports under the RFB session: plain TCP (`tcp://host:port`, Nagle off)
 * and WebSocket (`ws://`, `wss://`; binary frames). A transport hands every
 * received chunk to `onData` and reports its end exactly once through `onClose`.
 */
import net from 'node:net';
import WebSocket from 'ws';
import { VncuaError } from '../errors.ts';
import { redactSecretsIn, redactUrl } from '../redact.ts';
import { race } from '../cancel.ts';
import { rfbCancel } from './deadline.ts';

/** A parsed VNC URL. */
export type VncTarget = { kind: 'tcp'; host: string; port: number; href: string } | { kind: 'ws'; secure: boolean; href: string; host: string; origin: string };

/** TLS options for wss://. */
export interface TlsOptions {
  /** Verify the server's certificate (default true). */
  rejectUnauthorized?: boolean | undefined;
  /** Extra trusted CA certificate(s), PEM. */
  ca?: string | Buffer | Array<string | Buffer> | undefined;
}

/** Parse `ws://`, `wss://` or `tcp://host:port`; anything else is RFB_ERR_BAD_URL. */
export function parseVncUrl(url: string | URL): VncTarget {
  const text = String(url);
  // The message shows scheme, host and port only: the path may hold a desktop's token, the URL a password.
  const bad = (why: string): never => {
    throw new VncuaError('RFB_ERR_BAD_URL', `${redactUrl(text)} is not a usable VNC URL: ${why}; use ws://host:port/path, wss://host:port/path or tcp://host:port`, {
      details: { url: redactUrl(text) },
    });
  };
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return bad('it does not parse as a URL');
  }
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) bad('it has no host');
  if (u.username || u.password)
    bad(
      'it holds credentials (user:password@), which are refused so they never end up in logs; pass the password with { password }, or --password-file / VNCUA_VNC_PASSWORD on the command line',
    );
  if (u.protocol === 'tcp:') {
    const port = Number(u.port);
    if (!u.port || !Number.isInteger(port) || port < 1 || port > 65535) bad('tcp:// needs an explicit port 1..65535');
    if (u.pathname !== '' && u.pathname !== '/') bad('tcp:// URLs take no path');
    if (u.search || u.hash) bad('tcp:// URLs take no query or fragment');
    return { kind: 'tcp', host, port, href: u.href };
  }
  if (u.protocol === 'ws:' || u.protocol === 'wss:') {
    const secure = u.protocol === 'wss:';
    if (u.hash) bad('WebSocket URLs take no fragment');
    return { kind: 'ws', secure, href: u.href, host, origin: `${secure ? 'https' : 'http'}://${u.host}` };
  }
  return bad(`the scheme ${u.protocol} is not supported`);
}

/** Callbacks a transport reports to. */
export interface TransportHandlers {
  /** A chunk of server bytes (owned by the receiver from now on). */
  onData(chunk: Uint8Array): void;
  /** The transport is closed; `error` says why when it was not a requested close. Called exactly once. */
  onClose(error: Error | null): void;
}

/** An open byte transport. Nothing is delivered until start(): chunks that arrive earlier are kept in order. */
export interface Transport {
  /** Begin delivering data and the close to `handlers` (first whatever arrived since opening). */
  start(handlers: TransportHandlers): void;
  /** Hand bytes to the socket now (no batching; Nagle is off on TCP). */
  send(bytes: Uint8Array): void;
  /** Close politely; resolves once closed (a WebSocket close handshake is cut short after `graceMs`). */
  close(graceMs?: number): Promise<void>;
  /** Close at once. */
  destroy(): void;
}

/** What opening a transport needs besides the target. */
export interface OpenOptions {
  tls?: TlsOptions | undefined;
  wsOrigin?: string | undefined;
}

/** Open a transport; rejects with RFB_ERR_CONNECT (refused, TLS, upgrade failure) or the signal's error, leaving nothing open. */
export function openTransport(target: VncTarget, opts: OpenOptions, signal: AbortSignal): Promise<Transport> {
  return target.kind === 'tcp' ? openTcp(target, signal) : openWs(target, opts, signal);
}

/**
 * Holds data and the close until the consumer calls start(): a WebSocket can deliver the
 * server's first message in the same tick as 'open', before the opener's promise resolves.
 */
class Inbox implements TransportHandlers {
  private handlers: TransportHandlers | null = null;
  private early: Uint8Array[] = [];
  private earlyClose: { error: Error | null } | null = null;

  start(h: TransportHandlers): void {
    if (this.handlers) throw new Error('internal: transport started twice');
    this.handlers = h;
    const early = this.early;
    this.early = [];
    for (const c of early) h.onData(c);
    if (this.earlyClose) h.onClose(this.earlyClose.error);
  }

  onData(chunk: Uint8Array): void {
    if (this.handlers) this.handlers.onData(chunk);
    else this.early.push(chunk);
  }

  onClose(error: Error | null): void {
    if (this.handlers) this.handlers.onClose(error);
    else this.earlyClose = { error };
  }
}

/** RFB_ERR_CONNECT for `target` (refused, unreachable, TLS or upgrade failure): what a failed connect gives; a relay reports its upstream's failure with it too. */
export function connectError(target: VncTarget, cause: unknown): VncuaError {
  const msg = cause instanceof Error ? cause.message : String(cause);
  const where = redactUrl(target.href);
  return new VncuaError(
    'RFB_ERR_CONNECT',
    `could not connect to ${where}: ${redactSecretsIn(msg, target.href)}; check the URL and that the VNC server (or its WebSocket bridge) is running`,
    { cause, details: { url: where } },
  );
}

function openTcp(target: Extract<VncTarget, { kind: 'tcp' }>, signal: AbortSignal): Promise<Transport> {
  const handlers = new Inbox();
  let dialing: net.Socket | undefined;
  const connected = () =>
    new Promise<Transport>((resolve, reject) => {
      const socket = (dialing = net.connect({ host: target.host, port: target.port }));
      const onConnectError = (e: Error) => {
        cleanupConnect();
        socket.destroy();
        reject(connectError(target, e));
      };
      const cleanupConnect = () => {
        socket.off('error', onConnectError);
        socket.off('connect', onConnect);
      };
      const onConnect = () => {
        cleanupConnect();
        socket.setNoDelay(true);
        socket.setKeepAlive(true, 30_000);
        let error: Error | null = null;
        let closed = false;
        let done: Promise<void> | null = null;
        const closedPromise = new Promise<void>((res) => {
          socket.once('close', () => {
            closed = true;
            res();
            handlers.onClose(error);
          });
        });
        socket.on('data', (chunk: Buffer) => handlers.onData(chunk));
        socket.on('error', (e) => {
          error ??= e;
        });
        resolve({
          start: (h) => handlers.start(h),
          send(bytes) {
            if (!closed && !socket.destroyed) socket.write(bytes);
          },
          close() {
            done ??= (socket.destroy(), closedPromise);
            return done;
          },
          destroy() {
            socket.destroy();
          },
        });
      };
      socket.once('connect', onConnect);
      socket.once('error', onConnectError);
    });
  return race(connected, { signal, mapError: rfbCancel(`connecting to ${redactUrl(target.href)}`), onAbort: () => dialing?.destroy() });
}

/**
 * A WebSocket dialing a VNC endpoint (ws:// or wss://): binary frames, no compression, no redirects, the Origin
 * header (x11vnc wants one) and TLS options. It offers the "binary" subprotocol but accepts a server that picks
 * none (x11vnc, plain bridges), which ws itself would refuse. Throws synchronously on a bad URL or option.
 */
export function newVncWebSocket(target: Extract<VncTarget, { kind: 'ws' }>, opts: { wsOrigin?: string | undefined; tls?: TlsOptions | undefined }): WebSocket {
  const ws = new WebSocket(target.href, ['binary'], {
    origin: opts.wsOrigin ?? target.origin,
    perMessageDeflate: false,
    followRedirects: false,
    ...(target.secure ? { rejectUnauthorized: opts.tls?.rejectUnauthorized ?? true, ...(opts.tls?.ca !== undefined ? { ca: opts.tls.ca } : {}) } : {}),
  });
  // ws checks the answer's subprotocol after 'upgrade': fill the header in before it does.
  ws.on('upgrade', (res) => {
    if (res.headers['sec-websocket-protocol'] === undefined) res.headers['sec-websocket-protocol'] = 'binary';
  });
  return ws;
}

function openWs(target: Extract<VncTarget, { kind: 'ws' }>, opts: OpenOptions, signal: AbortSignal): Promise<Transport> {
  const handlers = new Inbox();
  let dialing: WebSocket | undefined;
  const opened = () =>
    new Promise<Transport>((resolve, reject) => {
      let ws: WebSocket;
      try {
        ws = dialing = newVncWebSocket(target, opts);
      } catch (e) {
        return reject(connectError(target, e));
      }
      const onConnectError = (e: Error) => {
        cleanupConnect();
        ws.on('error', () => {});
        ws.terminate();
        reject(connectError(target, e));
      };
      const cleanupConnect = () => {
        ws.off('error', onConnectError);
        ws.off('open', onOpen);
      };
      const onOpen = () => {
        cleanupConnect();
        // (ws turns Nagle off on its socket itself.)
        let error: Error | null = null;
        let closed = false;
        let graceTimer: NodeJS.Timeout | undefined;
        let done: Promise<void> | null = null;
        const closedPromise = new Promise<void>((res) => {
          ws.once('close', (code: number, reason: Buffer) => {
            closed = true;
            if (graceTimer) clearTimeout(graceTimer);
            res();
            // A server that says why it closed (a live endpoint's "LIVE_ERR_CLOSED: the run ended") is quoted in the client's error.
            if (!error && reason.length > 0) error = new Error(`the WebSocket closed with code ${code}: ${reason.toString('utf8')}`);
            handlers.onClose(error);
          });
        });
        ws.on('error', (e) => {
          error ??= e;
        });
        ws.on('message', (data, isBinary) => {
          if (!isBinary) {
            error ??= new VncuaError('RFB_ERR_PROTOCOL', 'the WebSocket server sent a text frame; RFB needs binary frames (is the bridge in base64 mode?)');
            ws.terminate();
            return;
          }
          const chunk = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
          handlers.onData(chunk);
        });
        resolve({
          start: (h) => handlers.start(h),
          send(bytes) {
            if (!closed && ws.readyState === WebSocket.OPEN) ws.send(bytes, { binary: true });
          },
          close(graceMs = 500) {
            if (!done) {
              done = closedPromise;
              if (ws.readyState === WebSocket.OPEN) {
                ws.close(1000);
                graceTimer = setTimeout(() => ws.terminate(), graceMs);
              } else ws.terminate();
            }
            return done;
          },
          destroy() {
            ws.terminate();
          },
        });
      };
      ws.once('open', onOpen);
      ws.on('error', onConnectError);
    });
  const abort = () => {
    dialing?.removeAllListeners('error');
    dialing?.on('error', () => {});
    dialing?.terminate();
  };
  return race(opened, { signal, mapError: rfbCancel(`connecting to ${redactUrl(target.href)}`), onAbort: abort });
}
