/**
 * One HTTP request over node:http/https, read to the end (so a keep-alive socket goes back to its
 * pool), with a timeout and an AbortSignal. Network failures become VncuaErrors:
 * MODEL_ERR_TIMEOUT (no complete answer in time) and MODEL_ERR_CONNECT (refused, reset, DNS, TLS).
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { type MapError, race } from '../../harness/cancel.ts';
import { VncuaError } from '../../harness/errors.ts';
import { abortReason } from '../../harness/agent/round-trip.ts';

/** A complete HTTP response. */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Options of httpRequest(). */
export interface HttpRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The pool to use (keep-alive agents); default: a fresh connection. */
  agent?: http.Agent | false;
  /** Whole-request timeout in ms (connect to last byte). */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** A keep-alive pool holding at most one socket per origin (requests queue on it). */
export function singleSocketAgents(): { http: http.Agent; https: https.Agent } {
  const o = { keepAlive: true, keepAliveMsecs: 15_000, maxSockets: 1, maxFreeSockets: 1 };
  return { http: new http.Agent(o), https: new https.Agent(o) };
}

/** Send one request and read the whole response. Rejects with MODEL_ERR_TIMEOUT / MODEL_ERR_CONNECT, or abortReason(signal) (AGENT_ERR_CANCELLED unless the reason is a VncuaError), as sleep() does. */
export function httpRequest(url: URL, options: HttpRequestOptions): Promise<HttpResponse> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  const mod = url.protocol === 'https:' ? https : http;
  let active: http.ClientRequest | undefined;
  const mapError: MapError = (c) =>
    c.kind === 'aborted'
      ? abortReason(signal!)
      : new VncuaError('MODEL_ERR_TIMEOUT', `${url.origin}${url.pathname} gave no complete answer within ${c.timeoutMs} ms; raise requestTimeoutMs or check the server.`, {
          details: { url: url.href, timeoutMs: c.timeoutMs },
        });
  // On timeout or abort the request is destroyed (its socket is not reused).
  return race(
    () =>
      new Promise<HttpResponse>((resolve, reject) => {
        const req = mod.request(url, { method: options.method ?? 'GET', headers: options.headers, agent: options.agent });
        active = req;
        req.on('error', (e: NodeJS.ErrnoException) => {
          reject(
            new VncuaError(
              'MODEL_ERR_CONNECT',
              `${url.origin} could not be reached or dropped the connection (${e.code ?? e.message}); check the URL and that the server is running.`,
              {
                cause: e,
                details: { url: url.href, errno: e.code, reusedSocket: req.reusedSocket },
              },
            ),
          );
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (e) => req.emit('error', e));
          res.on('close', () => {
            if (!res.complete) req.emit('error', Object.assign(new Error('the response was cut off'), { code: 'ECONNRESET' }));
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        });
        req.end(options.body);
      }),
    { signal, timeoutMs: options.timeoutMs, mapError, onAbort: (e) => active?.destroy(e instanceof VncuaError && e.code === 'MODEL_ERR_TIMEOUT' ? e : undefined) },
  );
}
