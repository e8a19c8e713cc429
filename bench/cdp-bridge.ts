/**
 * What the token-guarded CDP bridge costs: the same page (the ~100 KB shop listing of
 * bench/cdp-check.ts) in the desktop's Chromium, reached through docker/cdp-bridge.py
 * (Chromium on --remote-debugging-pipe, the desktop's cdpUrl), and in the peer: a second
 * Chromium with the same flags on the same X display, reached on its own --remote-debugging-port
 * (no token, open to every local user: how desktops were reached before). In blocks of 20
 * calls, alternating, medians:
 *
 * - SuccessChecker.check() (default sentinel; a selector): the agent's per-action check,
 * - a raw CDPSession Runtime.evaluate('1'): one round trip,
 * - Page.captureScreenshot (PNG, ~100 KB-1 MB of base64 through the bridge),
 * - GET json/version, and connectOverCDP + the first check (a fresh connection).
 *
 * Run: npx tsx bench/cdp-bridge.ts [calls=200]
 */
import { chromium, type Browser, type CDPSession } from 'playwright-core';
import { cdpHttpUrl } from '../harness/cdp/endpoint.ts';
import { SuccessChecker } from '../harness/cdp/success.ts';
import { DESKTOP_CHROMIUM_FLAGS, launchChromium, servePages } from '../harness/cdp/test-helpers.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { realisticPage } from './lib/shop-page.ts';
import { median, ms, quantile, table } from './stats.ts';

const CALLS = Math.max(40, Number(process.argv[2] ?? 200));
const BLOCK = 20;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const server = await servePages({ '/shop': realisticPage(100_000) });
const url = `${server.origin}/shop`;
const desktop = await launchDesktop({ url, size: '1280x800', timeoutMs: 60_000 });
// The peer: the desktop's Chromium flags, on the same X display, on its own CDP port.
const peer = await launchChromium({ flags: [...DESKTOP_CHROMIUM_FLAGS, `--app=${url}`], env: { DISPLAY: desktop.display, XAUTHORITY: desktop.xauthority }, timeoutMs: 30_000 });
const cleanup: Array<() => Promise<unknown>> = [];
try {
  const direct = peer.cdpUrl;
  const contenders: Array<[string, string]> = [
    ['bridge', desktop.cdpUrl],
    ['direct', direct],
  ];

  /** Per contender: a checker, a Playwright connection and a raw session on the shop page. */
  const setups = new Map<string, { checker: SuccessChecker; selector: SuccessChecker; browser: Browser; session: CDPSession }>();
  for (const [name, cdpUrl] of contenders) {
    const probe = new SuccessChecker(cdpUrl, { selector: 'footer' });
    for (let i = 0; i < 300 && (await probe.check()) !== true; i++) await sleep(50);
    await probe.close();
    const browser = await chromium.connectOverCDP(cdpUrl, { noDefaults: true });
    const page = browser
      .contexts()
      .flatMap((c) => c.pages())
      .find((p) => p.url() === url)!;
    const session = await browser.contexts()[0]!.newCDPSession(page);
    const s = { checker: new SuccessChecker(cdpUrl, 'default'), selector: new SuccessChecker(cdpUrl, { selector: '#item-100 .price' }), browser, session };
    await s.checker.check();
    await s.selector.check();
    setups.set(name, s);
    cleanup.push(async () => {
      await s.checker.close();
      await s.selector.close();
      await browser.close();
    });
  }

  const series = new Map<string, number[]>();
  const time = async (key: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    const list = series.get(key) ?? [];
    list.push(performance.now() - t);
    series.set(key, list);
  };
  const ops: Array<[string, (name: string, cdpUrl: string) => Promise<unknown>, number]> = [
    ['check() default sentinel', (n) => setups.get(n)!.checker.check(), CALLS],
    ["check() selector '#item-100 .price'", (n) => setups.get(n)!.selector.check(), CALLS],
    ["raw Runtime.evaluate('1')", (n) => setups.get(n)!.session.send('Runtime.evaluate', { expression: '1', returnByValue: true }), CALLS],
    ['Page.captureScreenshot (PNG)', (n) => setups.get(n)!.session.send('Page.captureScreenshot', { format: 'png' }), 40],
    ['GET json/version', async (_n, u) => (await fetch(cdpHttpUrl(u, 'json/version'))).json(), 100],
    [
      'connectOverCDP + first check + close',
      async (_n, u) => {
        const c = new SuccessChecker(u, 'default');
        await c.check();
        await c.close();
      },
      20,
    ],
  ];
  for (const [op, fn, calls] of ops) {
    const block = Math.min(BLOCK, calls);
    for (let done = 0; done < calls; done += block) {
      for (const [name, cdpUrl] of (done / block) % 2 === 0 ? contenders : [...contenders].reverse()) {
        for (let i = 0; i < block; i++) await time(`${op}|${name}`, () => fn(name, cdpUrl));
      }
    }
  }

  const rows = ops.map(([op, , calls]) => {
    const b = series.get(`${op}|bridge`)!;
    const d = series.get(`${op}|direct`)!;
    return [op, calls, ms(median(b)), ms(quantile(b, 0.9)), ms(median(d)), ms(quantile(d, 0.9)), `${(median(b) / median(d)).toFixed(2)}x`];
  });
  console.log(
    `\nCDP through the desktop's token-guarded bridge (Chromium on --remote-debugging-pipe) against Chromium's own port, same page (${Math.round(realisticPage(100_000).length / 1024)} KiB shop listing), same X display, ${new Date().toISOString()}; ms\n`,
  );
  console.log(table(['what', 'calls', 'bridge median', 'bridge p90', 'direct median', 'direct p90', 'bridge / direct'], rows));
} finally {
  for (const f of cleanup.reverse()) await f().catch(() => {});
  await peer.close();
  await desktop.close();
  await server.close();
}
