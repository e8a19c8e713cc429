/**
 * Auth bindings applied in the browser over CDP.
 *
 * Headers: CDP's Fetch domain on the browser target, as the navigation guard does (harness/guard/browser-guard.ts:
 * one connection sees every target's requests, popups and out-of-process iframes included), with URL patterns
 * narrowed to the bindings' domains (patterns.ts interceptPatterns), so other requests are never paused. Each
 * matching request is continued with the binding's headers added (Fetch.continueRequest headers). Not
 * Network.setExtraHTTPHeaders: it is per page target and per all origins, so a token would go to every host the page
 * loads from. A separate connection from the guard's (not its handler) because the auth side pauses other URLs, at
 * two stages, and runs with or without a guard; Chromium chains the two interceptions (the guard judges first when
 * both are on, as it attached first).
 * Cookies: Storage.setCookies for the request's origin when a binding is first needed, before its request goes on.
 * localStorage: Page.addScriptToEvaluateOnNewDocument on each page open at start (Page.enable first: without it the
 * script is not run), setting the items when the document's origin matches, before the page's own scripts run.
 * Pages opened later (popups) do not get it (a limit, documented).
 * 401/403: matching requests are also paused at the response stage. A 401/403 answer to a request the binding was
 * applied to is retried once, with the binding re-applied (refresh: an OAuth token is fetched anew, a callback called
 * again) by this process, and its answer fulfilled to the page; a second 401/403 is reported (AUTH_ERR_REJECTED).
 */
import { timeoutSignal } from '../cancel.ts';
import { cdpHttp, pageTargets, PageSocket } from '../cdp/page-socket.ts';
import { VncuaError, isVncuaError } from '../errors.ts';
import { interceptPatterns } from '../guard/patterns.ts';
import { redactUrl } from '../redact.ts';
import { bindingFor, type AuthBinding, type AuthMaterial, type OAuthFetcher } from './auth-bindings.ts';
import { fetchClientCredentialsToken } from './oauth.ts';

/** An event of the auth side, for the trace. */
export interface AuthEvent {
  /** applied: first use of the binding; retried: re-applied after a 401/403; rejected: 401/403 again (AUTH_ERR_REJECTED). */
  kind: 'applied' | 'retried' | 'rejected';
  binding: string;
  /** The request's origin (never its path or query). */
  url: string;
  status?: number;
  resourceType: string;
  at: number;
}

/** What startBrowserAuth takes. */
export interface BrowserAuthOptions {
  cdpUrl: string;
  bindings: readonly AuthBinding[];
  onEvent?: (e: AuthEvent) => void;
  /** A binding failed (AUTH_ERR_TOKEN_URL, AUTH_ERR_CALLBACK) or a navigation was rejected twice (AUTH_ERR_REJECTED). */
  onError?: (e: VncuaError, resourceType: string) => void;
  /** The connection dropped before close(). */
  onLost?: () => void;
  fetchToken?: OAuthFetcher;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A running auth side. */
export interface BrowserAuth {
  close(): Promise<void>;
}

interface Paused {
  requestId: string;
  request: { url: string; method: string; headers: Record<string, string>; postData?: string };
  resourceType?: string;
  responseStatusCode?: number;
}

/** Headers a retry from this process must not copy from the browser's request. */
const HOP = new Set(['host', 'connection', 'content-length', 'accept-encoding', 'keep-alive', 'transfer-encoding', 'upgrade']);
/** Response headers dropped when fulfilling a retried answer (the body is given decoded and whole). */
const DROP = new Set(['content-encoding', 'content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function origin(url: string): string {
  return redactUrl(url);
}

/** Attach to the browser and apply `bindings` from now on; rejects with AUTH_ERR_START. */
export async function startBrowserAuth(opts: BrowserAuthOptions): Promise<BrowserAuth> {
  const signal = timeoutSignal(opts.signal, opts.timeoutMs ?? 10_000);
  let socket: PageSocket | null = null;
  const pages: PageSocket[] = [];
  try {
    const version = await cdpHttp<{ webSocketDebuggerUrl?: string }>(opts.cdpUrl, 'json/version', { signal });
    if (typeof version?.webSocketDebuggerUrl !== 'string') throw new Error('json/version gave no webSocketDebuggerUrl');
    socket = await PageSocket.open(version.webSocketDebuggerUrl, signal);
    const auth = new Auth(socket, pages, opts);
    await auth.enable(signal);
    return auth;
  } catch (e) {
    socket?.close();
    for (const p of pages) p.close();
    if (opts.signal?.aborted) throw opts.signal.reason;
    if (isVncuaError(e)) throw e;
    throw new VncuaError(
      'AUTH_ERR_START',
      `The auth bindings could not attach to the browser at ${redactUrl(opts.cdpUrl)}: ${redactUrl(e instanceof Error ? e.message : String(e))}.`,
      {
        cause: e,
      },
    );
  }
}

class Auth implements BrowserAuth {
  readonly #socket: PageSocket;
  readonly #pages: PageSocket[];
  readonly #opts: BrowserAuthOptions;
  readonly #ctl = new AbortController();
  /** Bindings applied at least once (by label). */
  readonly #applied = new Set<string>();
  #closed = false;

  constructor(socket: PageSocket, pages: PageSocket[], opts: BrowserAuthOptions) {
    this.#socket = socket;
    this.#pages = pages;
    this.#opts = opts;
    socket.on('Fetch.requestPaused', (p) => void this.#paused(p as unknown as Paused));
    socket.onClose(() => {
      if (this.#closed) return;
      this.#closed = true;
      this.#ctl.abort();
      this.#opts.onLost?.();
    });
  }

  async enable(signal: AbortSignal): Promise<void> {
    const globs = new Set<string>();
    for (const b of this.#opts.bindings) for (const g of interceptPatterns(b.policy)) globs.add(g);
    const patterns = [...globs].flatMap((urlPattern) => [
      { urlPattern, requestStage: 'Request' },
      { urlPattern, requestStage: 'Response' },
    ]);
    await this.#socket.send('Fetch.enable', { patterns }, signal);
    const storage = this.#opts.bindings.filter((b) => b.type === 'localStorage' || b.type === 'custom');
    if (storage.length === 0) return;
    // localStorage items are known up front for localStorage bindings (custom ones set theirs when first applied).
    const scripts: string[] = [];
    for (const b of storage) {
      if (b.type !== 'localStorage') continue;
      const m = await b.material({ url: '', refresh: false, signal }, this.#fetchToken);
      scripts.push(storageScript(b, m.localStorage ?? {}));
    }
    if (scripts.length === 0) return;
    for (const t of await pageTargets(this.#opts.cdpUrl, { signal })) {
      if (!t.webSocketDebuggerUrl) continue;
      const page = await PageSocket.open(t.webSocketDebuggerUrl, signal);
      this.#pages.push(page);
      await page.send('Page.enable', {}, signal);
      for (const source of scripts) await page.send('Page.addScriptToEvaluateOnNewDocument', { source }, signal);
    }
  }

  get #fetchToken(): OAuthFetcher {
    return this.#opts.fetchToken ?? fetchClientCredentialsToken;
  }

  async #material(b: AuthBinding, url: string, refresh: boolean): Promise<AuthMaterial> {
    const m = await b.material({ url, refresh, signal: this.#ctl.signal }, this.#fetchToken);
    if (m.cookies?.length) {
      const u = new URL(url);
      await this.#socket.send(
        'Storage.setCookies',
        { cookies: m.cookies.map((c) => ({ path: '/', ...c, domain: u.hostname, secure: c.secure ?? u.protocol === 'https:' })) },
        timeoutSignal(this.#ctl.signal, 5000),
      );
    }
    return m;
  }

  #event(kind: AuthEvent['kind'], b: AuthBinding, p: Paused, status?: number): void {
    try {
      this.#opts.onEvent?.({
        kind,
        binding: b.label,
        url: origin(p.request.url),
        resourceType: p.resourceType ?? 'Other',
        at: Date.now(),
        ...(status === undefined ? {} : { status }),
      });
    } catch {
      // the listener's failure is its own
    }
  }

  async #paused(p: Paused): Promise<void> {
    const url = p.request?.url ?? '';
    const b = bindingFor(this.#opts.bindings, url);
    const response = p.responseStatusCode !== undefined;
    try {
      if (!b) {
        this.#socket.post(response ? 'Fetch.continueResponse' : 'Fetch.continueRequest', { requestId: p.requestId });
        return;
      }
      if (!response) {
        const m = await this.#material(b, url, false);
        if (!this.#applied.has(b.label)) {
          this.#applied.add(b.label);
          this.#event('applied', b, p);
        }
        if (m.headers && Object.keys(m.headers).length > 0) {
          const headers = mergeHeaders(p.request.headers, m.headers);
          this.#socket.post('Fetch.continueRequest', { requestId: p.requestId, headers: Object.entries(headers).map(([name, value]) => ({ name, value })) });
        } else this.#socket.post('Fetch.continueRequest', { requestId: p.requestId });
        return;
      }
      const status = p.responseStatusCode!;
      if (status !== 401 && status !== 403) {
        this.#socket.post('Fetch.continueResponse', { requestId: p.requestId });
        return;
      }
      await this.#retry(b, p, status);
    } catch (e) {
      if (this.#closed) return;
      this.#socket.post('Fetch.failRequest', { requestId: p.requestId, errorReason: 'AccessDenied' });
      const err = isVncuaError(e) ? e : new VncuaError('AUTH_ERR_CALLBACK', `Auth binding ${b?.label ?? '?'} could not be applied to ${origin(url)}.`, { cause: e });
      this.#opts.onError?.(err, p.resourceType ?? 'Other');
    }
  }

  /** The one retry of a 401/403: the binding re-applied, the request re-sent from here, its answer given to the page. */
  async #retry(b: AuthBinding, p: Paused, status: number): Promise<void> {
    this.#event('retried', b, p, status);
    const m = await this.#material(b, p.request.url, true);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.request.headers)) if (!HOP.has(k.toLowerCase())) headers[k] = v;
    Object.assign(headers, mergeHeaders(headers, m.headers ?? {}));
    const cookies = await this.#socket.send<{ cookies: Array<{ name: string; value: string; domain: string }> }>('Storage.getCookies', {}, timeoutSignal(this.#ctl.signal, 5000));
    const host = new URL(p.request.url).hostname;
    const jar = cookies.cookies.filter((c) => host === c.domain.replace(/^\./, '') || host.endsWith(c.domain.startsWith('.') ? c.domain : `.${c.domain}`));
    if (jar.length) headers.Cookie = jar.map((c) => `${c.name}=${c.value}`).join('; ');
    const res = await fetch(p.request.url, {
      method: p.request.method,
      headers,
      body: p.request.postData ?? null,
      redirect: 'manual',
      signal: timeoutSignal(this.#ctl.signal, 15_000),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const responseHeaders: Array<{ name: string; value: string }> = [];
    res.headers.forEach((value, name) => {
      if (!DROP.has(name) && name !== 'set-cookie') responseHeaders.push({ name, value });
    });
    for (const c of res.headers.getSetCookie()) responseHeaders.push({ name: 'set-cookie', value: c });
    this.#socket.post('Fetch.fulfillRequest', { requestId: p.requestId, responseCode: res.status, responseHeaders, body: body.toString('base64') });
    if (res.status === 401 || res.status === 403) {
      this.#event('rejected', b, p, res.status);
      this.#opts.onError?.(
        new VncuaError(
          'AUTH_ERR_REJECTED',
          `Auth binding ${b.label}: ${origin(p.request.url)} answered HTTP ${res.status} to a request carrying the binding, and again after it was re-applied; check the credentials it names.`,
          { details: { binding: b.label, url: origin(p.request.url), status: res.status } },
        ),
        p.resourceType ?? 'Other',
      );
    }
  }

  async close(): Promise<void> {
    const was = this.#closed;
    this.#closed = true;
    this.#ctl.abort();
    if (!was) {
      try {
        await this.#socket.send('Fetch.disable', {}, AbortSignal.timeout(2000));
      } catch {
        // gone or slow: closing the socket releases its requests too
      }
    }
    this.#socket.close();
    for (const p of this.#pages) p.close();
  }
}

/** `base` with `extra` set over it (header names compared case-insensitively). */
export function mergeHeaders(base: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const lower = new Set(Object.keys(extra).map((k) => k.toLowerCase()));
  for (const [k, v] of Object.entries(base)) if (!lower.has(k.toLowerCase())) out[k] = v;
  return { ...out, ...extra };
}

/** The new-document script that sets `items` in localStorage when the document's origin matches binding `b`. */
function storageScript(b: AuthBinding, items: Record<string, string>): string {
  // The origin test mirrors the pattern matcher for host patterns: exact host, or *.host and its subdomains.
  const p = b.policy.blocked[0]!;
  const test = { scheme: p.scheme, host: p.host, wildcard: p.wildcard, port: p.port, kind: p.kind };
  return `(() => { try {
    const p = ${JSON.stringify(test)}; const l = location; const scheme = l.protocol.slice(0, -1);
    const dflt = { http: 80, https: 443 }[scheme] ?? null; const port = l.port ? Number(l.port) : dflt;
    if (p.scheme && p.scheme !== scheme) return;
    if (p.kind === 'host') {
      if (p.port !== null && p.port !== port) return;
      if (p.host !== '*' && !(l.hostname === p.host || (p.wildcard && l.hostname.endsWith('.' + p.host)))) return;
    }
    const items = ${JSON.stringify(items)};
    for (const k of Object.keys(items)) localStorage.setItem(k, items[k]);
  } catch {} })();`;
}
