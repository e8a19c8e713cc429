/**
 * What a task page's state means for starting an agent on it (the decision half of page-ready.ts,
 * free of I/O), and the PAGE_ERR_* errors that name the URL and the cause.
 *
 * The state is read in the page by PAGE_PROBE: `location.href`, `document.readyState`, the main
 * document's HTTP status (`performance.getEntriesByType('navigation')[0].responseStatus`: Chromium
 * keeps it even on its own error page for an empty 4xx/5xx answer) and whether the body shows
 * anything (text, or an element with a size).
 */
import { VncuaError } from '../errors.ts';

/** The page's state as PAGE_PROBE reads it. */
export interface PageProbe {
  href: string;
  readyState: string;
  /** The main document's HTTP status; 0 when unknown (about:, data:, file:, Chromium's error page for a network error). */
  status: number;
  /** The body shows text, or holds an element with a non-zero size. */
  content: boolean;
}

/** What to do next. */
export type PageVerdict =
  /** The task's document is not there or not loaded yet: wait. */
  | { kind: 'loading' }
  /** Chromium shows its own error page (chrome-error://): find the network error. */
  | { kind: 'error-page' }
  /** The main document answered an HTTP error. */
  | { kind: 'http-status'; status: number }
  /** Loaded, but nothing is shown yet (an app still rendering, or a blank page): wait. */
  | { kind: 'empty' }
  /** Loaded and showing something: wait for the DOM to settle, then start. */
  | { kind: 'loaded' };

/** Evaluated in the page (by value): a PageProbe. Never throws. */
export const PAGE_PROBE = `(() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const b = document.body;
  let content = false;
  if (b) {
    content = (b.innerText || '').trim() !== '';
    if (!content) for (const e of b.querySelectorAll('*')) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) { content = true; break; }
    }
  }
  return { href: location.href, readyState: document.readyState, status: nav && typeof nav.responseStatus === 'number' ? nav.responseStatus : 0, content };
})()`;

/** What docker/start.sh opens for `--url about:blank`. */
export const BLANK_DATA_URL = 'data:text/html,';

/**
 * The verdict on `probe` for a page that should show `url`. `navigated`: we navigated to `url` ourselves,
 * so a literal about:blank is the page asked for; otherwise about:blank asked of a desktop is start.sh's
 * empty data: page, and Chromium's initial about:blank before it is still loading (else the data: page
 * could arrive after the desktop was declared ready, racing the navigation to the task).
 */
export function judgePage(probe: PageProbe, url: string, navigated = false): PageVerdict {
  if (probe.status >= 400) return { kind: 'http-status', status: probe.status };
  if (probe.href.startsWith('chrome-error://')) return { kind: 'error-page' };
  if (probe.href === 'about:blank' || probe.href === '') return url === 'about:blank' && navigated ? { kind: 'loaded' } : { kind: 'loading' };
  // about:blank asked of a desktop: its start script shows it as an empty data: page (Chromium's app mode would show its new-tab page).
  if (url === 'about:blank') return probe.href === BLANK_DATA_URL && probe.readyState === 'complete' ? { kind: 'loaded' } : { kind: 'loading' };
  if (probe.readyState !== 'complete') return { kind: 'loading' };
  if (!probe.content) return { kind: 'empty' };
  return { kind: 'loaded' };
}

/** What to check for a Chromium network error (`net::ERR_…`). */
export function netErrorHint(netError: string): string {
  if (/ERR_CONNECTION_REFUSED/.test(netError)) return 'nothing listens at that address: is the task server up?';
  if (/ERR_NAME_NOT_RESOLVED|ERR_NAME_RESOLUTION_FAILED/.test(netError)) return 'the host name does not resolve: check the task URL (and --base-url)';
  if (/ERR_SSL|ERR_CERT|ERR_TLS/.test(netError)) return 'the TLS handshake failed: an https:// URL to a plain-HTTP server, or a certificate the browser does not trust?';
  if (/ERR_CONNECTION_(RESET|CLOSED|TIMED_OUT)|ERR_EMPTY_RESPONSE|ERR_TIMED_OUT|ERR_ADDRESS_UNREACHABLE/.test(netError))
    return 'the server did not answer properly: is the task server up and reachable from the desktop?';
  return 'is the task server up and reachable from the desktop?';
}

/** PAGE_ERR_UNREACHABLE: the browser could not load `url` (`netError` like net::ERR_CONNECTION_REFUSED). */
export function unreachableError(url: string, netError: string): VncuaError {
  return new VncuaError('PAGE_ERR_UNREACHABLE', `the task page ${url} could not be loaded: ${netError}; ${netErrorHint(netError)}`, { details: { url, netError } });
}

/** PAGE_ERR_HTTP_STATUS: the main document of `url` answered `status`. */
export function httpStatusError(url: string, status: number): VncuaError {
  const hint =
    status === 404
      ? 'the server does not serve this path: check the task URL, and give a single-page app a fallback to its index.html'
      : status === 401 || status === 403
        ? 'the server refused access to the page'
        : status >= 500
          ? 'the task server failed: see its log'
          : 'check the task URL and the task server';
  return new VncuaError('PAGE_ERR_HTTP_STATUS', `the task page ${url} answered HTTP ${status}; ${hint}`, { details: { url, status } });
}

/** What the page looked like when the load timeout passed, and what to check, for PAGE_ERR_BLANK. */
export function blankReason(last: PageProbe | null): string {
  if (!last || last.href === 'about:blank' || last.href === '')
    return 'the browser still showed about:blank: the server took the connection but sent no page; is the task server answering?';
  if (last.readyState !== 'complete') return `its document (${last.href}) was still loading; is the task server (or a resource the page waits for) answering?`;
  return `it loaded (${last.href}) but showed nothing (no text, no element with a size); did its scripts fail to load or run?`;
}

/** PAGE_ERR_BLANK: nothing was shown by the load timeout. */
export function blankError(url: string, timeoutMs: number, last: PageProbe | null): VncuaError {
  return new VncuaError('PAGE_ERR_BLANK', `the task page ${url} showed nothing within ${timeoutMs} ms: ${blankReason(last)}`, {
    details: { url, timeoutMs, href: last?.href ?? null, readyState: last?.readyState ?? null },
  });
}

/** PAGE_ERR_NOT_SETTLED: the page's DOM never stayed quiet for `quietMs` within `timeoutMs`. */
export function notSettledError(url: string, timeoutMs: number, quietMs: number): VncuaError {
  return new VncuaError(
    'PAGE_ERR_NOT_SETTLED',
    `the task page ${url} loaded, but its DOM kept changing for ${timeoutMs} ms (never ${quietMs} ms without a mutation, or the page stopped answering); an agent cannot start on a page that never settles: fix the page, or raise the settle timeout`,
    { details: { url, timeoutMs, quietMs } },
  );
}
