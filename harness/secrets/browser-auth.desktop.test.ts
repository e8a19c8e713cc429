/**
 * Auth bindings in a real Chromium: HTTP sites on 127.0.0.1 (told apart by port, like the guard's tests) log the
 * headers they receive; a page on each is loaded through Playwright over CDP while startBrowserAuth is attached.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestChromium } from '../cdp/test-helpers.ts';
import { serveHtml, startSite, type Site } from '../guard/test-helpers.ts';
import { resolveAuthBindings } from './auth-bindings.ts';
import { startBrowserAuth, type AuthEvent, type BrowserAuth } from './browser-auth.ts';
import type { VncuaError } from '../errors.ts';

const ENV: Record<string, string> = {
  BEARER_T: 'brr-1a2b3c4d5e6f',
  API_K: 'key-9z8y7x6w5v',
  SID: 'sid-cookie-44aa55bb',
  LS_TOK: 'ls-token-0f0e0d0c',
  CID: 'client-1',
  CSEC: 'csecret-ab12cd34',
  U: 'ann',
  BAD_PW: 'wrong-password-1',
};

describe('startBrowserAuth in Chromium', () => {
  let chrome: TestChromium;
  let browser: Browser;
  let page: Page;
  let bearer: Site;
  let apiKey: Site;
  let cookies: Site;
  let storage: Site;
  let oauth: Site;
  let basic: Site;
  let plain: Site;
  let tokens: Server;
  let issued = 0;
  let auth: BrowserAuth;
  const events: AuthEvent[] = [];
  const errors: VncuaError[] = [];
  const seen = new Map<string, IncomingMessage['headers']>();

  function logHeaders(site: Site, name: string, paths: string[]): void {
    for (const p of paths) {
      site.route(p, (req, res) => {
        seen.set(`${name}${p}`, req.headers);
        res.writeHead(200, { 'content-type': p.endsWith('.html') ? 'text/html' : 'text/plain', 'access-control-allow-origin': '*' });
        res.end(p.endsWith('.html') ? `<!doctype html><title>${name}</title><script>fetch('${site.origin}/api').catch(()=>{})</script>` : 'ok');
      });
    }
  }

  beforeAll(async () => {
    const sites = await Promise.all(Array.from({ length: 7 }, () => startSite()));
    [bearer, apiKey, cookies, storage, oauth, basic, plain] = sites as [Site, Site, Site, Site, Site, Site, Site];
    logHeaders(bearer, 'bearer', ['/p.html', '/api']);
    logHeaders(apiKey, 'apiKey', ['/p.html', '/api']);
    logHeaders(cookies, 'cookies', ['/p.html', '/api']);
    logHeaders(plain, 'plain', ['/p.html', '/api']);
    serveHtml(storage, '/p.html', '<!doctype html><title>x</title><script>document.title = "ls=" + localStorage.getItem("tok")</script>');
    // The OAuth site accepts only the second token issued: the first answer is 401, the binding refreshes once.
    oauth.route('/p.html', (req, res) => {
      seen.set(`oauth/p.html#${seen.size}`, req.headers);
      if (req.headers.authorization !== 'Bearer oauth-tok-2') return void res.writeHead(401, { 'content-type': 'text/plain' }).end('no');
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>oauth ok</title>');
    });
    basic.route('/p.html', (_req, res) => void res.writeHead(401, { 'www-authenticate': 'Basic realm="x"' }).end('no'));
    tokens = createServer((_req, res) => {
      issued++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `oauth-tok-${issued}`, expires_in: 3600 }));
    });
    tokens.listen(0, '127.0.0.1');
    await once(tokens, 'listening');
    const tp = (tokens.address() as { port: number }).port;
    const bindings = resolveAuthBindings(
      [
        { domain: bearer.pattern, type: 'bearer', tokenEnv: 'BEARER_T' },
        { domain: apiKey.pattern, type: 'apiKey', header: 'X-Api-Key', prefix: 'k:', keyEnv: 'API_K' },
        { domain: cookies.pattern, type: 'cookies', cookies: [{ name: 'sid', valueEnv: 'SID', httpOnly: true }] },
        { domain: storage.pattern, type: 'localStorage', items: [{ key: 'tok', valueEnv: 'LS_TOK' }] },
        { domain: oauth.pattern, type: 'oauth', tokenUrl: `http://127.0.0.1:${tp}/token`, clientIdEnv: 'CID', clientSecretEnv: 'CSEC' },
        { domain: basic.pattern, type: 'basic', usernameEnv: 'U', passwordEnv: 'BAD_PW' },
      ],
      (k) => ENV[k],
    );
    chrome = await launchChromium();
    browser = await chromium.connectOverCDP(chrome.cdpUrl);
    page = browser.contexts()[0]!.pages()[0] ?? (await browser.contexts()[0]!.newPage());
    auth = await startBrowserAuth({ cdpUrl: chrome.cdpUrl, bindings, onEvent: (e) => events.push(e), onError: (e) => errors.push(e), timeoutMs: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await auth?.close();
    await browser?.close().catch(() => {});
    await chrome?.close();
    tokens?.close();
    await Promise.all([bearer, apiKey, cookies, storage, oauth, basic, plain].map((s) => s?.close()));
  });

  async function visit(site: Site, name: string): Promise<void> {
    await page.goto(`${site.origin}/p.html`, { timeout: 20_000 });
    if (seen.has(`${name}/p.html`)) await expect.poll(() => seen.has(`${name}/api`), { timeout: 20_000 }).toBe(true);
  }

  it('adds bearer and API-key headers to matching requests only', async () => {
    await visit(bearer, 'bearer');
    expect(seen.get('bearer/p.html')?.authorization).toBe('Bearer brr-1a2b3c4d5e6f');
    expect(seen.get('bearer/api')?.authorization).toBe('Bearer brr-1a2b3c4d5e6f');
    await visit(apiKey, 'apiKey');
    expect(seen.get('apiKey/p.html')?.['x-api-key']).toBe('k:key-9z8y7x6w5v');
    expect(seen.get('apiKey/api')?.['x-api-key']).toBe('k:key-9z8y7x6w5v');
    await visit(plain, 'plain');
    expect(seen.get('plain/p.html')?.authorization).toBeUndefined();
    expect(seen.get('plain/api')?.['x-api-key']).toBeUndefined();
    expect(events.filter((e) => e.kind === 'applied').map((e) => e.binding)).toEqual([`auth[0] bearer ${bearer.pattern}`, `auth[1] apiKey ${apiKey.pattern}`]);
    expect(events.every((e) => !e.url.includes('p.html'))).toBe(true);
  }, 60_000);

  it('sets cookies before the first request and localStorage before the page scripts run', async () => {
    await visit(cookies, 'cookies');
    expect(seen.get('cookies/p.html')?.cookie).toBe('sid=sid-cookie-44aa55bb');
    await page.goto(`${storage.origin}/p.html`, { timeout: 20_000 });
    await expect.poll(() => page.title(), { timeout: 20_000 }).toBe('ls=ls-token-0f0e0d0c');
  }, 60_000);

  it('OAuth: fetches a token, and after a 401 refreshes it once and retries', async () => {
    const res = await page.goto(`${oauth.origin}/p.html`, { timeout: 20_000 });
    expect(res?.status()).toBe(200);
    expect(await page.title()).toBe('oauth ok');
    expect(issued).toBe(2);
    expect(events.filter((e) => e.binding.startsWith('auth[4]')).map((e) => [e.kind, e.status])).toEqual([
      ['applied', undefined],
      ['retried', 401],
    ]);
    expect(errors).toEqual([]);
  }, 60_000);

  it('a navigation rejected again after the retry is AUTH_ERR_REJECTED naming the binding', async () => {
    const res = await page.goto(`${basic.origin}/p.html`, { timeout: 20_000 });
    expect(res?.status()).toBe(401);
    await expect.poll(() => errors.length, { timeout: 20_000 }).toBe(1);
    expect(errors[0]!.code).toBe('AUTH_ERR_REJECTED');
    expect(errors[0]!.message).toContain(`auth[5] basic ${basic.pattern}`);
    expect(errors[0]!.message).not.toContain('wrong-password');
    expect(events.filter((e) => e.binding.startsWith('auth[5]')).map((e) => e.kind)).toEqual(['applied', 'retried', 'rejected']);
  }, 60_000);
});
