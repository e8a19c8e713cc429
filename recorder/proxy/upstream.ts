/**
 * Dialing the upstream VNC endpoint for one client: `tcp://host:port` as a plain socket, or
 * `ws://` / `wss://` as a WebSocket with binary frames (websockify, x11vnc's built-in WebSocket,
 * noVNC-style bridges). The URL is parsed by the client's own `parseVncUrl`.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { race } from '../../harness/cancel.ts';
import { VncuaError } from '../../harness/errors.ts';
import { redactSecretsIn, redactUrl } from '../../harness/redact.ts';
import { connectError, newVncWebSocket, type TlsOptions, type VncTarget } from '../../harness/rfb/transport.ts';
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

/** Why a dial failed: no connection within the timeout, the connection failed (cause), or the proxy closed. */
export type DialFailure = 'timeout' | 'failed' | 'aborted';

/**
 * The error a client connecting straight to `target` would have got for a dial failure of the proxy
 * (`err` from dialUpstream): RFB_ERR_CONNECT with the cause (refused, unreachable, TLS, upgrade
 * refused), or RFB_ERR_TIMEOUT; null when the dial was only aborted (the proxy was closing).
 */
export function directError(err: VncuaError, target: VncTarget): VncuaError | null {
  const d = err.details as { reason?: DialFailure; timeoutMs?: number } | undefined;
  if (d?.reason === 'timeout') {
    return new VncuaError('RFB_ERR_TIMEOUT', `connecting to ${redactUrl(target.href)} did not finish within ${d.timeoutMs} ms (the recording proxy got no connection to it)`, {
      cause: err,
      details: { url: redactUrl(target.href), timeoutMs: d.timeoutMs },
    });
  }
  if (d?.reason === 'failed') return connectError(target, err.cause ?? err);
  return null;
}

/** Connect to `target`; rejects with RECORDER_ERR_UPSTREAM_CONNECT (details: upstream, reason), leaving nothing open. */
export function dialUpstream(target: VncTarget, opts: DialOptions): Promise<Endpoint> {
  const dialError = (why: string, cause?: unknown, reason: DialFailure = 'failed') =>
    new VncuaError(
      'RECORDER_ERR_UPSTREAM_CONNECT',
      `the recording proxy could not connect to the upstream ${redactUrl(target.href)}: ${redactSecretsIn(why, target.href)}; check that the VNC server (or its WebSocket bridge) is running`,
      {
        cause,
        details: { upstream: redactUrl(target.href), reason, ...(reason === 'timeout' ? { timeoutMs: opts.timeoutMs } : {}) },
      },
    );
  let cancel: () => void = () => {};
  const dial = () =>
    new Promise<Endpoint>((resolve, reject) => {
      const fail = (why: string, cause?: unknown) => {
        cancel();
        reject(dialError(why, cause));
      };
      if (target.kind === 'tcp') {
        const socket = net.connect({ host: target.host, port: target.port, noDelay: true });
        const onError = (e: Error) => fail(e.message, e);
        cancel = () => socket.destroy();
        socket.once('error', onError);
        socket.once('connect', () => {
          socket.off('error', onError);
          resolve(tcpEndpoint(socket));
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
        ws.off('error', onError);
        ws.on('error', () => {});
        ws.terminate();
      };
      ws.once('open', () => {
        ws.off('error', onError);
        // 'message' must be listened to within this tick: the server may already have spoken.
        resolve(wsEndpoint(ws, raw!));
      });
    });
  return race(dial, {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    mapError: (c) =>
      c.kind === 'timeout' ? dialError(`no connection within ${c.timeoutMs} ms`, undefined, 'timeout') : dialError('the proxy was closed while connecting', undefined, 'aborted'),
    onAbort: () => cancel(),
  });
}
