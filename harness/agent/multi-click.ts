/**
 * The page's word on a multi-click (double, triple), over CDP: Chromium counts clicks with its own clock, and
 * a browser process that stalls (8 desktops on 2 cores) can see presses that left the server 50 ms apart as
 * separate clicks (a triple click that selected only a word was seen). After each attempt, wait until the page
 * has received the attempt's presses (a passive counter in an isolated world, harness/cdp/page-input.ts) and
 * read the click count (`detail`) of the last one. The answer drives InputDriver.click's retries.
 */
import type { PageInput } from '../cdp/page-input.ts';
import { sleep } from './round-trip.ts';

/** Longest wait for an attempt's presses to reach the page (clicks into an iframe or browser UI never do). */
export const PRESSES_TIMEOUT_MS = 1000;
const POLL_MS = 5;

/** What InputDriver.click calls after each attempt: true (the page counted it), false (it did not), null (unknown). */
export type ClickLanded = () => Promise<boolean | null>;

/** The check for a `count`-click on `page`, from the presses the page received so far; null when the page cannot tell. */
export async function pageClickCheck(page: PageInput, count: number, signal?: AbortSignal): Promise<{ landed: ClickLanded; lastDetail(): number | null } | null> {
  const start = await page.presses();
  if (!start) return null;
  let seen = start.count;
  let detail: number | null = null;
  return {
    lastDetail: () => detail,
    async landed() {
      const end = performance.now() + PRESSES_TIMEOUT_MS;
      for (;;) {
        const p = await page.presses();
        if (!p) return null;
        if (p.count >= seen + count) {
          seen = p.count;
          detail = p.detail;
          return p.detail >= count;
        }
        if (performance.now() > end) {
          seen = p.count;
          return null;
        }
        await sleep(POLL_MS, signal);
      }
    },
  };
}
