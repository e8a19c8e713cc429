/**
 * One persistent Playwright CDP connection to a browser, as the success check uses it:
 * tracks every page (and its JavaScript dialogs), hands out one raw CDP session per page,
 * and evaluates probes with `Runtime.evaluate`.
 *
 * It attaches with `noDefaults: true`, so Playwright leaves the user's browser as it is
 * (no focus emulation, fonts or media overrides), and it listens for dialogs, so Playwright
 * does not auto-dismiss the alerts the agent is supposed to see.
 */
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { redactSecretsIn } from '../redact.ts';
import { isCheckableUrl } from './active-page.ts';
import type { Budget } from './budget.ts';

/** Why an evaluation did not produce a value: the page is between documents, or the target/connection is gone. */
export class ProbeError extends Error {
  /** 'navigation': the execution context went away (retry shortly); 'gone': the page or the connection closed. */
  readonly kind: 'navigation' | 'gone';
  constructor(kind: 'navigation' | 'gone', message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ProbeError';
    this.kind = kind;
  }
}

/** One page the connection knows about. */
export interface TrackedPage {
  /** The Playwright page. */
  readonly page: Page;
  /** Order first seen (higher = newer). */
  readonly seq: number;
  /** JavaScript dialogs (alert/confirm/prompt/beforeunload) currently open on it. */
  dialogs: number;
  /** Called when a dialog opens on it (wakes evaluations the dialog blocks). */
  readonly dialogWaiters: Set<() => void>;
  /** The raw CDP session, created on first use. */
  session: Promise<CDPSession> | null;
}

/** The result of evaluating an expression: its by-value result, the page's exception text, or "a dialog blocks the page". */
export type Evaluated = { value: unknown } | { exception: string } | { dialog: true };

const DIALOG = Object.freeze({ dialog: true as const });
const isDialog = (x: unknown): x is typeof DIALOG => x === DIALOG;

const NAVIGATION_ERRORS = /Execution context was destroyed|Cannot find (default )?(execution )?context|Inspected target navigated|most likely because of a navigation/i;

function classify(e: unknown): ProbeError {
  const message = e instanceof Error ? e.message : String(e);
  return new ProbeError(NAVIGATION_ERRORS.test(message) ? 'navigation' : 'gone', message, e);
}

let playwright: Promise<typeof import('playwright-core')> | undefined;
/** playwright-core, imported once per process (about 0.3 s of CPU): on the first CDP connection, or ahead of it by preloadCdp(). */
function loadPlaywright(): Promise<typeof import('playwright-core')> {
  playwright ??= import('playwright-core');
  return playwright;
}

/** Import what a CDP connection needs now rather than on the first connection: a long-lived process (a queue worker) pays it while idle, not inside its first run. */
export async function preloadCdp(): Promise<void> {
  await loadPlaywright();
}

/** A live CDP connection (see the file comment). */
export class CdpConnection {
  /** Set whenever a page opens or closes; the checker re-picks the active page when it is set. */
  changed = true;
  /** The page picked as active by the last pick (maintained by the checker). */
  cached: TrackedPage | null = null;
  /** Called once when the browser connection drops. */
  onLost: (() => void) | undefined;

  private lost = false;
  private nextSeq = 0;
  private readonly pages = new Map<Page, TrackedPage>();
  private readonly contexts = new Set<BrowserContext>();
  private browserSession: Promise<CDPSession> | null = null;

  /** Connect over CDP (`http(s)://` endpoint or `ws(s)://` browser URL) within `timeoutMs`. */
  static async open(cdpUrl: string, timeoutMs: number): Promise<CdpConnection> {
    let browser: Browser;
    try {
      // playwright-core is loaded on the first connection, not with the module: an Agent without CDP,
      // and every entry that only imports the Agent (vncua/agent, vncua/agents, vncua/eval), never pays for it.
      const { chromium } = await loadPlaywright();
      browser = await chromium.connectOverCDP(cdpUrl, { noDefaults: true, timeout: Number.isFinite(timeoutMs) ? Math.max(1, Math.round(timeoutMs)) : 0 });
    } catch (e) {
      // Playwright's message and call log repeat the URLs, with the desktop's token: drop it.
      if (e instanceof Error) {
        e.message = redactSecretsIn(e.message, cdpUrl);
        if (e.stack) e.stack = redactSecretsIn(e.stack, cdpUrl);
        const log = (e as { log?: unknown }).log;
        if (Array.isArray(log)) (e as { log?: unknown }).log = log.map((l) => (typeof l === 'string' ? redactSecretsIn(l, cdpUrl) : l));
      }
      throw e;
    }
    return new CdpConnection(browser);
  }

  private constructor(readonly browser: Browser) {
    browser.on('disconnected', () => {
      if (this.lost) return;
      this.lost = true;
      this.onLost?.();
    });
    this.syncContexts();
  }

  /** False once the browser connection dropped. */
  get alive(): boolean {
    return !this.lost && this.browser.isConnected();
  }

  /** Pages the check may look at: open, and not browser UI (see active-page.ts), oldest first. */
  candidates(): TrackedPage[] {
    this.syncContexts();
    const out: TrackedPage[] = [];
    for (const t of this.pages.values()) {
      if (!t.page.isClosed() && isCheckableUrl(t.page.url())) out.push(t);
    }
    return out;
  }

  /**
   * Evaluate `expression` in the page's main world (by value), within the budget. A JavaScript dialog
   * blocks evaluation until it closes, so an open dialog (or one opening meanwhile) answers `{ dialog: true }`.
   */
  async evaluate(t: TrackedPage, expression: string, awaitPromise: boolean, budget: Budget): Promise<Evaluated> {
    if (t.dialogs > 0) return DIALOG;
    let wake: (() => void) | undefined;
    const dialog = new Promise<typeof DIALOG>((resolve) => {
      wake = () => resolve(DIALOG);
      t.dialogWaiters.add(wake);
    });
    try {
      const session = await budget.race(Promise.race([this.session(t), dialog]));
      if (isDialog(session)) return DIALOG;
      const sent = session.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise, silent: true }).catch((e: unknown) => {
        throw classify(e);
      });
      const res = await budget.race(Promise.race([sent, dialog]));
      if (isDialog(res)) return DIALOG;
      if (res.exceptionDetails) {
        const d = res.exceptionDetails;
        return { exception: d.exception?.description ?? d.text };
      }
      return { value: res.result.value };
    } finally {
      if (wake) t.dialogWaiters.delete(wake);
    }
  }

  /** Resolve when the browser answers a trivial command (the connection is really up); rejects otherwise. */
  async ping(budget: Budget): Promise<void> {
    this.browserSession ??= this.browser.newBrowserCDPSession();
    const s = this.browserSession;
    try {
      await budget.race(s.then((bs) => bs.send('Browser.getVersion')));
    } catch (e) {
      if (this.browserSession === s) this.browserSession = null;
      throw e;
    }
  }

  /** Disconnect (the browser and its pages stay as they are). Never throws. */
  async close(): Promise<void> {
    this.lost = true;
    let t: NodeJS.Timeout | undefined;
    try {
      await Promise.race([this.browser.close(), new Promise<void>((r) => (t = setTimeout(r, 2000)))]);
    } catch {
      /* already disconnected */
    } finally {
      clearTimeout(t);
    }
  }

  /** The raw CDP session of a page (made on first use, then reused). */
  sessionOf(t: TrackedPage): Promise<CDPSession> {
    return this.session(t);
  }

  private session(t: TrackedPage): Promise<CDPSession> {
    if (t.session) return t.session;
    const p = t.page
      .context()
      .newCDPSession(t.page)
      .catch((e: unknown) => {
        if (t.session === p) t.session = null;
        throw classify(e);
      });
    t.session = p;
    return p;
  }

  private syncContexts(): void {
    for (const ctx of this.browser.contexts()) {
      if (this.contexts.has(ctx)) continue;
      this.contexts.add(ctx);
      ctx.on('page', (p) => this.track(p));
      ctx.on('close', () => this.contexts.delete(ctx));
      // A dialog listener keeps Playwright from auto-dismissing dialogs: the checker must not change the page.
      ctx.on('dialog', (d) => {
        const t = this.pageOf(d.page());
        if (!t) return;
        t.dialogs++;
        for (const w of [...t.dialogWaiters]) w();
      });
      ctx.on('dialogclosed', (d) => {
        const t = this.pageOf(d.page());
        if (t) t.dialogs = Math.max(0, t.dialogs - 1);
      });
      for (const p of ctx.pages()) this.track(p);
    }
  }

  private pageOf(page: Page | null): TrackedPage | undefined {
    if (!page) return undefined;
    this.track(page);
    return this.pages.get(page);
  }

  private track(page: Page): void {
    if (this.pages.has(page) || page.isClosed()) return;
    this.pages.set(page, { page, seq: this.nextSeq++, dialogs: 0, dialogWaiters: new Set(), session: null });
    this.changed = true;
    page.once('close', () => {
      const t = this.pages.get(page);
      this.pages.delete(page);
      if (this.cached === t) this.cached = null;
      this.changed = true;
      t?.session?.then((s) => s.detach()).catch(() => {});
    });
  }
}
