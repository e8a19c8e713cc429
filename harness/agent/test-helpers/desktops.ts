/**
 * Test-only: the events page served over HTTP, a desktop (launchDesktop with Xvnc or x11vnc)
 * showing it, a Playwright view of the page through CDP, and a scripted Agent.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { tempOutputDir } from '../../test-helpers/files.ts';
import { spawn } from 'node:child_process';
import { launchDesktop, type Desktop } from '../../desktop/index.ts';
import { freePort, stopProcess, track, waitForPort } from '../../rfb/test-helpers/xvnc.ts';

const EVENTS_HTML = readFileSync(new URL('../test-pages/events.html', import.meta.url));

/** One event the page logged (see test-pages/events.html). */
export interface PageEvent {
  type: string;
  target: string;
  x: number;
  y: number;
  button: number;
  buttons: number;
  detail: number;
  ctrl: boolean;
  shift: boolean;
  alt: boolean;
  meta: boolean;
  key?: string;
  code?: string;
  deltaX?: number;
  deltaY?: number;
  value?: string | number;
  data?: string;
}

/** What the page holds. */
export interface PageState {
  events: PageEvent[];
  text: string;
  slider: number;
  scroll: { left: number; top: number };
}

/** An HTTP server on 127.0.0.1:0 serving the events page at every path. */
export async function serveEventsPage(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(EVENTS_HTML);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events.html`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The VNC servers the agent is tested against. */
export type ServerKind = 'xvnc' | 'x11vnc';

/** A desktop showing the events page, and the page seen through CDP. */
export interface EventsDesktop {
  kind: ServerKind;
  /** X display, e.g. ":3". */
  display: string;
  /** The X authority file of that display (XAUTHORITY for other X clients). */
  xauthority: string;
  vncUrl: string;
  /** Plain RFB on the desktop's unix socket (unix:///…/rfb.sock), for test proxies (startTcpProxy). */
  rfbUnixUrl: string;
  cdpUrl: string;
  pageUrl: string;
  page: Page;
  /** Reset the page (events, textarea, slider, scroll; reload if it navigated away). */
  reset(): Promise<void>;
  /** The page's state now. */
  state(): Promise<PageState>;
  /** Poll until `done(state)` holds (or `timeoutMs`), then until the state stays the same for `quietMs` (stray events, smooth scrolling); returns it. */
  settle(done: (s: PageState) => boolean, quietMs?: number, timeoutMs?: number): Promise<PageState>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A desktop showing one page, and that page through CDP. */
export interface PageDesktop {
  desktop: Desktop;
  page: Page;
  /** The URL the desktop opened. */
  url: string;
  close(): Promise<void>;
}

/** Launch a desktop (`server`, default Xvnc; `size`, default 1280x800) showing `url`; resolves once the page is open and `ready(page)` holds. */
export async function startPageDesktop(url: string, options: { server?: ServerKind; size?: string; ready?: (page: Page) => Promise<unknown> } = {}): Promise<PageDesktop> {
  const closers: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of closers.reverse()) {
      try {
        await c();
      } catch {
        // keep closing the rest
      }
    }
  };
  try {
    const desktop = await launchDesktop({ server: options.server, url, size: options.size, timeoutMs: 45_000 });
    closers.push(() => desktop.close());
    const browser: Browser = await chromium.connectOverCDP(desktop.cdpUrl);
    closers.push(() => browser.close());
    let page: Page | undefined;
    for (let i = 0; i < 200 && !page; i++) {
      page = browser
        .contexts()
        .flatMap((c) => c.pages())
        .find((p) => p.url().startsWith(url));
      if (!page) await sleep(50);
    }
    if (!page) throw new Error(`the page ${url} did not open`);
    await options.ready?.(page);
    return { desktop, page, url, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Start a desktop of `kind` (and `size`, default 1280x800) showing the events page. */
export async function startEventsDesktop(kind: ServerKind, options: { size?: string } = {}): Promise<EventsDesktop> {
  const http = await serveEventsPage();
  let d: PageDesktop;
  try {
    d = await startPageDesktop(http.url, {
      server: kind,
      size: options.size,
      ready: (p) => p.waitForFunction(() => typeof (window as unknown as { __reset?: unknown }).__reset === 'function'),
    });
  } catch (e) {
    await http.close();
    throw e;
  }
  const p = d.page;
  const state = () => p.evaluate(() => (window as unknown as { __state(): PageState }).__state());
  return {
    kind,
    display: d.desktop.display,
    xauthority: d.desktop.xauthority,
    vncUrl: d.desktop.vncUrl,
    rfbUnixUrl: `unix://${d.desktop.rfbSocket}`,
    cdpUrl: d.desktop.cdpUrl,
    pageUrl: http.url,
    page: p,
    state,
    async reset() {
      if (p.url() !== http.url) await p.goto(http.url);
      await p.evaluate(() => (window as unknown as { __reset(): boolean }).__reset());
    },
    async settle(done, quietMs = 250, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs;
      let s = await state();
      while (!done(s) && Date.now() < end) {
        await sleep(25);
        s = await state();
      }
      // Then until nothing changes for quietMs (smooth scrolling keeps moving after the last wheel event).
      const quietEnd = Date.now() + timeoutMs;
      for (;;) {
        await sleep(quietMs);
        const next = await state();
        if (JSON.stringify(next) === JSON.stringify(s) || Date.now() > quietEnd) return next;
        s = next;
      }
    },
    async close() {
      await d.close().catch(() => {});
      await http.close().catch(() => {});
    },
  };
}

/** What useEventsDesktop() gives a describe block (or a file). */
export interface EventsDesktopFixture {
  /** The events desktop (once the block's beforeAll ran). */
  readonly desktop: EventsDesktop;
  /** A fresh temporary output directory, removed after the block's tests. */
  out(prefix?: string): Promise<string>;
}

/**
 * The setup every events-desktop test block shares: the desktop of `kind` (and `size`) started before the block's tests
 * (beforeAll, up to 90 s) and closed after them, with the output directories it handed out; the page reset
 * before each test unless `reset` is false.
 */
export function useEventsDesktop(kind: ServerKind = 'xvnc', options: { reset?: boolean; size?: string } = {}): EventsDesktopFixture {
  let desktop: EventsDesktop | undefined;
  const dirs: Array<{ remove(): Promise<void> }> = [];
  beforeAll(async () => {
    desktop = await startEventsDesktop(kind, { size: options.size });
  }, 90_000);
  afterAll(async () => {
    await desktop?.close();
    for (const d of dirs.splice(0)) await d.remove();
  });
  if (options.reset !== false) {
    beforeEach(async () => {
      await desktop?.reset();
    });
  }
  return {
    get desktop() {
      if (!desktop) throw new Error('the events desktop is not started: use it inside the tests of the block that called useEventsDesktop()');
      return desktop;
    },
    async out(prefix) {
      const d = await tempOutputDir(prefix);
      dirs.push(d);
      return d.dir;
    },
  };
}

// The scripted Agent and temporary directories live in light modules (no playwright-core there, for unit tests).
export { ScriptAgent } from './hook-agent.ts';
export { tempOutputDir } from '../../test-helpers/files.ts';

/**
 * TigerVNC's x0vncserver serving an existing X display (its authority file `xauthority`; no password, localhost): a server that drops key
 * events whose keysym its X keymap lacks, without telling the client.
 */
export async function startX0vncserver(display: string, xauthority: string): Promise<{ url: string; close(): Promise<void> }> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const port = await freePort();
    const p = track(
      spawn('x0vncserver', ['-display', display, '-rfbport', String(port), '-SecurityTypes', 'None', '-localhost', '-AlwaysShared'], {
        stdio: ['ignore', 'ignore', 'ignore'],
        env: { ...process.env, XAUTHORITY: xauthority },
      }),
    );
    if (await waitForPort(port, p)) return { url: `tcp://127.0.0.1:${port}`, close: () => stopProcess(p) };
    await stopProcess(p);
  }
  throw new Error('x0vncserver did not start');
}
