/**
 * Dialing the upstream VNC endpoint for one client: `tcp://host:port` as a plain socket, or
 * `ws://` / `wss://` as a WebSocket with binary frames (websockify, x11vnc's built-in WebSocket,
 * noVNC-style bridges). The URL is parsed by the client's own `parseVncUrl`.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket from 'ws';
import { VncuaError } from '../../harness/errors.ts';
import { redactSecretsIn, redactUrl } from '../../harness/redact.ts';
import { newVncWebSocket, type TlsOptions, type VncTarget } from '../../harness/rfb/transport.ts';
import { type Endpoint, tcpEndpoint, wsEndpoint } from './endpoint.ts';

/** What dialing needs besides the target. */
export interface DialOptions {
  /** Origin header for ws:// and wss:// (default http(s)://host:port of the URL; x11vnc wants one). */
  wsOrigin?: string | undefined;
  /** TLS options for wss://. */
  tls?: TlsOptions | undefined;
  /** Give up after this many ms. */
  timeoutMs: number;
  /** Stop trying (the proxy is closing). */
  signal: AbortSignal;
}

/** Connect to `target`; rejects with RECORDER_ERR_UPSTREAM_CONNECT, leaving nothing open. */
export function dialUpstream(target: VncTarget, opts: DialOptions): Promise<Endpoint> {
  return new Promise<Endpoint>((resolve, reject) => {
    let cancel: () => void = () => {};
    let settled = false;
    const fail = (why: string, cause?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      cancel();
      reject(
        new VncuaError('RECORDER_ERR_UPSTREAM_CONNECT', `the recording proxy could not connect to the upstream ${redactUrl(target.href)}: ${redactSecretsIn(why, target.href)}; check that the VNC server (or its WebSocket bridge) is running`, {
          cause,
          details: { upstream: redactUrl(target.href) },
        }),
      );
    };
    const succeed = (ep: Endpoint) => {
      if (settled) {
        ep.destroy();
        return;
      }
      settled = true;
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onAbort);
      resolve(ep);
    };
    const onAbort = () => fail('the proxy was closed while connecting');
    const timer = Number.isFinite(opts.timeoutMs) ? setTimeout(() => fail(`no connection within ${opts.timeoutMs} ms`), opts.timeoutMs) : undefined;
    if (opts.signal.aborted) return onAbort();
    opts.signal.addEventListener('abort', onAbort, { once: true });

    if (target.kind === 'tcp') {
      const socket = net.connect({ host: target.host, port: target.port, noDelay: true });
      const onError = (e: Error) => fail(e.message, e);
      cancel = () => socket.destroy();
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        succeed(tcpEndpoint(socket));
      });
      return;
    }

    let ws: WebSocket;
    try {
      ws = newVncWebSocket(target, opts);
    } catch (e) {
      fail(e instanceof Error ? e.message : String(e), e);
      return;
    }
    let raw: Duplex | null = null;
    ws.on('upgrade', (res) => {
      raw = res.socket;
    });
    const onError = (e: Error) => fail(e.message, e);
    ws.on('error', onError);
    cancel = () => {
      ws.on('error', () => {});
      ws.terminate();
    };
    ws.once('open', () => {
      ws.off('error', onError);
      // 'message' must be listened to within this tick: the server may already have spoken.
      succeed(wsEndpoint(ws, raw!));
    });
  });
}
