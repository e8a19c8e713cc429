/**
 * What the navigation guard (harness/guard/browser-guard.ts: Fetch.enable on the browser target, every request
 * paused, judged and continued) costs a page: a page with 100 subresources (images, each a distinct URL answered
 * `no-store`, so every load fetches all 101 requests) loaded on a real desktop's Chromium (through its CDP bridge,
 * as runs use it) with and without the guard, alternately, many times. The guard's policy is a realistic one
 * (8 allowed patterns, 3 blocked, the page's host allowed by the last allowed pattern: the matcher's worst case).
 * The same again in a Chromium with its own DevTools port (no bridge), to show what the bridge's hop costs.
 *
 * Figures: the page's load time (navigationStart to loadEventEnd), its median with and without, the difference per
 * request (difference / 101) and the ratio; and each request's own duration (Resource Timing: startTime to
 * responseEnd), median over every request of every load, with and without. The target: <= 1 ms per request.
 *
 * Run: npx tsx bench/guard-overhead.ts [loads each=40, a multiple of 5]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchDesktop } from '../harness/desktop/index.ts';
import { openPage } from '../harness/cdp/page-ready.ts';
import { startDomainGuard } from '../harness/guard/browser-guard.ts';
import { compileDomainPolicy, type DomainPolicy } from '../harness/guard/patterns.ts';
import { PIXEL_PNG } from '../harness/guard/test-helpers.ts';
import { launchChromium } from '../harness/cdp/test-helpers.ts';
import { loadavg } from 'node:os';
import { median, ms, quantile, table } from './stats.ts';

const LOADS = Number(process.argv[2] ?? 40);
const SUBRESOURCES = 100;
const TARGET_MS = 1;
/** Loads per block (the guard stays attached, or off, for a block). */
const BLOCK = 5;
/** Headless, as the direct comparison needs no display. */
const HEADLESS_FLAGS_FOR_BENCH = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-quic',
  '--disable-dev-shm-usage',
];
const LOAD_AT_START = loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/page.html') {
    const imgs = Array.from({ length: SUBRESOURCES }, (_, i) => `<img src="/img/${i}.png?v=${encodeURIComponent(req.url ?? '')}" width="8" height="8">`).join('');
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' }).end(`<!doctype html><title>100</title>${imgs}`);
    return;
  }
  res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PIXEL_PNG);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
const origin = `http://127.0.0.1:${port}`;

const policy = compileDomainPolicy({
  allowedDomains: ['example.com', '*.example.org', 'https://*.vendor.net', 'cdn.example.net:8443', '[::1]', 'docs.example.io', 'file:', `127.0.0.1:${port}`],
  blockedDomains: ['ads.example.org', '*.tracker.com', 'evil.example'],
})!;
/** Blocked patterns only: the guard pauses only URLs that could match them (patterns.ts interceptPatterns), none of the page's. */
const blockedOnly = compileDomainPolicy({ blockedDomains: ['ads.example.org', '*.tracker.com', 'evil.example', `127.0.0.2:${port}`] })!;

interface Samples {
  load: number[];
  requests: number[];
}

/** LOADS loads each way, alternating, in the browser at `cdpUrl`; the guard's requests judged too. */
async function measure(cdpUrl: string, policy: DomainPolicy, signal: AbortSignal): Promise<{ off: Samples; on: Samples; judged: number }> {
  const page = await openPage(cdpUrl, 'about:blank', true, signal);
  try {
    await page.send('Page.enable', {}, signal);
    /** Load the page once; its load time and every image's duration. */
    const load = async (n: number): Promise<Samples> => {
      const loaded = new Promise<void>((resolve) => {
        const off = page.on('Page.loadEventFired', () => {
          off();
          resolve();
        });
      });
      await page.send('Page.navigate', { url: `${origin}/page.html?n=${n}` }, signal);
      await loaded;
      const r = await page.send<{ result: { value: { load: number; requests: number[] } } }>(
        'Runtime.evaluate',
        {
          expression: `(() => { const nav = performance.getEntriesByType('navigation')[0]; return { load: nav.loadEventEnd, requests: performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'img').map((e) => e.responseEnd - e.startTime) }; })()`,
          returnByValue: true,
        },
        signal,
      );
      const v = r.result.value;
      if (v.requests.length !== SUBRESOURCES) throw new Error(`load ${n}: ${v.requests.length} images loaded, expected ${SUBRESOURCES}`);
      return { load: [v.load], requests: v.requests };
    };
    const out = { off: { load: [] as number[], requests: [] as number[] }, on: { load: [] as number[], requests: [] as number[] }, judged: 0 };
    // Steady state, as in a run (the guard stays attached for the whole run): blocks of BLOCK loads, off and on in
    // turn so drift hits both alike; after each switch one load is not counted (attaching resets the browser's loaders).
    for (let i = 0; i < 3; i++) await load(-1 - i);
    let n = 0;
    for (let b = 0; b < (LOADS / BLOCK) * 2; b++) {
      const guarded = b % 2 === 1;
      const guard = guarded ? await startDomainGuard({ cdpUrl, policy, signal }) : null;
      try {
        await load(n++);
        const judgedBefore = guard?.judged ?? 0;
        for (let i = 0; i < BLOCK; i++) {
          const r = await load(n++);
          const s = guarded ? out.on : out.off;
          s.load.push(...r.load);
          s.requests.push(...r.requests);
        }
        out.judged += (guard?.judged ?? 0) - judgedBefore;
      } finally {
        await guard?.close();
      }
    }
    return out;
  } finally {
    page.close();
  }
}

const REQUESTS_PER_LOAD = SUBRESOURCES + 1;
const rows: Array<Array<string | number>> = [];
const lines: string[] = [];
/** The table rows and the summary line of one browser. */
function report(name: string, r: { off: Samples; on: Samples; judged: number }, paused = true): number {
  if (paused && r.judged < LOADS * REQUESTS_PER_LOAD)
    throw new Error(`${name}: the guard judged ${r.judged} requests over ${LOADS} loads, expected at least ${LOADS * REQUESTS_PER_LOAD}`);
  for (const [guard, s] of [
    ['off', r.off],
    ['on', r.on],
  ] as const) {
    rows.push([name, guard, ms(median(s.load)), ms(quantile(s.load, 0.9)), ms(median(s.requests)), ms(quantile(s.requests, 0.9))]);
  }
  const offLoad = median(r.off.load);
  const onLoad = median(r.on.load);
  const perRequest = (onLoad - offLoad) / REQUESTS_PER_LOAD;
  const offReq = median(r.off.requests);
  const onReq = median(r.on.requests);
  lines.push(
    `- ${name}: page load ${ms(onLoad)} ms with the guard against ${ms(offLoad)} ms without (ratio ${(onLoad / offLoad).toFixed(2)}): **${ms(perRequest)} ms per request** ((on - off) / ${REQUESTS_PER_LOAD}; target <= ${TARGET_MS} ms: ${perRequest <= TARGET_MS ? 'met' : 'missed'}); one image request ${ms(onReq)} ms against ${ms(offReq)} ms (+${ms(onReq - offReq)} ms, queueing included: 6 connections per host). The guard paused and judged ${r.judged} requests.`,
  );
  return perRequest;
}

const signal = AbortSignal.timeout(30 * 60_000);
try {
  // The desktop as runs use it: Chromium on a pipe behind its token-guarded CDP bridge (docker/cdp-bridge.py).
  const desktop = await launchDesktop({ url: 'about:blank', timeoutMs: 45_000 });
  try {
    report('desktop (CDP bridge), allow list: every request paused', await measure(desktop.cdpUrl, policy, signal));
    report("desktop (CDP bridge), blocked list only: the page's requests not paused", await measure(desktop.cdpUrl, blockedOnly, signal), false);
  } finally {
    await desktop.close();
  }
  // The same Chromium flags with its own DevTools port (no bridge): what the bridge's hop costs.
  const direct = await launchChromium({ flags: [...HEADLESS_FLAGS_FOR_BENCH, 'about:blank'] });
  try {
    report('Chromium with its own port, allow list', await measure(direct.cdpUrl, policy, signal));
  } finally {
    await direct.close();
  }
  console.log(
    `${LOADS} loads each way (in blocks of ${BLOCK}, off and on in turn, the guard attached for a whole block as in a run, the first load after each switch not counted) of a page with ${SUBRESOURCES} images (${REQUESTS_PER_LOAD} requests per load, none cached; allow list: 8 allowed and 3 blocked patterns; blocked list only: 4 patterns), load average at the start ${LOAD_AT_START}.\n\n` +
      table(['browser', 'guard', 'page load median (ms)', 'p90', 'one image request median (ms)', 'p90'], rows) +
      `\n\n${lines.join('\n')}`,
  );
} finally {
  server.close();
}
