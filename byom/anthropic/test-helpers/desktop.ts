/**
 * Test-only: a desktop of a given size showing a page, the page seen through CDP (Playwright), and
 * a static file server for suite pages. Everything is on 127.0.0.1 with OS-assigned ports.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { serveEventsPage, type PageState } from '../../../harness/agent/test-helpers/desktops.ts';
import { serveDir } from '../../../harness/test-helpers/serve-dir.ts';
import { launchDesktop, type Desktop } from '../../../harness/desktop/index.ts';

/** A desktop showing one page, and that page through CDP. */
export interface PageDesktop {
  desktop: Desktop;
  page: Page;
  /** The URL the desktop opened. */
  url: string;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Launch a desktop of `size` showing `url`; resolves once the page's `ready` check holds. */
export async function startPageDesktop(url: string, size: string, ready: (page: Page) => Promise<unknown>): Promise<PageDesktop> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) {
      try {
        await c();
      } catch {
        // keep closing the rest
      }
    }
  };
  try {
    const desktop = await launchDesktop({ url, size, timeoutMs: 45_000 });
    closers.push(() => desktop.close());
    const browser: Browser = await chromium.connectOverCDP(desktop.cdpUrl);
    closers.push(() => browser.close());
    let page: Page | undefined;
    for (let i = 0; i < 200 && !page; i++) {
      page = browser
        .contexts()
        .flatMap((c) => c.pages())
        .find((p) => p.url().startsWith(url));
      if (!page) await sleep(50);
    }
    if (!page) throw new Error(`the page ${url} did not open`);
    await ready(page);
    return { desktop, page, url, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** The harness's events page on a desktop of `size`, plus its state and reset. */
export async function startEventsPageDesktop(size: string): Promise<PageDesktop & { state(): Promise<PageState>; reset(): Promise<void> }> {
  const http = await serveEventsPage();
  try {
    const d = await startPageDesktop(http.url, size, (p) => p.waitForFunction(() => typeof (window as unknown as { __reset?: unknown }).__reset === 'function'));
    const state = () => d.page.evaluate(() => (window as unknown as { __state(): PageState }).__state());
    return {
      ...d,
      state,
      async reset() {
        if (d.page.url() !== http.url) await d.page.goto(http.url);
        await d.page.evaluate(() => (window as unknown as { __reset(): boolean }).__reset());
      },
      async close() {
        await d.close();
        await http.close();
      },
    };
  } catch (e) {
    await http.close();
    throw e;
  }
}

export { serveDir };
