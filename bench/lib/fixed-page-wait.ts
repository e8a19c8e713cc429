/**
 * The page wait the eval providers used before harness/cdp/page-ready.ts, kept for bench/page-ready.ts
 * to compare against: poll /json/list every 50 ms for a page that left about:blank, read
 * `document.readyState` over a fresh page WebSocket each time, and once it is `complete`, sleep a
 * fixed 150 ms "to paint". (It also returned "loaded" for Chromium's error page and for a server that
 * never answered: the page it saw was about:blank, whose readyState is complete.)
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PageSocket, pageTargets } from '../../harness/cdp/page-socket.ts';
import { timeoutSignal } from '../../harness/cancel.ts';

/** Time given to a loaded page to paint before the agent's first look. */
const FIRST_PAINT_MS = 150;

/** True once the page's document is complete (after the fixed paint sleep); false after `timeoutMs`. */
export async function fixedPageWait(cdpUrl: string, opts: { timeoutMs?: number } = {}): Promise<boolean> {
  const signal = timeoutSignal(undefined, opts.timeoutMs ?? 15_000);
  while (!signal.aborted) {
    try {
      const page = (await pageTargets(cdpUrl, { signal })).find((t) => t.url && t.url !== 'about:blank' && t.webSocketDebuggerUrl);
      if (page?.url.startsWith('chrome-error://')) return false;
      if (page) {
        const s = await PageSocket.open(page.webSocketDebuggerUrl!, signal);
        try {
          const r = await s.send<{ result?: { value?: unknown } }>('Runtime.evaluate', { expression: 'document.readyState', returnByValue: true }, signal);
          if (r?.result?.value === 'complete') {
            await sleep(FIRST_PAINT_MS, undefined, { signal }).catch(() => {});
            return true;
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
  return false;
}
