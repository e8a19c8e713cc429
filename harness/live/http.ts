/**
 * Small HTTP helpers of the live endpoint: the token check (constant time), JSON answers, refusing a
 * WebSocket upgrade with an HTTP status and a JSON body, and reading a bounded JSON request body.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { VncuaError } from '../errors.ts';

/** True when `given` is `token`, compared in constant time (both are hashed first, so their lengths leak nothing either). */
export function sameToken(given: string | null, token: string): boolean {
  if (given === null) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** The JSON body of an error answer: `{ code, message, ...extra }`. */
export function errorBody(e: VncuaError, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { code: e.code, message: e.message, ...extra };
}

/** Answer `status` with a JSON body. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) }).end(text);
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error', 503: 'Service Unavailable' };

/** Refuse a WebSocket upgrade with an HTTP answer (`status`, a JSON body) and close the socket. */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Longest /control body accepted. */
export const MAX_BODY = 16 * 1024;

/** Read a request body of at most `MAX_BODY` bytes as JSON; LIVE_ERR_BAD_REQUEST when it is longer or not JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY) throw new VncuaError('LIVE_ERR_BAD_REQUEST', `the request body is over ${MAX_BODY} bytes`, { details: { limit: MAX_BODY } });
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new VncuaError('LIVE_ERR_BAD_REQUEST', 'the request body is not JSON; send {"op":"takeover"|"handback"|"status","who":NAME}');
  }
}

/** Longest `who` accepted. */
export const MAX_WHO = 100;

/** `who` checked: 1..MAX_WHO characters, no control characters; else LIVE_ERR_BAD_REQUEST. */
export function checkWho(who: unknown): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (typeof who !== 'string' || who.length === 0 || who.length > MAX_WHO || /[\u0000-\u001f\u007f]/.test(who)) {
    throw new VncuaError('LIVE_ERR_BAD_REQUEST', `who must name the person: 1 to ${MAX_WHO} characters without control characters, got ${JSON.stringify(who)}`, {
      details: { who: typeof who === 'string' ? who.slice(0, MAX_WHO) : typeof who },
    });
  }
  return who;
}
