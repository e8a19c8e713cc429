/**
 * The guard on a real desktop's Chromium: a page tries every kind of request (image, iframe, fetch, XHR, a redirect
 * chain, a dedicated worker, a service worker, an out-of-process iframe, popups, top-level navigations) to allowed and blocked sites, each a
 * real HTTP server on 127.0.0.1 that logs what reaches it. Blocked requests must never reach their server.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../agent/test-helpers/live.ts';
import { launchDesktop, type Desktop } from '../desktop/index.ts';
import { Agent } from '../agent/agent.ts';
import { tempOutputDir } from '../test-helpers/files.ts';
import { cdpHttpUrl } from '../cdp/endpoint.ts';
import { startCdpProxy } from '../cdp/test-helpers.ts';
import { isVncuaError } from '../errors.ts';
import { startDomainGuard, type BlockedRequest, type DomainGuard } from './browser-guard.ts';
import { compileDomainPolicy } from './patterns.ts';
import { serveHtml, serveRedirect, startSite, type Site } from './test-helpers.ts';

/** The page of `home` that tries every kind of request; `ok` is allowed, `bad` blocked, `off` not in the allow list. */
function requestsPage(home: Site, ok: Site, bad: Site, off: Site): string {
  return `<!doctype html><title>requests</title>
<img src="${ok.origin}/ok.png"><img src="${bad.origin}/bad.png">
<iframe src="${ok.origin}/frame.html"></iframe><iframe src="${bad.origin}/frame.html"></iframe>
<iframe src="http://localhost:${new URL(ok.origin).port}/oopif.html"></iframe>
<script>
const R = (window.__results = {});
const f = async (k, u) => { try { await fetch(u); R[k] = 'ok'; } catch { R[k] = 'failed'; } };
const x = (k, u) => new Promise((r) => { const q = new XMLHttpRequest(); q.open('GET', u); q.onload = () => { R[k] = 'ok'; r(); }; q.onerror = () => { R[k] = 'failed'; r(); }; q.send(); });
(async () => {
  await Promise.all([f('fetchOk', '${ok.origin}/fetch'), f('fetchBad', '${bad.origin}/fetch'), f('fetchOff', '${off.origin}/fetch'),
    x('xhrOk', '${ok.origin}/xhr'), x('xhrBad', '${bad.origin}/xhr'), f('redirect', '${home.origin}/redir')]);
  const w = new Worker('/worker.js');
  R.worker = await new Promise((r) => { w.onmessage = (e) => r(e.data); });
  try { await navigator.serviceWorker.register('/sw.js'); R.sw = 'registered'; } catch (e) { R.sw = String(e); }
  R.done = true;
})();
</script>`;
}

describe('startDomainGuard on a real desktop', () => {
  let home: Site;
  let ok: Site;
  let bad: Site;
  let off: Site;
  let desktop: Desktop | undefined;
  let browser: Browser | undefined;
  let guard: DomainGuard | undefined;
  const blocked: BlockedRequest[] = [];

  beforeAll(async () => {
    [home, ok, bad, off] = await Promise.all([startSite(), startSite(), startSite(), startSite()]);
    serveHtml(home, '/test.html', requestsPage(home, ok, bad, off));
    serveRedirect(home, '/redir', `${ok.origin}/hop`);
    // Another site (localhost, not 127.0.0.1): Chromium puts this frame in a process of its own (an out-of-process iframe).
    serveHtml(ok, '/oopif.html', `<script>fetch('${ok.origin}/from-oopif').catch(() => {}); fetch('${bad.origin}/from-oopif').catch(() => {});</script>`);
    serveRedirect(ok, '/hop', `${bad.origin}/final`);
    serveHtml(
      home,
      '/worker.js',
      `Promise.allSettled([fetch('${ok.origin}/worker-ok'), fetch('${bad.origin}/worker-bad')]).then((r) => postMessage(r.map((x) => x.status).join()));`,
      'text/javascript',
    );
    serveHtml(
      home,
      '/sw.js',
      `self.addEventListener('install', (e) => e.waitUntil(Promise.allSettled([fetch('${ok.origin}/sw-ok'), fetch('${bad.origin}/sw-bad')])));`,
      'text/javascript',
    );
    desktop = await launchDesktop({ url: `${home.origin}/start.html`, timeoutMs: 45_000 });
  }, 60_000);

  afterAll(async () => {
    for (const step of [() => guard?.close(), () => browser?.close(), () => desktop?.close(), ...[home, ok, bad, off].map((s) => () => s?.close())]) {
      try {
        await step();
      } catch {
        // keep cleaning up
      }
    }
  });

  it('blocks every kind of request to blocked hosts before it leaves the browser, and lets allowed ones through', async () => {
    const policy = compileDomainPolicy({ allowedDomains: [home.pattern, ok.pattern, bad.pattern, `localhost:${new URL(ok.origin).port}`], blockedDomains: [bad.pattern] })!;
    guard = await startDomainGuard({ cdpUrl: desktop!.cdpUrl, policy, onBlocked: (b) => blocked.push(b), timeoutMs: 15_000 });
    browser = await chromium.connectOverCDP(desktop!.cdpUrl, { noDefaults: true });
    let page: Page | undefined;
    await until(
      () =>
        (page = browser!
          .contexts()
          .flatMap((c) => c.pages())
          .find((p) => p.url().startsWith(home.origin))) !== undefined,
      'the start page',
      30_000,
    );
    await page!.goto(`${home.origin}/test.html`);
    await until(() => page!.evaluate(() => (window as unknown as { __results?: { done?: boolean } }).__results?.done === true), 'the page to finish its requests', 30_000);
    // The localhost frame is out of process: a target of its own.
    const cdp = await browser.newBrowserCDPSession();
    const { targetInfos } = await cdp.send('Target.getTargets');
    expect(targetInfos.filter((t) => t.type === 'iframe').map((t) => t.url)).toContain(`http://localhost:${new URL(ok.origin).port}/oopif.html`);
    await cdp.detach();
    const results = await page!.evaluate(() => (window as unknown as { __results: Record<string, unknown> }).__results);
    expect(results).toMatchObject({
      fetchOk: 'ok',
      fetchBad: 'failed',
      fetchOff: 'failed',
      xhrOk: 'ok',
      xhrBad: 'failed',
      redirect: 'failed',
      worker: 'fulfilled,rejected',
      sw: 'registered',
    });

    // Popups (window.open with a user gesture, one per gesture: opening one consumes it) and top-level navigations.
    await page!.evaluate((u) => void window.open(u), `${off.origin}/popup.html`);
    await page!.evaluate((u) => void window.open(u), `${ok.origin}/popup.html`);
    await until(() => ok.log.includes('/popup.html'), 'the allowed popup', 30_000);
    await until(() => ok.log.includes('/sw-ok'), `the service worker's fetch (the allowed site got ${ok.log.join(' ')})`, 30_000);
    await page!.evaluate((u) => (location.href = u), `${ok.origin}/nav.html`);
    await until(() => ok.log.includes('/nav.html'), 'the allowed navigation', 30_000);
    await page!.waitForURL(`${ok.origin}/nav.html`);
    await page!.evaluate((u) => (location.href = u), `${bad.origin}/nav.html`).catch(() => {});
    const expectedBlocked = [
      `${bad.origin}/bad.png`,
      `${bad.origin}/frame.html`,
      `${bad.origin}/fetch`,
      `${off.origin}/fetch`,
      `${bad.origin}/xhr`,
      `${bad.origin}/final`,
      `${bad.origin}/worker-bad`,
      `${bad.origin}/sw-bad`,
      `${off.origin}/popup.html`,
      `${bad.origin}/nav.html`,
      `${bad.origin}/from-oopif`,
    ];
    await until(() => expectedBlocked.every((u) => blocked.some((b) => b.url === u)), `blocked requests to ${expectedBlocked.join(', ')}`, 30_000);

    // Nothing blocked ever reached its server; every allowed request did.
    expect(bad.log).toEqual([]);
    expect(off.log).toEqual([]);
    for (const path of ['/ok.png', '/frame.html', '/fetch', '/xhr', '/hop', '/worker-ok', '/sw-ok', '/popup.html', '/nav.html', '/oopif.html', '/from-oopif'])
      expect(ok.log).toContain(path);
    for (const path of ['/test.html', '/redir', '/worker.js', '/sw.js']) expect(home.log).toContain(path);

    // Each blocked request says which rule matched, and what it was.
    const byUrl = new Map(blocked.map((b) => [b.url, b]));
    expect(byUrl.get(`${bad.origin}/fetch`)).toMatchObject({ list: 'blockedDomains', pattern: bad.pattern, rule: `blockedDomains: ${bad.pattern}`, resourceType: 'XHR' }); // the browser target reports fetch() as XHR
    expect(byUrl.get(`${off.origin}/fetch`)).toMatchObject({ list: 'allowedDomains', pattern: null, rule: 'allowedDomains: no pattern matches' });
    expect(byUrl.get(`${bad.origin}/nav.html`)).toMatchObject({ resourceType: 'Document' });
    expect(byUrl.get(`${off.origin}/popup.html`)).toMatchObject({ resourceType: 'Document' });
    expect(byUrl.get(`${bad.origin}/bad.png`)).toMatchObject({ resourceType: 'Image' });
    expect(byUrl.get(`${bad.origin}/xhr`)).toMatchObject({ resourceType: 'XHR' });
    expect(guard.blocked).toBe(blocked.length);
    expect(guard.judged).toBeGreaterThan(guard.blocked);

    // After close() the browser is unguarded again.
    await until(() => page!.url().startsWith('chrome-error:'), 'the blocked navigation to show its error page', 15_000);
    await guard.close();
    await page!.goto(`${bad.origin}/after-close`);
    await until(() => bad.log.includes('/after-close'), 'a request after the guard closed', 15_000);
  }, 180_000);

  it('with only blocked patterns, requests that cannot be blocked are not even paused', async () => {
    const page = await browser!.contexts()[0]!.newPage();
    const only: BlockedRequest[] = [];
    const g = await startDomainGuard({
      cdpUrl: desktop!.cdpUrl,
      policy: compileDomainPolicy({ blockedDomains: [bad.pattern] })!,
      onBlocked: (b) => only.push(b),
      timeoutMs: 15_000,
    });
    try {
      await page.goto(`${home.origin}/start.html`);
      const outcome = await page.evaluate(
        ([a, b]) =>
          Promise.all([
            fetch(a!).then(
              () => 'ok',
              () => 'failed',
            ),
            fetch(b!).then(
              () => 'ok',
              () => 'failed',
            ),
          ]),
        [`${off.origin}/only-blocked-ok`, `${bad.origin}/only-blocked-bad`],
      );
      expect(outcome).toEqual(['ok', 'failed']);
      expect(off.log).toContain('/only-blocked-ok');
      expect(bad.log).not.toContain('/only-blocked-bad');
      expect(only.map((b) => b.url)).toEqual([`${bad.origin}/only-blocked-bad`]);
      // Paused: only the blocked one (the page, the allowed fetch and anything else went straight through), unless
      // another site's port starts with the blocked one's digits (the pattern is a substring: over-matching is allowed).
      expect(g.judged).toBe([`${home.origin}/`, `${off.origin}/`, `${bad.origin}/`].filter((o) => o.includes(`${bad.pattern}`)).length);
    } finally {
      await g.close();
      await page.close();
    }
  }, 60_000);

  it("a dropped guard connection ends the Agent's run with GUARD_ERR_LOST (its browser is no longer guarded)", async () => {
    const version = (await (await fetch(cdpHttpUrl(desktop!.cdpUrl, 'json/version'))).json()) as { webSocketDebuggerUrl: string };
    const proxy = await startCdpProxy({ cdpUrl: desktop!.cdpUrl.replace(/\/$/, ''), wsUrl: version.webSocketDebuggerUrl });
    const out = await tempOutputDir('vncua-guard-lost-');
    try {
      class CutAgent extends Agent {
        override async act(): Promise<boolean> {
          proxy.cut(); // the guard's connection (and the success checker's) drops, as a network failure would
          await this.wait(30);
          return true;
        }
      }
      const agent = new CutAgent({ outputDir: out.dir, vncUrl: desktop!.vncUrl, cdpUrl: proxy.cdpUrl, record: false, live: false, blockedDomains: [bad.pattern] });
      const r = await agent.run({ maxSteps: 2 });
      expect(r.status).toBe('error');
      expect(r.error?.code).toBe('GUARD_ERR_LOST');
      expect(r.domain_blocked).toBe(0);
    } finally {
      await proxy.close();
      await out.remove();
    }
  }, 60_000);

  it('a browser that does not answer is GUARD_ERR_START, never an unguarded run', async () => {
    const policy = compileDomainPolicy({ blockedDomains: ['evil.com'] })!;
    const e = await startDomainGuard({ cdpUrl: `${off.origin}/`, policy, timeoutMs: 5000 }).catch((x: unknown) => x);
    expect(isVncuaError(e, 'GUARD_ERR_START')).toBe(true);
  });
});
