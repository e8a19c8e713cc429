/**
 * What the providers need on a desktop's browser beyond the page readiness wait
 * (harness/cdp/page-ready.ts): "does the browser answer", "show the task's page" on a remote
 * desktop (one page left, navigated to the task URL, ready), and a lease whose `ready` is that wait.
 */
import { waitForPageReady, type PageReady, type PageReadyOptions } from '../harness/cdp/page-ready.ts';
import { cdpAnswers, cdpHttp, pageTargets } from '../harness/cdp/page-socket.ts';
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
}

/**
 * LeasedDesktop.open() of a desktop started at its empty page (a pool's spare): navigate its page to
 * `url`, clear the history once the task's document is there, and wait until the page is ready: the
 * same wait and PAGE_ERR_* as a desktop started at `url` (harness/cdp/page-ready.ts).
 */
export function openDesktopPage(cdpUrl: string, url: string, opts: OpenPageOptions = {}): Promise<PageReady> {
  return waitForPageReady(cdpUrl, { url, navigate: true, resetHistory: true, loadTimeoutMs: opts.loadTimeoutMs ?? 20_000, ...(opts.signal ? { signal: opts.signal } : {}) });
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
