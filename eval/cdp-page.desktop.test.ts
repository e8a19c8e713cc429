/**
 * warmOpener() with `standAt` on a real Chromium: a pool's spare waits at the suite server's empty
 * page (SPARE_PAGE_PATH, which shows nothing on purpose: its wait is for the load event, not for
 * content), then opens the task page from there with its history cleared; a standAt page that never
 * answers sends the spare to about:blank instead, and open() still works.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestChromium } from '../harness/cdp/test-helpers.ts';
import { PageSocket, pageTargets } from '../harness/cdp/page-socket.ts';
import { warmOpener } from './cdp-page.ts';
import { SPARE_PAGE_PATH, startStaticServer, type StaticServer } from './static-server.ts';

let chromium: TestChromium;
let suite: StaticServer;
let dir: string;
let silent: Server;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-stand-at-'));
  await writeFile(join(dir, 'task.html'), '<!doctype html><title>task</title><p>the task</p>');
  suite = await startStaticServer({ root: dir });
  // Accepts connections and never answers.
  silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  chromium = await launchChromium();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await suite?.close();
  silent?.closeAllConnections();
  await new Promise((r) => silent?.close(r));
  await rm(dir, { recursive: true, force: true });
});

/** The page target's URL now. */
async function pageUrl(): Promise<string | undefined> {
  return (await pageTargets(chromium.cdpUrl))[0]?.url;
}

/** The page's navigation history (URLs), read over its own socket. */
async function history(): Promise<string[]> {
  const target = (await pageTargets(chromium.cdpUrl))[0];
  if (!target?.webSocketDebuggerUrl) throw new Error('no page target');
  const s = await PageSocket.open(target.webSocketDebuggerUrl, AbortSignal.timeout(10_000));
  try {
    const h = await s.send<{ entries: Array<{ url: string }> }>('Page.getNavigationHistory', {}, AbortSignal.timeout(10_000));
    return h.entries.map((e) => e.url);
  } finally {
    s.close();
  }
}

describe('warmOpener standAt', () => {
  it("waits at the suite's empty spare page, then opens the task from it with only the task page in the history", async () => {
    const spare = new URL(SPARE_PAGE_PATH, suite.url).href;
    const page = await warmOpener(chromium.cdpUrl, { standAt: spare, timeoutMs: 20_000 });
    try {
      expect(await pageUrl()).toBe(spare);
      const task = new URL('task.html', suite.url).href;
      const ready = (await page.open(task, { signal: AbortSignal.timeout(30_000) })) as { href: string };
      expect(ready.href).toBe(task);
      expect(await history()).toEqual([task]);
    } finally {
      page.close();
    }
  }, 60_000);

  it('a standAt page that never answers: the spare goes to about:blank after 5 s, and open() still works', async () => {
    const never = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/spare`;
    const page = await warmOpener(chromium.cdpUrl, { standAt: never, timeoutMs: 20_000 });
    try {
      const task = new URL('task.html', suite.url).href;
      const ready = (await page.open(task, { signal: AbortSignal.timeout(30_000) })) as { href: string };
      expect(ready.href).toBe(task);
      expect(await pageUrl()).toBe(task);
    } finally {
      page.close();
    }
  }, 60_000);
});
