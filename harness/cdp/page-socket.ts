/**
 * Raw CDP over a browser's HTTP endpoint (`/json/version`, `/json/list`, `/json/new`, `/json/close`)
 * and one page's WebSocket: lighter than a Playwright connection, and nothing stays attached to the
 * browser afterwards. Used by the page readiness wait (page-ready.ts) and the eval providers.
 */
import { race, timeoutSignal } from '../cancel.ts';
import { cdpHttpUrl } from './endpoint.ts';
import { WebSocket } from 'ws';

/** A target as /json/list describes it. */
export interface CdpTarget {
  id: string;
  type: string;
  url: string;
  webSocketDebuggerUrl?: string;
}

/** How long one /json request may take unless told otherwise. */
const HTTP_TIMEOUT_MS = 3000;

/** One request to the browser's /json HTTP endpoint; rejects on a non-2xx answer or the timeout (default 3000 ms). */
export async function cdpHttp<T>(cdpUrl: string, path: string, opts: { method?: string; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
  const r = await fetch(cdpHttpUrl(cdpUrl, path), { method: opts.method ?? 'GET', signal: timeoutSignal(opts.signal, opts.timeoutMs ?? HTTP_TIMEOUT_MS) });
  if (!r.ok) throw new Error(`CDP ${path}: HTTP ${r.status}`);
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The browser's page targets (not DevTools pages), in the browser's listing order. */
export async function pageTargets(cdpUrl: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<CdpTarget[]> {
  const list = await cdpHttp<CdpTarget[]>(cdpUrl, '/json/list', opts);
  return list.filter((t) => t.type === 'page' && !t.url.startsWith('devtools://'));
}

/** True when the browser's CDP endpoint answers GET /json/version within `timeoutMs` (default 3000). */
export async function cdpAnswers(cdpUrl: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<boolean> {
  try {
    const v = await cdpHttp<{ Browser?: string }>(cdpUrl, '/json/version', opts);
    return typeof v?.Browser === 'string';
  } catch {
    return false;
  }
}

/** A CDP error answer (`{ error: { message } }`) to a command. */
export class CdpCommandError extends Error {
  constructor(method: string, message: string) {
    super(`${method}: ${message}`);
    this.name = 'CdpCommandError';
  }
}

type Listener = (params: Record<string, unknown>) => void;

/** One page's CDP WebSocket: commands raced against a signal, and event listeners. */
export class PageSocket {
  #ws: WebSocket;
  #nextId = 1;
  #pending = new Map<number, { method: string; resolve(v: unknown): void; reject(e: Error): void }>();
  #listeners = new Map<string, Set<Listener>>();
  #closed: Error | null = null;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      let m: { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: { message?: string } };
      try {
        m = JSON.parse(String(data)) as typeof m;
      } catch {
        return;
      }
      if (m.id !== undefined) {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (!p) return;
        if (m.error) p.reject(new CdpCommandError(p.method, m.error.message ?? 'CDP error'));
        else p.resolve(m.result);
      } else if (m.method) {
        for (const f of [...(this.#listeners.get(m.method) ?? [])]) f(m.params ?? {});
      }
    });
    const fail = () => {
      this.#closed ??= new Error('the CDP page socket closed');
      for (const p of this.#pending.values()) p.reject(this.#closed);
      this.#pending.clear();
    };
    ws.on('close', fail);
    ws.on('error', fail);
  }

  /** Open the page's WebSocket (`webSocketDebuggerUrl`); rejects with the signal's reason when it fires first. */
  static async open(url: string, signal: AbortSignal): Promise<PageSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const opened = new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      await race(opened, { signal });
    } catch (e) {
      ws.on('error', () => {});
      ws.terminate();
      throw e;
    }
    return new PageSocket(ws);
  }

  /** Send a command; resolves with its result, rejects on a CDP error, a closed socket or when `signal` fires. */
  send<T = Record<string, unknown>>(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<T> {
    if (this.#closed) return Promise.reject(this.#closed);
    const id = this.#nextId++;
    const sent = new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      this.#ws.send(JSON.stringify({ id, method, params }), (e) => {
        if (!e) return;
        this.#pending.delete(id);
        reject(e);
      });
    });
    return race(sent, { signal, onAbort: () => this.#pending.delete(id) });
  }

  /** Send a command without waiting for its answer (answers to it are dropped); nothing when the socket is closed. */
  post(method: string, params: Record<string, unknown>): void {
    if (this.#closed) return;
    this.#ws.send(JSON.stringify({ id: this.#nextId++, method, params }));
  }

  /** Call `f` once when the socket closes (by close(), the browser, or an error). */
  onClose(f: () => void): void {
    this.#ws.once('close', f);
  }

  /** Call `f` on every `method` event until the returned function is called. */
  on(method: string, f: Listener): () => void {
    const set = this.#listeners.get(method) ?? new Set();
    set.add(f);
    this.#listeners.set(method, set);
    return () => void set.delete(f);
  }

  /** True once the socket closed (by close(), the browser, or an error). */
  get closed(): boolean {
    return this.#closed !== null || this.#ws.readyState !== WebSocket.OPEN;
  }

  /** Close the socket (pending commands reject). Never throws. */
  close(): void {
    this.#closed ??= new Error('the CDP page socket was closed');
    this.#ws.on('error', () => {});
    this.#ws.terminate();
  }
}
