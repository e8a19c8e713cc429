import { createServer as createTcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Dialog, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError, type ErrorCode } from '../errors.ts';
import { SuccessChecker, type Sentinel } from './success.ts';
import { closedPort, launchChromium, servePages, startCdpProxy, type PageServer, type TestChromium } from './test-helpers.ts';

const PLAIN = '<!doctype html><title>plain</title><main id="main"><p>nothing to see</p></main>';
const WITH_CODE = '<!doctype html><title>code</title><main><p>done: <b>code#1</b></p></main>';

/** Expect `p` to reject with a VncuaError of `code`; returns it. */
async function expectCode(p: Promise<unknown>, code: ErrorCode) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isVncuaError(err), `expected a VncuaError ${code}, got ${String(err)}`).toBe(true);
  expect((err as { code: string }).code).toBe(code);
  return err as { code: string; details?: Record<string, unknown> };
}

/** Expect a synchronous call to throw a VncuaError of `code`. */
function expectCodeSync(fn: () => unknown, code: ErrorCode) {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isVncuaError(err, code), `expected ${code}, got ${String(err)}`).toBe(true);
}

/** The test's own control connection (noDefaults, and it keeps dialogs open like a user's browser). */
async function driver(cdpUrl: string): Promise<Browser> {
  const b = await chromium.connectOverCDP(cdpUrl, { noDefaults: true });
  b.contexts()[0]!.on('dialog', () => {});
  return b;
}

function firstPage(b: Browser): Page {
  return b.contexts()[0]!.pages()[0]!;
}

let server: PageServer;
beforeAll(async () => {
  server = await servePages({
    '/plain': PLAIN,
    '/code': WITH_CODE,
    '/opener': '<!doctype html><title>opener</title><p>opener page</p>',
    '/nav-loop': '<!doctype html><title>loop</title><p><b>code#1</b></p><script>setTimeout(() => { location.href = "/nav-loop?" + Math.random(); }, 5)</script>',
    '/nav-soon': '<!doctype html><title>soon</title><p>leaving</p><script>setTimeout(() => { location.href = "/code"; }, 150)</script>',
    '/alert':
      '<!doctype html><title>alert</title><p id="p">before</p><script>window.showAlert = () => setTimeout(() => { alert("hello"); document.getElementById("p").innerHTML = "<b>code" + "#1</b>"; }, 0);</script>',
    '/hidden': '<!doctype html><title>hidden</title><div id="ghost" style="visibility:hidden">x</div><div id="empty"></div><div id="shown">y</div>',
  });
});
afterAll(async () => {
  await server?.close();
});

describe('SuccessChecker sentinels (real Chromium)', () => {
  let chrome: TestChromium;
  let drv: Browser;
  let page: Page;
  const checkers: SuccessChecker[] = [];
  const make = (sentinel: Sentinel) => {
    const c = new SuccessChecker(chrome.cdpUrl, sentinel, { timeoutMs: 10_000 });
    checkers.push(c);
    return c;
  };

  beforeAll(async () => {
    chrome = await launchChromium({ url: `${server.origin}/plain` });
    drv = await driver(chrome.cdpUrl);
    page = firstPage(drv);
    await page.waitForLoadState('load');
  });
  afterEach(async () => {
    // Every live checker is one more CDP client the browser serves on each navigation: close them per test.
    for (const c of checkers.splice(0)) await c.close().catch(() => {});
  });
  afterAll(async () => {
    await drv?.close().catch(() => {});
    await chrome?.close();
  });

  it("default: false, then true once the page's HTML gains <b>code#1</b>", async () => {
    await page.goto(`${server.origin}/plain`);
    const c = make('default');
    expect(await c.check()).toBe(false);
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<b>code#1</b>'));
    expect(await c.check()).toBe(true);
    await page.evaluate(() => document.querySelector('b')!.remove());
    expect(await c.check()).toBe(false);
  });

  it('default: text "code#1" that is not a whole element content does not count', async () => {
    await page.goto(`${server.origin}/plain`);
    const c = make('default');
    await page.evaluate(() => document.querySelector('p')!.append(' code#1 '));
    expect(await c.check()).toBe(false);
  });

  it("default is uitask's exact rule '>code#1</': an element starting with code#1 but holding more does not count", async () => {
    await page.goto(`${server.origin}/plain`);
    const c = make('default');
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<b>code#1<i>0</i></b>'));
    expect(await c.check()).toBe(false);
    await page.evaluate(() => document.querySelector('main')!.insertAdjacentHTML('beforeend', '<span>code#1</span>'));
    expect(await c.check()).toBe(true);
  });

  it('inspect(): evidence of a text match is the match with its context, the rule, the pattern and the URL', async () => {
    await page.goto(`${server.origin}/code`);
    const a = await make('default').inspect();
    expect(a.ok).toBe(true);
    expect(a.evidence).toEqual({ rule: 'text', pattern: '>code#1</', snippet: expect.stringContaining('<b>code#1</b>'), url: `${server.origin}/code` });
    expect(a.evidence!.snippet.length).toBeLessThanOrEqual(9 + 80);
    const long = 'x'.repeat(500);
    await page.evaluate((t) => document.querySelector('p')!.insertAdjacentHTML('afterbegin', t), long);
    const b = await make({ sentinel: 'code#1' }).inspect();
    // 40 characters before the match; after it, the rest of the document (fewer than 40 characters).
    expect(b.evidence?.snippet).toBe(`${'x'.repeat(40 - 'done: <b>'.length)}done: <b>code#1</b></p></main></body></html>`);
    const no = await make({ sentinel: 'absent-text' }).inspect();
    expect(no).toEqual({ ok: false, evidence: null });
  });

  it("inspect(): a selector's evidence is the element's outerHTML (cut at 240 characters); an expression's is its value as JSON", async () => {
    await page.goto(`${server.origin}/hidden`);
    const s = await make({ selector: '#shown', visible: true }).inspect();
    expect(s).toEqual({ ok: true, evidence: { rule: 'selector', pattern: '#shown', snippet: '<div id="shown">y</div>', url: `${server.origin}/hidden` } });
    await page.evaluate(() => (document.getElementById('shown')!.textContent = 'z'.repeat(1000)));
    expect((await make({ selector: '#shown' }).inspect()).evidence?.snippet).toBe(`<div id="shown">${'z'.repeat(240 - 16)}`);
    const e = await make({ expression: 'document.title === "hidden"' }).inspect();
    expect(e).toEqual({ ok: true, evidence: { rule: 'expression', pattern: 'document.title === "hidden"', snippet: 'true', url: `${server.origin}/hidden` } });
    expect(await make({ selector: '#ghost', visible: true }).inspect()).toEqual({ ok: false, evidence: null });
  });

  it('{ sentinel }: true when the HTML contains the string, false otherwise', async () => {
    await page.goto(`${server.origin}/plain`);
    expect(await make({ sentinel: 'nothing to see' }).check()).toBe(true);
    expect(await make({ sentinel: 'id="main"' }).check()).toBe(true);
    expect(await make({ sentinel: 'not on this page' }).check()).toBe(false);
  });

  it('{ selector }: true when an element matches, false when none does', async () => {
    await page.goto(`${server.origin}/plain`);
    expect(await make({ selector: 'main#main > p' }).check()).toBe(true);
    expect(await make({ selector: '.absent' }).check()).toBe(false);
  });

  it('{ selector, visible: true }: hidden and empty elements do not count', async () => {
    await page.goto(`${server.origin}/hidden`);
    expect(await make({ selector: '#ghost' }).check()).toBe(true);
    expect(await make({ selector: '#ghost', visible: true }).check()).toBe(false);
    expect(await make({ selector: '#empty', visible: true }).check()).toBe(false);
    expect(await make({ selector: '#shown', visible: true }).check()).toBe(true);
  });

  it('{ expression }: true and false, including a Promise of a boolean', async () => {
    await page.goto(`${server.origin}/plain`);
    expect(await make({ expression: 'document.title === "plain"' }).check()).toBe(true);
    expect(await make({ expression: 'document.title === "other"' }).check()).toBe(false);
    expect(await make({ expression: 'document.title === "plain"; ' }).check()).toBe(true);
    expect(await make({ expression: 'new Promise((r) => setTimeout(() => r(true), 20))' }).check()).toBe(true);
    expect(await make({ expression: 'document.querySelectorAll("p").length === 1 // a comment' }).check()).toBe(true);
  });

  it('{ expression } returning a non-boolean: CDP_ERR_BAD_SENTINEL naming what it returned', async () => {
    await page.goto(`${server.origin}/plain`);
    const e1 = await expectCode(make({ expression: 'document.querySelectorAll("p").length' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(e1.details?.returned).toBe('number 1');
    const e2 = await expectCode(make({ expression: 'document.title' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(e2.details?.returned).toBe('string plain');
    const e3 = await expectCode(make({ expression: 'undefined' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(e3.details?.returned).toBe('undefined undefined');
    const e4 = await expectCode(make({ expression: 'Promise.resolve({ a: 1 })' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(e4.details?.returned).toBe('object {"a":1}');
  });

  it("a throwing { expression }: CDP_ERR_BAD_SENTINEL carrying the page's exception text", async () => {
    await page.goto(`${server.origin}/plain`);
    const e1 = await expectCode(make({ expression: '(() => { throw new Error("boom-7431") })()' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(String(e1.details?.exception)).toContain('boom-7431');
    const e2 = await expectCode(make({ expression: 'Promise.reject(new TypeError("late-5120"))' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(String(e2.details?.exception)).toContain('late-5120');
    const e3 = await expectCode(make({ expression: 'noSuchVariable42 === 1' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(String(e3.details?.exception)).toContain('noSuchVariable42');
    const e4 = await expectCode(make({ expression: '1 +* 2' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(String(e4.details?.exception)).toContain('SyntaxError');
  });

  it('an invalid selector: CDP_ERR_BAD_SENTINEL', async () => {
    await page.goto(`${server.origin}/plain`);
    const e = await expectCode(make({ selector: 'p[[' }).check(), 'CDP_ERR_BAD_SENTINEL');
    expect(String(e.details?.exception)).toContain('p[[');
  });

  it('malformed sentinels, URLs and options are refused at construction', () => {
    const url = chrome.cdpUrl;
    expectCodeSync(() => new SuccessChecker(url, { sentinel: '' }), 'CDP_ERR_BAD_SENTINEL');
    expectCodeSync(() => new SuccessChecker(url, { selector: '  ' }), 'CDP_ERR_BAD_SENTINEL');
    expectCodeSync(() => new SuccessChecker(url, { expression: ' ; ' }), 'CDP_ERR_BAD_SENTINEL');
    expectCodeSync(() => new SuccessChecker(url, { selector: 'a', expression: 'true' } as unknown as Sentinel), 'CDP_ERR_BAD_SENTINEL');
    expectCodeSync(() => new SuccessChecker(url, 'code#1' as unknown as Sentinel), 'CDP_ERR_BAD_SENTINEL');
    expectCodeSync(() => new SuccessChecker('127.0.0.1:9222', 'default'), 'CDP_ERR_BAD_URL');
    expectCodeSync(() => new SuccessChecker('ftp://127.0.0.1:9222', 'default'), 'CDP_ERR_BAD_URL');
    expectCodeSync(() => new SuccessChecker(url, 'default', { timeoutMs: 0 }), 'CDP_ERR_BAD_ARGUMENT');
    expectCodeSync(() => new SuccessChecker(url, 'default', { connectTimeoutMs: -1 }), 'CDP_ERR_BAD_ARGUMENT');
  });

  it('check() honours an already-aborted signal, and throws CDP_ERR_CLOSED after close()', async () => {
    const c = make('default');
    await expectCode(c.check({ signal: AbortSignal.abort() }), 'CDP_ERR_ABORTED');
    await expectCode(c.check({ timeoutMs: 0 }), 'CDP_ERR_BAD_ARGUMENT');
    expect(typeof (await c.check())).toBe('boolean');
    await c.close();
    await expectCode(c.check(), 'CDP_ERR_CLOSED');
    // Closing the checker disconnects only: the browser and its page are still there.
    expect(await page.evaluate(() => document.title.length > 0)).toBe(true);
  });

  it('a JavaScript dialog is left open for the user and reads as false; after it closes the page is read again', async () => {
    await page.goto(`${server.origin}/alert`);
    const c = make('default');
    expect(await c.check()).toBe(false);
    const dialogP = new Promise<Dialog>((r) => page.once('dialog', r));
    await page.evaluate(() => (window as unknown as { showAlert(): void }).showAlert());
    const dialog = await dialogP;
    expect(await c.check({ timeoutMs: 3000 })).toBe(false);
    // The checker did not dismiss it: the driver can still accept it.
    await dialog.accept();
    let answer: boolean | null = false;
    for (let i = 0; i < 50 && answer !== true; i++) {
      answer = await c.check();
      if (answer !== true) await new Promise((r) => setTimeout(r, 20));
    }
    expect(answer).toBe(true);
  });

  it('an expression that never settles: null with reason timeout; an abort mid-call: CDP_ERR_ABORTED', async () => {
    await page.goto(`${server.origin}/plain`);
    const c = make({ expression: 'new Promise(() => {})' });
    expect(await c.check({ timeoutMs: 300 })).toBeNull();
    expect(c.lastFailure?.reason).toBe('timeout');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expectCode(c.check({ signal: ac.signal }), 'CDP_ERR_ABORTED');
    // The connection is still good for a sane sentinel afterwards.
    const ok = make({ expression: 'document.title === "plain"' });
    expect(await ok.check()).toBe(true);
  });

  it('a page that navigates away during the check: retried on the new document, never null', async () => {
    await page.goto(`${server.origin}/nav-soon`);
    // The expression takes 300 ms; the page leaves for /code after 150 ms, destroying the context mid-call.
    const c = make({ expression: 'new Promise((r) => setTimeout(() => r(document.title === "code"), 300))' });
    expect(await c.check()).toBe(true);
  });

  it('a page navigating in a tight loop: every check answers true or false, never null or a throw', async () => {
    await page.goto(`${server.origin}/nav-loop`);
    const c = make('default');
    const answers: Array<boolean | null> = [];
    for (let i = 0; i < 40; i++) answers.push(await c.check());
    expect(answers.every((a) => a === true || a === false)).toBe(true);
    expect(answers.some((a) => a === true)).toBe(true);
    // Stop the loop: the next hop lands on a page that stays.
    server.set('/nav-loop', PLAIN);
    await page.waitForFunction(() => document.title === 'plain');
  });
});

describe('SuccessChecker: the active page among several', () => {
  let chrome: TestChromium;
  let drv: Browser;
  let checker: SuccessChecker | undefined;

  beforeAll(async () => {
    chrome = await launchChromium({ url: `${server.origin}/opener` });
    drv = await driver(chrome.cdpUrl);
    await firstPage(drv).waitForLoadState('load');
  });
  afterAll(async () => {
    await checker?.close().catch(() => {});
    await drv?.close().catch(() => {});
    await chrome?.close();
  });

  it('follows the page the user sees: popups, tab switches, background tabs, chrome:// tabs', async () => {
    const ctx = drv.contexts()[0]!;
    const opener = firstPage(drv);
    checker = new SuccessChecker(chrome.cdpUrl, 'default', { timeoutMs: 10_000 });
    expect(await checker.check()).toBe(false);

    // window.open: the new tab is in front, and it shows the code.
    const [popup] = await Promise.all([ctx.waitForEvent('page'), opener.evaluate((u) => void window.open(u), `${server.origin}/code`)]);
    await popup.waitForLoadState('load');
    expect(await popup.evaluate(() => document.visibilityState)).toBe('visible');
    expect(await opener.evaluate(() => document.visibilityState)).toBe('hidden');
    expect(await checker.check()).toBe(true);

    // The user switches back to the first tab (no page opens or closes).
    await opener.bringToFront();
    expect(await opener.evaluate(() => document.visibilityState)).toBe('visible');
    expect(await checker.check()).toBe(false);

    // A newer tab opened in the background does not take over, even though it shows the code.
    const session = await ctx.newCDPSession(opener);
    const bgSeen = ctx.waitForEvent('page');
    await session.send('Target.createTarget', { url: `${server.origin}/code`, background: true });
    const bg = await bgSeen;
    await bg.waitForLoadState('load');
    expect(await bg.evaluate(() => document.visibilityState)).toBe('hidden');
    expect(await checker.check()).toBe(false);

    // A chrome:// tab in front is skipped. Every web page is then hidden, so the newest one (the
    // background tab, with the code) wins; had chrome://version been checked, the answer would be false.
    const chromeTab = ctx.waitForEvent('page');
    await session.send('Target.createTarget', { url: 'chrome://version/' });
    const versionPage = await chromeTab;
    await versionPage.waitForLoadState('load').catch(() => {});
    expect(versionPage.url()).toMatch(/^chrome:/);
    expect(await opener.evaluate(() => document.visibilityState)).toBe('hidden');
    expect(await checker.check()).toBe(true);
    await versionPage.close();

    // The popup closes: the opener is what remains in front.
    await popup.close();
    await opener.bringToFront();
    expect(await checker.check()).toBe(false);
    await bg.bringToFront();
    expect(await checker.check()).toBe(true);
    await session.detach();
  });
});

describe('SuccessChecker: unreachable CDP and reconnection', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const f of cleanups.reverse()) await f().catch(() => {});
  });

  it('returns null (never throws) when nothing listens on the CDP port', async () => {
    const port = await closedPort();
    const c = new SuccessChecker(`http://127.0.0.1:${port}`, 'default', { connectTimeoutMs: 2000 });
    cleanups.push(() => c.close());
    expect(await c.check({ timeoutMs: 3000 })).toBeNull();
    expect(c.lastFailure?.reason).toBe('unreachable');
    expect(await c.check({ timeoutMs: 3000 })).toBeNull();
  });

  it('returns null within its timeout when the endpoint accepts but never answers; aborts with CDP_ERR_ABORTED', async () => {
    const sockets = new Set<Socket>();
    const hole = createTcpServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => hole.listen(0, '127.0.0.1', r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          for (const s of sockets) s.destroy();
          hole.close(() => r());
        }),
    );
    const url = `http://127.0.0.1:${(hole.address() as AddressInfo).port}`;
    const c = new SuccessChecker(url, 'default', { connectTimeoutMs: 60_000 });
    cleanups.push(() => c.close());
    // The connection attempt alone may take 60 s: a null here can only come from the check's own timeout.
    expect(await c.check({ timeoutMs: 300 })).toBeNull();
    expect(c.lastFailure?.reason).toBe('timeout');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    await expectCode(c.check({ signal: ac.signal, timeoutMs: 60_000 }), 'CDP_ERR_ABORTED');
  });

  it('returns null once Chromium is gone', async () => {
    const chrome = await launchChromium({ url: `${server.origin}/code` });
    cleanups.push(() => chrome.close());
    const c = new SuccessChecker(chrome.cdpUrl, 'default', { timeoutMs: 10_000, connectTimeoutMs: 3000 });
    cleanups.push(() => c.close());
    let first: boolean | null = false;
    for (let i = 0; i < 50 && first !== true; i++) {
      first = await c.check();
      if (first !== true) await new Promise((r) => setTimeout(r, 20));
    }
    expect(first).toBe(true);
    await chrome.close();
    expect(await c.check({ timeoutMs: 5000 })).toBeNull();
    expect(c.lastFailure?.reason).toBe('unreachable');
  });

  it('reconnects through a CDP proxy after the connection is cut, and answers for the current page', async () => {
    const chrome = await launchChromium({ url: `${server.origin}/plain` });
    cleanups.push(() => chrome.close());
    const proxy = await startCdpProxy(chrome);
    cleanups.push(() => proxy.close());
    const drv = await driver(chrome.cdpUrl);
    cleanups.push(() => drv.close());
    const page = firstPage(drv);
    await page.waitForLoadState('load');

    const c = new SuccessChecker(proxy.cdpUrl, 'default', { timeoutMs: 10_000 });
    cleanups.push(() => c.close());
    expect(proxy.connections).toBe(0); // lazy: nothing until the first check
    // Concurrent first checks share the one connection being made; later checks reuse it.
    expect(await Promise.all([c.check(), c.check(), c.check()])).toEqual([false, false, false]);
    for (let i = 0; i < 5; i++) expect(await c.check()).toBe(false);
    expect(proxy.connections).toBe(1);

    // Cut, then let the client notice (disconnected event) before the next check.
    proxy.cut();
    await new Promise((r) => setTimeout(r, 200));
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<b>code#1</b>'));
    expect(await c.check()).toBe(true);
    expect(proxy.connections).toBe(2);

    // Cut and check at once: the call in flight fails, the check reconnects and retries by itself.
    proxy.cut();
    const answer = c.check();
    expect(await answer).toBe(true);
    expect(proxy.connections).toBe(3);
    expect(c.lastFailure).toBeNull();
  });
});
