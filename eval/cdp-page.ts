/**
 * What the providers need on a desktop's browser beyond the page readiness wait
 * (harness/cdp/page-ready.ts): "does the browser answer", "show the task's page" on a remote
 * desktop (one page left, navigated to the task URL, ready), and a lease whose `ready` is that wait.
 */
import { openPage, preparePage, waitForPageReady, type PageReady, type PageReadyOptions, type PreparedPage } from '../harness/cdp/page-ready.ts';
import { cdpAnswers, cdpHttp, pageTargets, type PageSocket } from '../harness/cdp/page-socket.ts';
import { timeoutSignal } from '../harness/cancel.ts';
import type { LeasedDesktop } from './providers/types.ts';

export { cdpAnswers };

/** Options of navigatePage(). */
export type NavigatePageOptions = Omit<PageReadyOptions, 'url' | 'navigate'>;

/**
 * Point the browser at `url` (the remote provider's way to start a task): keep one page target
 * (opening one if there is none, closing the pages an earlier task left), navigate it, and wait until
 * the page is ready. Throws PAGE_ERR_* (harness/cdp/page-ready.ts) naming the URL and the cause, or
 * the fetch error when the browser's /json endpoint does not answer.
 */
export async function navigatePage(cdpUrl: string, url: string, opts: NavigatePageOptions = {}): Promise<PageReady> {
  const signal = timeoutSignal(opts.signal, opts.loadTimeoutMs ?? 20_000);
  let pages = await pageTargets(cdpUrl, { signal });
  if (pages.length === 0) {
    await cdpHttp(cdpUrl, '/json/new?about:blank', { method: 'PUT', signal });
    pages = await pageTargets(cdpUrl, { signal });
  }
  for (const t of pages.slice(1)) await cdpHttp(cdpUrl, `/json/close/${t.id}`, { signal }).catch(() => {});
  return waitForPageReady(cdpUrl, { ...opts, url, navigate: true });
}

/** Options of openDesktopPage(). */
export interface OpenPageOptions {
  signal?: AbortSignal;
  /** Time for the page to load and show something (default 20 000 ms; its DOM then has 5000 ms to settle). */
  loadTimeoutMs?: number;
  /** The page's socket, opened and prepared ahead (warmOpener); closed by the call. */
  prepared?: PreparedPage;
}

/**
 * LeasedDesktop.open() of a desktop started at its empty page (a pool's spare): navigate its page to
 * `url`, clear the history once the task's document is there, and wait until the page is ready: the
 * same wait and PAGE_ERR_* as a desktop started at `url` (harness/cdp/page-ready.ts).
 */
export function openDesktopPage(cdpUrl: string, url: string, opts: OpenPageOptions = {}): Promise<PageReady> {
  return waitForPageReady(cdpUrl, {
    url,
    navigate: true,
    resetHistory: true,
    loadTimeoutMs: opts.loadTimeoutMs ?? 20_000,
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.prepared ? { prepared: opts.prepared } : {}),
  });
}

/**
 * LeasedDesktop.open() for a desktop started at its empty page, with the page's socket opened and
 * prepared now (preparePage(): Page and Network domains on, page in front, the mutation clock
 * installed), so that opening the task page later starts at Page.navigate: no /json/list look-up,
 * WebSocket handshake or CDP round trip before it. `toDesktop` maps a task URL to what the desktop
 * must load (docker: containerUrl). Without a prepared socket within `timeoutMs` (default 10 000 ms),
 * open() connects when called. close() drops the socket (the desktop's release()). With `standAt`,
 * the page first goes there (a page on the tasks' origin, StartRequest.standAt); if it cannot, the
 * desktop stays at its empty page (open() works the same from either).
 */
export async function warmOpener(
  cdpUrl: string,
  o: { toDesktop?: (url: string) => string; standAt?: string; loadTimeoutMs?: number; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<{ open: NonNullable<LeasedDesktop['open']>; close(): void }> {
  let socket: PageSocket | undefined;
  let prepared: PreparedPage | undefined;
  try {
    const signal = timeoutSignal(o.signal, o.timeoutMs ?? 10_000);
    socket = await openPage(cdpUrl, 'about:blank', true, signal);
    await socket.send('Page.enable', {}, signal);
    if (o.standAt) await standAt(socket, o.toDesktop ? o.toDesktop(o.standAt) : o.standAt, o.signal);
    // Last: the mutation clock is for the next document, the task's.
    prepared = await preparePage(socket, signal);
  } catch {
    socket?.close();
    socket = undefined;
    prepared = undefined;
    if (o.signal?.aborted) throw o.signal.reason;
  }
  return {
    open: (url, opts = {}) => {
      const p = prepared;
      prepared = undefined;
      return openDesktopPage(cdpUrl, o.toDesktop ? o.toDesktop(url) : url, {
        loadTimeoutMs: opts.loadTimeoutMs ?? o.loadTimeoutMs ?? 20_000,
        signal: opts.signal,
        ...(p ? { prepared: p } : {}),
      });
    },
    close: () => {
      prepared?.socket.close();
      prepared = undefined;
    },
  };
}

/** How long a spare may take to load its standAt page before it stays where it is. */
const STAND_AT_TIMEOUT_MS = 5000;

/**
 * Navigate the spare's page to `url` (an empty page on the tasks' origin) and wait for its load event
 * (not for content: the page is empty on purpose). If it does not load within STAND_AT_TIMEOUT_MS
 * the spare goes to about:blank instead (open() navigates from either); only cancellation throws.
 */
async function standAt(socket: PageSocket, url: string, user: AbortSignal | undefined): Promise<void> {
  const signal = timeoutSignal(user, STAND_AT_TIMEOUT_MS);
  const loaded = new Promise<void>((resolve) => {
    const off = socket.on('Page.loadEventFired', () => {
      off();
      resolve();
    });
    signal.addEventListener('abort', () => {
      off();
      resolve();
    });
  });
  let ok = false;
  try {
    await socket.send('Page.navigate', { url }, signal);
    await loaded;
    ok = !signal.aborted;
  } catch {
    // handled below
  }
  if (user?.aborted) throw user.reason;
  if (!ok) {
    // Not there (a slow or failing suite server): stop that navigation and go back to an empty page,
    // which serves as well, a little slower.
    await socket.send('Page.stopLoading', {}, AbortSignal.timeout(2000)).catch(() => {});
    await socket.send('Page.navigate', { url: 'about:blank' }, AbortSignal.timeout(5000)).catch(() => {});
  }
}

/**
 * A started desktop as a pool's spare: `lease` (its `ready` dropped) with the warm opener's open(),
 * the page socket closed on release(). When no opener can be made, the desktop is released and the
 * error thrown.
 */
export async function withWarmOpener(lease: LeasedDesktop, o: Parameters<typeof warmOpener>[1] = {}): Promise<LeasedDesktop> {
  const { ready: _ready, ...spare } = lease;
  let page: Awaited<ReturnType<typeof warmOpener>>;
  try {
    page = await warmOpener(lease.cdpUrl, o);
  } catch (e) {
    await lease.release();
    throw e;
  }
  return {
    ...spare,
    open: page.open,
    release: () => {
      page.close();
      return lease.release();
    },
  };
}

/**
 * `lease` with `ready`: the page wait `wait(signal)` started now, its rejection handled (the runner
 * reads it through agent.run), stopped by release() or `signal`.
 */
export function withPageReady(lease: LeasedDesktop, wait: (signal: AbortSignal) => Promise<unknown>, signal?: AbortSignal): LeasedDesktop {
  const stop = new AbortController();
  const ready = wait(signal ? AbortSignal.any([signal, stop.signal]) : stop.signal);
  ready.catch(() => {});
  return {
    ...lease,
    ready,
    release: () => {
      stop.abort();
      return lease.release();
    },
  };
}
