/** Test-only: the explorer's test pages served over HTTP and a desktop (Xvnc + Chromium) showing one of them. */
import { fileURLToPath } from 'node:url';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { waitForPageReady } from '../../harness/cdp/page-ready.ts';
import { startStaticServer, type StaticServer } from '../../harness/static-server.ts';

/** The directory of the explorer's test pages. */
export const TEST_PAGES = fileURLToPath(new URL('./test-pages/', import.meta.url));

/** A desktop showing a test page, and the server serving it. */
export interface ExplorerDesktop {
  desktop: Desktop;
  server: StaticServer;
  /** The page's URL. */
  url: string;
  close(): Promise<void>;
}

/** Serve the test pages, start a desktop (1280x800) at `page` (e.g. 'game.html') and wait until the page is ready. */
export async function startExplorerDesktop(page: string, options: { size?: string } = {}): Promise<ExplorerDesktop> {
  const server = await startStaticServer({ root: TEST_PAGES });
  const url = new URL(page, server.url).href;
  let desktop: Desktop | undefined;
  try {
    desktop = await launchDesktop({ url, size: options.size, timeoutMs: 45_000 });
    await waitForPageReady(desktop.cdpUrl, { url, signal: AbortSignal.timeout(30_000) });
    const d = desktop;
    return {
      desktop: d,
      server,
      url,
      async close() {
        await d.close().catch(() => {});
        await server.close().catch(() => {});
      },
    };
  } catch (e) {
    await desktop?.close().catch(() => {});
    await server.close();
    throw e;
  }
}

/** Navigate the desktop's page to `url` (default its first page) with a fresh history, and wait until it is ready. */
export async function resetPage(d: ExplorerDesktop, url = d.url): Promise<void> {
  await waitForPageReady(d.desktop.cdpUrl, { url, navigate: true, resetHistory: true, signal: AbortSignal.timeout(30_000) });
}
