/**
 * Success-check benchmark: SuccessChecker.check() on a realistic ~100 KB page (a shop listing:
 * header, nav, 300+ product cards, footer, inline style and script) in headless Chromium, for the
 * default sentinel, a selector and an expression (≥ 200 calls each, after warm-up), against the
 * uitask-style peer in the same run: a fresh `connectOverCDP` + `page.content()` + close per call.
 * Also times the same probe through Playwright's `page.evaluate` and a bare `Runtime.evaluate`,
 * which is how the checker's engine (a raw CDP session) was chosen.
 *
 * Run: npx tsx bench/cdp-check.ts
 */
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import { SuccessChecker, type Sentinel } from '../harness/cdp/success.ts';
import { compileSentinel } from '../harness/cdp/sentinel.ts';
import { launchChromium, servePages } from '../harness/cdp/test-helpers.ts';
import { realisticPage } from './lib/shop-page.ts';
import { median, ms, quantile, sample, table } from './stats.ts';

const CALLS = 200;
const PEER_CALLS = 20;

const html = realisticPage(100_000);
const cardCount = html.split('class="card item"').length - 1;
const mid = Math.floor(cardCount / 2);
const server = await servePages({ '/shop': html });
const chrome = await launchChromium({ url: `${server.origin}/shop` });
const rows: Array<Array<string | number>> = [];
const cleanup: Array<() => Promise<unknown>> = [];
try {
  const sentinels: Array<[string, Sentinel]> = [
    ["default ('>code#1<' in outerHTML)", 'default'],
    [`selector '#item-${mid} .price'`, { selector: `#item-${mid} .price` }],
    [`expression 'querySelectorAll(".item").length === ${cardCount}'`, { expression: `document.querySelectorAll(".item").length === ${cardCount}` }],
  ];
  // Wait until the page is there.
  const probe = new SuccessChecker(chrome.cdpUrl, { selector: 'footer' });
  for (let i = 0; i < 100 && (await probe.check()) !== true; i++) await new Promise((r) => setTimeout(r, 20));
  await probe.close();

  let oursDefault = NaN;
  for (const [name, sentinel] of sentinels) {
    const c = new SuccessChecker(chrome.cdpUrl, sentinel);
    cleanup.push(() => c.close());
    const t0 = performance.now();
    const answer = await c.check();
    const first = performance.now() - t0;
    const times = await sample(CALLS, () => c.check(), 10);
    if (Number.isNaN(oursDefault)) oursDefault = median(times);
    rows.push([`SuccessChecker.check(): ${name} → ${String(answer)}`, CALLS, ms(median(times)), ms(quantile(times, 0.9)), `first call (connects) ${ms(first)}`]);
    await c.close();
  }

  // Engine comparison on one Playwright connection: the same default probe three ways.
  const browser = await chromium.connectOverCDP(chrome.cdpUrl, { noDefaults: true });
  cleanup.push(() => browser.close());
  const page = browser.contexts()[0]!.pages()[0]!;
  const defaultProbe = compileSentinel('default');
  const viaEvaluate = await sample(CALLS, () => page.evaluate(defaultProbe.expression), 10);
  rows.push(['engine: Playwright page.evaluate(probe)', CALLS, ms(median(viaEvaluate)), ms(quantile(viaEvaluate, 0.9)), '']);
  const session = await browser.contexts()[0]!.newCDPSession(page);
  const viaSession = await sample(CALLS, () => session.send('Runtime.evaluate', { expression: defaultProbe.expression, returnByValue: true }), 10);
  rows.push(['engine: raw CDPSession Runtime.evaluate(probe) (kept)', CALLS, ms(median(viaSession)), ms(quantile(viaSession, 0.9)), '']);
  const content = await sample(50, async () => (await page.content()).includes('>code#1<'), 5);
  rows.push(['page.content() on a persistent connection', 50, ms(median(content)), ms(quantile(content, 0.9)), '']);
  await browser.close();

  // The uitask-style peer: a fresh CDP connection per check.
  const peer = await sample(
    PEER_CALLS,
    async () => {
      const b = await chromium.connectOverCDP(chrome.cdpUrl);
      try {
        const pages = b.contexts().flatMap((ctx) => ctx.pages());
        const p = pages[pages.length - 1]!;
        return (await p.content()).includes('>code#1<');
      } finally {
        await b.close();
      }
    },
    2,
  );
  rows.push([
    'uitask-style peer: connectOverCDP + page.content() + close',
    PEER_CALLS,
    ms(median(peer)),
    ms(quantile(peer, 0.9)),
    `${(median(peer) / oursDefault).toFixed(0)}× the default check`,
  ]);

  console.log(`\nSuccess check on a ${(html.length / 1024).toFixed(0)} KiB page (${cardCount} product cards), headless Chromium, ${new Date().toISOString()}\n`);
  console.log(table(['what', 'calls', 'median ms', 'p90 ms', 'note'], rows));
  console.log(`\nratio (peer median / SuccessChecker default median): ${(median(peer) / oursDefault).toFixed(1)}`);
} finally {
  for (const f of cleanup.reverse()) await f().catch(() => {});
  await chrome.close();
  await server.close();
}
