/**
 * The few raw CDP operations the runner needs on a desktop's browser, over its HTTP endpoint
 * (`/json/version`, `/json/list`, `/json/new`, `/json/close`) and one page WebSocket at a time:
 * "does the browser answer", "wait until the page has loaded", "navigate to the task's page".
 * (Lighter than a Playwright connection, and nothing stays attached to the browser afterwards.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { cdpHttpUrl } from '../harness/cdp/endpoint.ts';
import { redactUrl } from '../harness/redact.ts';

/** A target as /json/list describes it. */
interface CdpTarget {
  id: string;
  type: string;
  url: string;
  webSocketDebuggerUrl?: string;
}

/** Options of the CDP helpers. */
export interface CdpPageOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

const HTTP_TIMEOUT_MS = 3000;
/** Time given to a loaded page to paint before the agent's first look. */
const FIRST_PAINT_MS = 150;

function anySignal(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const t = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, t]) : t;
}

async function cdpHttp<T>(cdpUrl: string, path: string, opts: { method?: string; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
  const r = await fetch(cdpHttpUrl(cdpUrl, path), { method: opts.method ?? 'GET', signal: anySignal(opts.signal, opts.timeoutMs ?? HTTP_TIMEOUT_MS) });
  if (!r.ok) throw new Error(`CDP ${path}: HTTP ${r.status}`);
  const text = await r.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** True when the browser's CDP endpoint answers GET /json/version within `timeoutMs` (default 3000). */
export async function cdpAnswers(cdpUrl: string, opts: CdpPageOptions = {}): Promise<boolean> {
  try {
    const v = await cdpHttp<{ Browser?: string }>(cdpUrl, '/json/version', opts);
    return typeof v?.Browser === 'string';
  } catch {
    return false;
  }
}

/** The browser's page targets (not DevTools or extension pages). */
async function pageTargets(cdpUrl: string, signal?: AbortSignal): Promise<CdpTarget[]> {
  const list = await cdpHttp<CdpTarget[]>(cdpUrl, '/json/list', signal ? { signal } : {});
  return list.filter((t) => t.type === 'page' && !t.url.startsWith('devtools://'));
}

/** One page's CDP WebSocket: send commands, wait for an event. */
class PageSocket {
  #ws: WebSocket;
  #nextId = 1;
  #pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  #events = new Map<string, Array<() => void>>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      let m: { id?: number; method?: string; result?: unknown; error?: { message?: string } };
      try {
        m = JSON.parse(String(data)) as typeof m;
      } catch {
        return;
      }
      if (m.id !== undefined) {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.error) p?.reject(new Error(m.error.message ?? 'CDP error'));
        else p?.resolve(m.result);
      } else if (m.method) {
        for (const f of this.#events.get(m.method) ?? []) f();
      }
    });
    const fail = () => {
      for (const p of this.#pending.values()) p.reject(new Error('CDP page socket closed'));
      this.#pending.clear();
    };
    ws.on('close', fail);
    ws.on('error', fail);
  }

  static async open(url: string, signal: AbortSignal): Promise<PageSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        ws.once('open', () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
        ws.once('error', (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        });
      });
    } catch (e) {
      ws.terminate();
      throw e;
    }
    return new PageSocket(ws);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#ws.send(JSON.stringify({ id, method, params }), (e) => {
        if (e) {
          this.#pending.delete(id);
          reject(e);
        }
      });
    });
  }

  /** Resolves on the next `method` event (call before triggering it). */
  once(method: string): Promise<void> {
    return new Promise((resolve) => {
      const list = this.#events.get(method) ?? [];
      list.push(resolve);
      this.#events.set(method, list);
    });
  }

  close(): void {
    this.#ws.terminate();
  }
}

/** Rejects when `signal` fires. */
function whenAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * Wait until the browser's page has left about:blank and its document is complete (then give it a
 * moment to paint). Resolves false when `timeoutMs` (default 15 000) passes first, or at once when
 * Chromium shows its own error page (the page's server did not answer).
 */
export async function waitForPageLoad(cdpUrl: string, opts: CdpPageOptions = {}): Promise<boolean> {
  const signal = anySignal(opts.signal, opts.timeoutMs ?? 15_000);
  while (!signal.aborted) {
    try {
      const page = (await pageTargets(cdpUrl, signal)).find((t) => t.url && t.url !== 'about:blank' && t.webSocketDebuggerUrl);
      // Chromium's own error page: the server did not answer.
      if (page?.url.startsWith('chrome-error://')) return false;
      if (page) {
        const s = await PageSocket.open(page.webSocketDebuggerUrl!, signal);
        try {
          const r = (await Promise.race([s.send('Runtime.evaluate', { expression: 'document.readyState', returnByValue: true }), whenAborted(signal)])) as {
            result?: { value?: unknown };
          };
          if (r?.result?.value === 'complete') {
            await sleep(FIRST_PAINT_MS, undefined, { signal }).catch(() => {});
            return !opts.signal?.aborted;
          }
        } finally {
          s.close();
        }
      }
    } catch {
      // not up yet, or between documents: poll again
    }
    await sleep(50, undefined, { signal }).catch(() => {});
  }
  if (opts.signal?.aborted) throw opts.signal.reason;
  return false;
}

/**
 * Point the browser at `url` (the remote provider's way to start a task): navigate the first page
 * target (opening one if there is none), close the other pages left by an earlier task, and wait for
 * the load event. Throws if the browser does not answer or the page does not load within `timeoutMs`
 * (default 20 000).
 */
export async function navigatePage(cdpUrl: string, url: string, opts: CdpPageOptions = {}): Promise<void> {
  const signal = anySignal(opts.signal, opts.timeoutMs ?? 20_000);
  let pages = await pageTargets(cdpUrl, signal);
  if (pages.length === 0) {
    await cdpHttp(cdpUrl, `/json/new?about:blank`, { method: 'PUT', signal });
    pages = await pageTargets(cdpUrl, signal);
  }
  const [page, ...others] = pages;
  if (!page?.webSocketDebuggerUrl) throw new Error(`the browser at ${redactUrl(cdpUrl)} has no page to navigate`);
  for (const t of others) await cdpHttp(cdpUrl, `/json/close/${t.id}`, { signal }).catch(() => {});
  const s = await PageSocket.open(page.webSocketDebuggerUrl, signal);
  try {
    await Promise.race([s.send('Page.enable'), whenAborted(signal)]);
    const loaded = s.once('Page.loadEventFired');
    const r = (await Promise.race([s.send('Page.navigate', { url }), whenAborted(signal)])) as { errorText?: string };
    if (r?.errorText) throw new Error(`navigating to ${url} failed: ${r.errorText}`);
    await Promise.race([loaded, whenAborted(signal)]);
    await Promise.race([s.send('Page.bringToFront'), whenAborted(signal)]).catch(() => {});
  } finally {
    s.close();
  }
  await sleep(FIRST_PAINT_MS, undefined, { signal });
}
