/**
 * Test helpers for the live endpoint: a minimal LiveControl over a framebuffer (the real Agent's is
 * built on branch wt/agent-takeover), with the takeover rules of the protocol, recording every input
 * and passing a holder's input on; and readers for the endpoint's HTTP answers and WebSocket closes.
 */
import { request } from 'node:http';
import WebSocket from 'ws';
import { VncuaError } from '../errors.ts';
import type { Framebuffer } from '../rfb/framebuffer.ts';
import type { HumanInput, LiveControl, LiveStatus } from './control.ts';

/** A LiveControl over whatever framebuffer the test gives it. */
export class TestControl implements LiveControl {
  private s: LiveStatus = { state: 'running', holder: null, help: null, steps: 0 };
  private fb: Framebuffer | null;
  private readonly statusListeners = new Set<(s: LiveStatus) => void>();
  private readonly fbListeners = new Set<(fb: Framebuffer | null) => void>();
  /** Every input the endpoint passed on, held or not. */
  readonly inputs: Array<{ who: string; event: HumanInput }> = [];

  /** `deliver`: where a holder's input goes (e.g. the agent's VncClient). */
  constructor(
    fb: Framebuffer | null,
    private readonly deliver: (event: HumanInput) => void = () => {},
  ) {
    this.fb = fb;
  }

  status(): LiveStatus {
    return { ...this.s };
  }

  onStatus(listener: (s: LiveStatus) => void): () => void {
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

  /** Listeners registered now (a closed endpoint leaves none). */
  get listeners(): number {
    return this.statusListeners.size + this.fbListeners.size;
  }

  /** A re-connection: the framebuffer is now `fb`. */
  setFramebuffer(fb: Framebuffer | null): void {
    this.fb = fb;
    for (const l of [...this.fbListeners]) l(fb);
  }

  /** Change the status and tell the listeners. */
  setStatus(change: Partial<LiveStatus>): void {
    this.s = { ...this.s, ...change };
    for (const l of [...this.statusListeners]) l(this.status());
  }

  async takeover(who: string): Promise<LiveStatus> {
    if (this.s.holder !== null && this.s.holder !== who) {
      throw new VncuaError('LIVE_ERR_TAKEN', `${this.s.holder} holds mouse and keyboard of this run`, { details: { holder: this.s.holder } });
    }
    // A person taking over answers a call for help.
    this.setStatus({ state: 'paused', holder: who, help: null });
    return this.status();
  }

  async handback(who: string): Promise<LiveStatus> {
    if (this.s.holder !== who) throw new VncuaError('LIVE_ERR_NOT_HOLDER', `${who} does not hold control of this run`, { details: { holder: this.s.holder } });
    this.setStatus({ state: 'running', holder: null });
    return this.status();
  }

  input(who: string, event: HumanInput): void {
    this.inputs.push({ who, event });
    if (this.s.holder === who) this.deliver(event);
  }
}

/** An HTTP answer: status and parsed JSON body. */
export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** `method` `url` with an optional JSON body (or raw text), answering status and JSON. */
export function httpJson(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { 'content-type': 'application/json', ...headers }, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
        } catch {
          reject(new Error(`${method} ${url} answered ${res.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url} got no answer in 15 s`)));
    req.on('error', reject);
    if (body !== undefined) req.end(typeof body === 'string' ? body : JSON.stringify(body));
    else req.end();
  });
}

/** What opening a WebSocket gave: refused with an HTTP answer, or open (with its text messages as JSON, collected from the start). */
export type WsOpen = { refused: JsonAnswer } | { ws: WebSocket; texts: Array<Record<string, unknown>> };

/**
 * Open a WebSocket; resolves with the socket or the HTTP answer that refused it. `onBinary` gets every
 * binary message from the very first (which may arrive in the same read as the upgrade's answer).
 */
export function openWs(url: string, protocols: string[] = [], onBinary?: (data: Buffer, ws: WebSocket) => void): Promise<WsOpen> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols);
    const texts = jsonMessages(ws);
    if (onBinary) ws.on('message', (d: Buffer, isBinary) => isBinary && onBinary(d, ws));
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        ws.terminate();
        resolve({ refused: { status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> } });
      });
    });
    ws.once('open', () => resolve({ ws, texts }));
    ws.once('error', reject);
  });
}

/** Resolve with the close code and reason once `ws` closes (or reject after `timeoutMs`). */
export function closedWith(ws: WebSocket, timeoutMs = 15_000): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    if (ws.readyState === WebSocket.CLOSED) return reject(new Error('the socket was already closed before closedWith() listened'));
    const t = setTimeout(() => reject(new Error(`the WebSocket did not close within ${timeoutMs} ms`)), timeoutMs);
    ws.once('close', (code, reason) => {
      clearTimeout(t);
      resolve({ code, reason: reason.toString() });
    });
  });
}

/** Collect a WebSocket's text messages as parsed JSON. */
export function jsonMessages(ws: WebSocket): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  ws.on('message', (d, isBinary) => {
    if (!isBinary) out.push(JSON.parse(d.toString()) as Record<string, unknown>);
  });
  return out;
}

/** Resolve once `check()` holds, polling every 10 ms; reject with `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
