/**
 * The navigation guard in the browser: every request Chromium makes is paused, judged by the domain policy
 * (patterns.ts) and continued or failed with `BlockedByClient`.
 *
 * Why CDP's Fetch domain on the browser target, not a local proxy and not per-page sessions:
 * - Fetch.enable on the browser-level session (one WebSocket to json/version's webSocketDebuggerUrl) intercepts the
 *   requests of every target at once: pages, popups and windows opened later, out-of-process iframes, dedicated and
 *   service workers. Per-page Fetch would need Target.setAutoAttach with waitForDebuggerOnStart on every target,
 *   recursively, and a request made before a new target's Fetch.enable would slip through.
 * - Redirect hops are paused one by one (a 302 from an allowed host to a blocked one is failed at the hop).
 * - A proxy would see only host:port of HTTPS (CONNECT) traffic, needs the desktop's Chromium restarted with
 *   --proxy-server, and misses nothing the Fetch domain sees; it would also add a TCP hop to every request.
 * - Cost: one round trip over CDP per request (paused in the browser, answered by this process); with only blocked
 *   patterns, only requests whose URL could match one are paused (the others cost nothing). Measured by
 *   bench/guard-overhead.ts (bench/RESULTS.md).
 * Limits: WebSocket handshakes (ws://, wss://) are not part of the Fetch domain, so they are not judged; data:,
 * blob: and about: URLs never reach the network and are not paused (patterns.ts allows them anyway).
 */
import { race, timeoutSignal } from '../cancel.ts';
import { cdpHttp, PageSocket } from '../cdp/page-socket.ts';
import { VncuaError, isVncuaError } from '../errors.ts';
import { redactUrl } from '../redact.ts';
import { checkUrl, interceptPatterns, type DomainPolicy, type GuardList } from './patterns.ts';

/** One request the guard failed. */
export interface BlockedRequest {
  /** The request's URL. */
  url: string;
  /** `blockedDomains: PATTERN` or `allowedDomains: no pattern matches`. */
  rule: string;
  /** The list that decided. */
  list: GuardList;
  /** The blocked pattern that matched (null: no allowed pattern matched). */
  pattern: string | null;
  /** CDP's resource type: Document (a navigation, popup or iframe), XHR, Fetch, Image, Script, ... */
  resourceType: string;
  /** When it was blocked (epoch ms). */
  at: number;
}

/** What startDomainGuard takes. */
export interface DomainGuardOptions {
  /** The browser's DevTools endpoint (http://host:port/[token/]). */
  cdpUrl: string;
  /** The compiled policy (compileDomainPolicy). */
  policy: DomainPolicy;
  /** Called for every blocked request (after it was failed). */
  onBlocked?: (b: BlockedRequest) => void;
  /** Called once if the guard's CDP connection drops before close() (the browser went away). */
  onLost?: () => void;
  signal?: AbortSignal;
  /** How long attaching may take (default 10 000 ms). */
  timeoutMs?: number;
}

/** A running guard. */
export interface DomainGuard {
  /** Requests paused and judged so far. */
  readonly judged: number;
  /** Requests blocked so far. */
  readonly blocked: number;
  /** Stop guarding (Fetch.disable; paused requests are released by the browser). Never throws. */
  close(): Promise<void>;
}

interface RequestPaused {
  requestId: string;
  request: { url: string };
  resourceType?: string;
  responseStatusCode?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Attach to the browser and judge every request from now on; rejects with GUARD_ERR_START (or the signal's reason). */
export async function startDomainGuard(opts: DomainGuardOptions): Promise<DomainGuard> {
  const signal = timeoutSignal(opts.signal, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let socket: PageSocket | null = null;
  try {
    const version = await cdpHttp<{ webSocketDebuggerUrl?: string }>(opts.cdpUrl, 'json/version', { signal });
    const ws = version?.webSocketDebuggerUrl;
    if (typeof ws !== 'string') throw new Error('json/version gave no webSocketDebuggerUrl');
    socket = await PageSocket.open(ws, signal);
    const guard = new BrowserGuard(socket, opts);
    await race(guard.enable(signal), { signal });
    return guard;
  } catch (e) {
    socket?.close();
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (isVncuaError(e)) throw e;
    const why = e instanceof Error ? e.message : String(e);
    throw new VncuaError(
      'GUARD_ERR_START',
      `The navigation guard could not attach to the browser at ${redactUrl(opts.cdpUrl)}: ${redactUrl(why)}. The run was not started unguarded; check that the desktop's Chromium is up.`,
      {
        cause: e,
      },
    );
  }
}

class BrowserGuard implements DomainGuard {
  judged = 0;
  blocked = 0;
  readonly #socket: PageSocket;
  readonly #opts: DomainGuardOptions;
  #closed = false;

  constructor(socket: PageSocket, opts: DomainGuardOptions) {
    this.#socket = socket;
    this.#opts = opts;
    socket.on('Fetch.requestPaused', (p) => this.#paused(p as unknown as RequestPaused));
    socket.onClose(() => {
      if (this.#closed) return;
      this.#closed = true;
      this.#opts.onLost?.();
    });
  }

  async enable(signal: AbortSignal): Promise<void> {
    // Request stage only: every request (and every redirect hop) is judged before it leaves the browser. Without an
    // allow list, only URLs that could be blocked are paused at all (patterns.ts interceptPatterns).
    const patterns = interceptPatterns(this.#opts.policy).map((urlPattern) => ({ urlPattern, requestStage: 'Request' }));
    await this.#socket.send('Fetch.enable', { patterns }, signal);
  }

  #paused(p: RequestPaused): void {
    const url = p.request?.url ?? '';
    this.judged++;
    const verdict = checkUrl(this.#opts.policy, url);
    // Fire and forget (no promise, no abort listener per request: this is the hot path); an answer to a request the
    // browser already dropped (its page closed) is an error answer nobody waits for.
    if (verdict.allowed) {
      this.#socket.post('Fetch.continueRequest', { requestId: p.requestId });
      return;
    }
    this.blocked++;
    this.#socket.post('Fetch.failRequest', { requestId: p.requestId, errorReason: 'BlockedByClient' });
    try {
      this.#opts.onBlocked?.({ url, rule: verdict.rule, list: verdict.list, pattern: verdict.pattern, resourceType: p.resourceType ?? 'Other', at: Date.now() });
    } catch {
      // the listener's failure is its own; the request is blocked all the same
    }
  }

  async close(): Promise<void> {
    if (this.#closed) {
      this.#socket.close();
      return;
    }
    this.#closed = true;
    try {
      await this.#socket.send('Fetch.disable', {}, AbortSignal.timeout(2000));
    } catch {
      // the browser is gone, or slow: closing the socket detaches the session, which releases its requests too
    }
    this.#socket.close();
  }
}
