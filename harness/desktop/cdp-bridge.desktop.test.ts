/**
 * docker/cdp-bridge.py on a real desktop: CDP's HTTP endpoints under the token (and 403 without
 * it), page and browser WebSockets multiplexed on Chromium's one pipe (each client its own
 * session, events only to the client that enabled them), and a client that leaves detaches.
 */
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { cdpHttpUrl } from '../cdp/endpoint.ts';
import { launchDesktop, type Desktop } from './launch.ts';
import { eventually, servePage } from './test-helpers.ts';

interface Target {
  id: string;
  type: string;
  url: string;
  title: string;
  webSocketDebuggerUrl: string;
  devtoolsFrontendUrl: string;
}

/** A raw CDP WebSocket client: send() resolves with the answer; `events` collects the rest. */
async function cdpSocket(
  url: string,
): Promise<{ send(method: string, params?: object, sessionId?: string): Promise<{ result?: any; error?: { code: number } }>; events: Array<{ method: string }>; close(): void }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map<number, (m: any) => void>();
  const events: Array<{ method: string }> = [];
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    if (m.id !== undefined) pending.get(m.id)?.(m);
    else events.push(m);
  });
  return {
    send: (method, params = {}, sessionId) =>
      new Promise((resolve) => {
        const mid = ++id;
        pending.set(mid, resolve);
        ws.send(JSON.stringify({ id: mid, method, params, sessionId }));
      }),
    events,
    close: () => ws.close(),
  };
}

let d: Desktop;
let page: { url: string; close(): Promise<void> };
let other: { url: string; close(): Promise<void> };
const get = (path: string, init?: RequestInit) => fetch(cdpHttpUrl(d.cdpUrl, path), init);
const list = async () => ((await (await get('json/list')).json()) as Target[]).filter((t) => t.type === 'page');

beforeAll(async () => {
  page = await servePage('<!doctype html><title>first</title>');
  other = await servePage('<!doctype html><title>second</title>');
  d = await launchDesktop({ url: page.url, timeoutMs: 45_000 });
});
afterAll(async () => {
  await d?.close();
  await page?.close();
  await other?.close();
});

describe('cdp-bridge.py', () => {
  it('serves json/version, json/list, json/new (PUT), json/activate and json/close under the token; 403 without it; /health', async () => {
    const token = new URL(d.cdpUrl).pathname.split('/')[1]!;
    const base = `127.0.0.1:${d.cdpPort}/${token}`;
    const version = (await (await get('json/version')).json()) as Record<string, string>;
    expect(version.Browser).toMatch(/^Chrome\//);
    expect(version['Protocol-Version']).toBe('1.3');
    expect(version.webSocketDebuggerUrl).toMatch(new RegExp(`^ws://${base}/devtools/browser/[0-9a-f-]+$`));
    expect((await get('json/version/')).status).toBe(200); // Playwright asks with a trailing slash

    for (const path of ['/json/version', '/json/list', '/', `/${'0'.repeat(32)}/json/version`]) {
      expect((await fetch(`http://127.0.0.1:${d.cdpPort}${path}`)).status).toBe(403);
    }
    const health = await fetch(`http://127.0.0.1:${d.cdpPort}/health`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    expect((await get('json/nothing')).status).toBe(404);

    const pages = await eventually(async () => ((await list()).some((t) => t.url === page.url) ? list() : undefined));
    const first = pages?.find((t) => t.url === page.url);
    expect(first).toMatchObject({ url: page.url, webSocketDebuggerUrl: `ws://${base}/devtools/page/${first!.id}` });
    expect(first!.devtoolsFrontendUrl).toContain(`ws=${base}/devtools/page/${first!.id}`);

    expect((await get(`json/new?${other.url}`)).status).toBe(405); // GET is refused, as by Chromium
    const created = (await (await get(`json/new?${other.url}`, { method: 'PUT' })).json()) as Target;
    expect(created.webSocketDebuggerUrl).toBe(`ws://${base}/devtools/page/${created.id}`);
    expect(await eventually(async () => (await list()).some((t) => t.id === created.id && t.url === other.url))).toBe(true);
    expect((await get(`json/activate/${created.id}`)).status).toBe(200);
    expect((await get('json/activate/NO-SUCH-TARGET')).status).toBe(404);
    expect((await get(`json/close/${created.id}`)).status).toBe(200);
    expect(await eventually(async () => !(await list()).some((t) => t.id === created.id))).toBe(true);
    expect((await get('json/close/NO-SUCH-TARGET')).status).toBe(404);
  });

  it('page and browser WebSockets: one session per client on the pipe; events go only where they were enabled; leaving detaches', async () => {
    const [target] = await list();
    const a = await cdpSocket(target!.webSocketDebuggerUrl);
    const b = await cdpSocket(target!.webSocketDebuggerUrl);
    expect((await a.send('Runtime.evaluate', { expression: '6 * 7', returnByValue: true })).result.result.value).toBe(42);
    expect((await b.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true })).result.result.value).toBe('first');
    // Only a enables Runtime: b's console.log reaches a, never b.
    await a.send('Runtime.enable');
    await b.send('Runtime.evaluate', { expression: "console.log('from b')" });
    expect(await eventually(() => a.events.some((e) => e.method === 'Runtime.consoleAPICalled'))).toBe(true);
    expect(b.events.filter((e) => e.method === 'Runtime.consoleAPICalled')).toEqual([]);
    // A session that is not the client's own is refused.
    expect((await b.send('Runtime.evaluate', { expression: '1' }, 'NOT-MY-SESSION')).error?.code).toBe(-32001);

    const version = (await (await get('json/version')).json()) as { webSocketDebuggerUrl: string };
    const browser = await cdpSocket(version.webSocketDebuggerUrl);
    const attached = async () =>
      ((await browser.send('Target.getTargets')).result.targetInfos as Array<{ targetId: string; attached: boolean }>).find((t) => t.targetId === target!.id)!.attached;
    expect(await attached()).toBe(true);
    a.close();
    b.close();
    expect(await eventually(async () => !(await attached()), 10_000)).toBe(true);
    browser.close();
  });

  it('Playwright: two connectOverCDP clients at once; one leaving does not disturb the other', async () => {
    const one = await chromium.connectOverCDP(d.cdpUrl);
    const two = await chromium.connectOverCDP(d.cdpUrl);
    const p1 = one
      .contexts()[0]!
      .pages()
      .find((p) => p.url() === page.url)!;
    const p2 = two
      .contexts()[0]!
      .pages()
      .find((p) => p.url() === page.url)!;
    expect(await p1.evaluate(() => document.title)).toBe('first');
    expect(await p2.evaluate(() => 1 + 1)).toBe(2);
    await one.close();
    expect(await p2.evaluate(() => document.title)).toBe('first');
    const np = await two.contexts()[0]!.newPage();
    await np.goto(other.url);
    expect(await np.title()).toBe('second');
    await np.close();
    await two.close();
  });
});
