/**
 * waitForPageReady() on real desktops (Xvnc + Chromium opened at the task URL, as the eval providers
 * and `vncua run` start them) and real servers on 127.0.0.1: a page that renders late, 404 and an empty
 * 500, a refused port, an unresolvable host, TLS to a plain-HTTP port, a server that takes the
 * connection and never answers, a page that mutates its DOM forever, an alert, and cancellation; and
 * a pooled desktop's path: ready at about:blank, then navigated with its history cleared, also from a
 * page prepared ahead (preparePage: the wait starts at Page.navigate, with the same rule and errors).
 */
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, type Desktop } from '../desktop/index.ts';
import { isVncuaError, type ErrorCode } from '../errors.ts';
import { openPage, preparePage, waitForPageReady, type PageReadyOptions, type PreparedPage } from './page-ready.ts';
import { PageSocket, pageTargets } from './page-socket.ts';
import { SuccessChecker } from './success.ts';
import { cdpEvaluate } from '../desktop/test-helpers.ts';
import { closedPort } from './test-helpers.ts';

const PAGES: Record<string, string> = {
  '/ok': '<!doctype html><p>ready at once</p>',
  // An app that renders 600 ms after load, in three DOM changes 50 ms apart.
  '/late': `<!doctype html><div id="root"></div><script>
    setTimeout(() => { const r = document.getElementById('root');
      r.innerHTML = '<p>one</p>'; setTimeout(() => { r.innerHTML += '<p>two</p>';
      setTimeout(() => { r.innerHTML += '<p id="last">three</p>'; }, 50); }, 50); }, 600);</script>`,
  // Changes its DOM every 30 ms for 300 ms after it is parsed, noting when it last did.
  '/burst': `<!doctype html><p id="n">0</p><script>window.lastChange = performance.now(); let n = 0;
    const t = setInterval(() => { document.getElementById('n').textContent = String(++n); window.lastChange = performance.now(); if (n === 10) clearInterval(t); }, 30);</script>`,
  '/busy': `<!doctype html><p id="n">0</p><script>let n = 0; setInterval(() => { document.getElementById('n').textContent = String(++n); }, 10);</script>`,
  '/alert': '<!doctype html><p>alert</p><script>alert("hello")</script>',
  '/empty-app': '<!doctype html><div id="root"></div><script src="/missing-bundle.js"></script>',
};

let server: Server;
let base: string;
let hang: net.Server;
const hung = new Set<net.Socket>();
let hangUrl: string;
let refusedUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/error-500') return void res.writeHead(500).end();
    const html = PAGES[path];
    if (html === undefined) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Takes the connection, never answers.
  hang = net.createServer((socket) => {
    hung.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
  hangUrl = `http://127.0.0.1:${(hang.address() as AddressInfo).port}/task`;
  refusedUrl = `http://127.0.0.1:${await closedPort()}/task`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  for (const socket of hung) socket.destroy();
  await new Promise<void>((r) => (hang ? hang.close(() => r()) : r()));
});

/** The error `p` rejects with (fails when it resolves, or rejects with something else than `code`). */
async function rejection(p: Promise<unknown>, code: ErrorCode): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  const e = await p.then(
    (v) => new Error(`resolved: ${JSON.stringify(v)}`),
    (x: unknown) => x,
  );
  expect(isVncuaError(e) ? e.code : String(e)).toBe(code);
  return e as { code: string; message: string; details?: Record<string, unknown> };
}

/** A desktop opened at `url`, given to `f`, always closed. */
async function onDesktop<T>(url: string, f: (d: Desktop) => Promise<T>): Promise<T> {
  const d = await launchDesktop({ url, size: '800x600', timeoutMs: 45_000 });
  try {
    return await f(d);
  } finally {
    await d.close();
  }
}

const wait = (d: Desktop, url: string, o: Partial<PageReadyOptions> = {}) => waitForPageReady(d.cdpUrl, { url, ...o });

describe('waitForPageReady on a desktop opened at the task URL', () => {
  it('waits for a page that renders after load, and its DOM to settle', async () => {
    const url = `${base}/late`;
    await onDesktop(url, async (d) => {
      const ready = await wait(d, url);
      expect([ready.href, ready.status, ready.dialog]).toEqual([url, 200, false]);
      // Everything the app renders is there when the wait ends.
      const checker = new SuccessChecker(d.cdpUrl, { selector: '#last' });
      try {
        expect(await checker.check({ timeoutMs: 10_000 })).toBe(true);
      } finally {
        await checker.close();
      }
    });
  });

  it('a 404 is PAGE_ERR_HTTP_STATUS naming the URL and the status', async () => {
    const url = `${base}/no-such-route`;
    const e = await onDesktop(url, (d) => rejection(wait(d, url), 'PAGE_ERR_HTTP_STATUS'));
    expect(e.details).toEqual({ url, status: 404 });
    expect(e.message).toContain(url);
  });

  it('a refused connection is PAGE_ERR_UNREACHABLE with net::ERR_CONNECTION_REFUSED (Chromium shows its error page)', async () => {
    const e = await onDesktop(refusedUrl, (d) => rejection(wait(d, refusedUrl), 'PAGE_ERR_UNREACHABLE'));
    expect(e.details).toEqual({ url: refusedUrl, netError: 'net::ERR_CONNECTION_REFUSED' });
  });

  it('a server that never answers is PAGE_ERR_BLANK after the load timeout (the browser is still on about:blank)', async () => {
    const e = await onDesktop(hangUrl, (d) => rejection(wait(d, hangUrl, { loadTimeoutMs: 3000 }), 'PAGE_ERR_BLANK'));
    expect(e.details).toMatchObject({ url: hangUrl, timeoutMs: 3000, href: 'about:blank' });
  });

  it('a page whose scripts never render anything is PAGE_ERR_BLANK (loaded, nothing shown)', async () => {
    const url = `${base}/empty-app`;
    const e = await onDesktop(url, (d) => rejection(wait(d, url, { loadTimeoutMs: 3000 }), 'PAGE_ERR_BLANK'));
    expect(e.details).toMatchObject({ url, href: url, readyState: 'complete' });
  });

  it('a page that mutates its DOM forever is PAGE_ERR_NOT_SETTLED after the settle timeout', async () => {
    const url = `${base}/busy`;
    const e = await onDesktop(url, (d) => rejection(wait(d, url, { settleTimeoutMs: 1500 }), 'PAGE_ERR_NOT_SETTLED'));
    expect(e.details).toEqual({ url, timeoutMs: 1500, quietMs: 100 });
  });
});

describe('waitForPageReady with navigate (a remote desktop)', () => {
  let d: Desktop;
  beforeAll(async () => {
    d = await launchDesktop({ url: 'about:blank', size: '800x600', timeoutMs: 45_000 });
  });
  afterAll(async () => {
    await d?.close();
  });
  const go = (url: string, o: Partial<PageReadyOptions> = {}) => waitForPageReady(d.cdpUrl, { url, navigate: true, ...o });

  it('reports each failure by its cause, and a good page after a bad one is ready', async () => {
    expect((await rejection(go('http://vncua-no-such-host.invalid/task'), 'PAGE_ERR_UNREACHABLE')).details).toMatchObject({ netError: 'net::ERR_NAME_NOT_RESOLVED' });
    const tls = `${base.replace('http://', 'https://')}/ok`;
    const e = await rejection(go(tls), 'PAGE_ERR_UNREACHABLE');
    expect(e.details).toMatchObject({ url: tls });
    expect(String(e.details?.netError)).toMatch(/^net::ERR_SSL_/);
    expect((await rejection(go(refusedUrl), 'PAGE_ERR_UNREACHABLE')).details).toMatchObject({ netError: 'net::ERR_CONNECTION_REFUSED' });
    // An empty 500 makes Chromium show its own error page: the status is still named.
    expect((await rejection(go(`${base}/error-500`), 'PAGE_ERR_HTTP_STATUS')).details).toEqual({ url: `${base}/error-500`, status: 500 });
    const ready = await go(`${base}/ok`);
    expect([ready.href, ready.status]).toEqual([`${base}/ok`, 200]);
  });

  // Attached before the page loads (navigate: true), the wait sees the dialog open. A dialog that opened
  // before the wait attached is not replayed by CDP (see page-ready.ts): on a loaded machine the desktop
  // opened at /alert often shows it first, so the test navigates.
  it('a page showing an alert is ready (the dialog is what the agent sees)', async () => {
    const ready = await go(`${base}/alert`, { loadTimeoutMs: 10_000 });
    expect(ready.dialog).toBe(true);
    expect(ready.href).toBe(`${base}/alert`);
  });

  it('the signal cancels the wait: PAGE_ERR_ABORTED', async () => {
    const ac = new AbortController();
    const p = go(hangUrl, { loadTimeoutMs: 30_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 300);
    await rejection(p, 'PAGE_ERR_ABORTED');
  });
});

describe('a pooled desktop: started at about:blank, opened at the task page later', () => {
  it('navigating, it counts the quiet that passed before it looked (a document-start mutation clock), and leaves no trace in the page', async () => {
    const d = await launchDesktop({ size: '800x600', timeoutMs: 45_000 });
    try {
      // A page rendering after load: everything is there when the wait ends.
      await waitForPageReady(d.cdpUrl, { url: `${base}/late`, navigate: true });
      expect(await cdpEvaluate(d.cdpUrl, "document.getElementById('last')?.textContent ?? null")).toBe('three');
      // A burst of changes: the wait ends only once the DOM has been quiet for quietMs since its last change.
      await waitForPageReady(d.cdpUrl, { url: `${base}/burst`, navigate: true, quietMs: 100 });
      expect(await cdpEvaluate(d.cdpUrl, 'document.getElementById("n").textContent')).toBe('10');
      expect(await cdpEvaluate(d.cdpUrl, 'performance.now() - window.lastChange >= 100')).toBe(true);
      // The page sees none of the clock, and a later navigation (the agent's) gets none.
      expect(await cdpEvaluate(d.cdpUrl, "typeof globalThis.__vncuaLastMutation + ' ' + typeof globalThis.__vncuaMutationClock")).toBe('undefined undefined');
      const [target] = await pageTargets(d.cdpUrl);
      const s = await PageSocket.open(target!.webSocketDebuggerUrl!, AbortSignal.timeout(10_000));
      try {
        await s.send('Page.enable', {}, AbortSignal.timeout(10_000));
        const loaded = new Promise<void>((r) => s.on('Page.loadEventFired', () => r()));
        await s.send('Page.navigate', { url: `${base}/ok` }, AbortSignal.timeout(10_000));
        await loaded;
      } finally {
        s.close();
      }
      expect(await cdpEvaluate(d.cdpUrl, 'typeof globalThis.__vncuaLastMutation')).toBe('undefined');
    } finally {
      await d.close();
    }
  });

  it('prepared ahead (preparePage), the wait starts at Page.navigate, with the same quiet rule, errors, history and no trace left', async () => {
    const d = await launchDesktop({ size: '800x600', timeoutMs: 45_000 });
    /** A prepared page whose commands sent from now on are noted in `sent`. */
    const prepare = async (sent: string[]): Promise<PreparedPage> => {
      const signal = AbortSignal.timeout(20_000);
      const p = await preparePage(await openPage(d.cdpUrl, 'about:blank', true, signal), signal);
      const send = p.socket.send.bind(p.socket);
      p.socket.send = ((method: string, params: Record<string, unknown>, s: AbortSignal) => {
        sent.push(method);
        return send(method, params, s);
      }) as typeof p.socket.send;
      return p;
    };
    try {
      await waitForPageReady(d.cdpUrl, { url: 'about:blank', loadTimeoutMs: 10_000 });
      // A burst of changes: ready only once the DOM has been quiet for quietMs since its last change.
      const sent: string[] = [];
      const ready = await waitForPageReady(d.cdpUrl, { url: `${base}/burst`, navigate: true, resetHistory: true, prepared: await prepare(sent) });
      expect(sent[0]).toBe('Page.navigate');
      expect(ready.href).toBe(`${base}/burst`);
      expect(await cdpEvaluate(d.cdpUrl, 'document.getElementById("n").textContent')).toBe('10');
      expect(await cdpEvaluate(d.cdpUrl, 'performance.now() - window.lastChange >= 100')).toBe(true);
      expect(await cdpEvaluate(d.cdpUrl, "typeof globalThis.__vncuaLastMutation + ' ' + typeof globalThis.__vncuaMutationClock")).toBe('undefined undefined');
      // The history holds only the task page.
      const [target] = await pageTargets(d.cdpUrl);
      const s = await PageSocket.open(target!.webSocketDebuggerUrl!, AbortSignal.timeout(10_000));
      try {
        const h = await s.send<{ entries: Array<{ url: string }> }>('Page.getNavigationHistory', {}, AbortSignal.timeout(10_000));
        expect(h.entries.map((e) => e.url)).toEqual([`${base}/burst`]);
        // A later navigation (the agent's) gets no clock.
        await s.send('Page.enable', {}, AbortSignal.timeout(10_000));
        const loaded = new Promise<void>((r) => s.on('Page.loadEventFired', () => r()));
        await s.send('Page.navigate', { url: `${base}/ok` }, AbortSignal.timeout(10_000));
        await loaded;
      } finally {
        s.close();
      }
      expect(await cdpEvaluate(d.cdpUrl, 'typeof globalThis.__vncuaLastMutation')).toBe('undefined');
      // The main document's status is read as before (the Network domain was turned on ahead).
      const e = await rejection(waitForPageReady(d.cdpUrl, { url: `${base}/no-such-route`, navigate: true, prepared: await prepare([]) }), 'PAGE_ERR_HTTP_STATUS');
      expect(e.details).toEqual({ url: `${base}/no-such-route`, status: 404 });
    } finally {
      await d.close();
    }
  });

  it('is ready at about:blank at once; opened with resetHistory, its history holds only the task page (Back reaches nothing)', async () => {
    const d = await launchDesktop({ size: '800x600', timeoutMs: 45_000 });
    try {
      const blank = await waitForPageReady(d.cdpUrl, { url: 'about:blank', loadTimeoutMs: 10_000 });
      expect(blank.href).toBe('data:text/html,');
      const ready = await waitForPageReady(d.cdpUrl, { url: `${base}/ok`, navigate: true, resetHistory: true });
      expect(ready.href).toBe(`${base}/ok`);
      const [target] = await pageTargets(d.cdpUrl);
      const s = await PageSocket.open(target!.webSocketDebuggerUrl!, AbortSignal.timeout(10_000));
      try {
        const h = await s.send<{ currentIndex: number; entries: Array<{ url: string }> }>('Page.getNavigationHistory', {}, AbortSignal.timeout(10_000));
        expect(h.entries.map((e) => e.url)).toEqual([`${base}/ok`]);
        expect(h.currentIndex).toBe(0);
      } finally {
        s.close();
      }
    } finally {
      await d.close();
    }
  });
});
