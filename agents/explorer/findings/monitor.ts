/**
 * `FindingsMonitor`: the explorer's observer that finds problems (agents/explorer/types.ts ExplorerObserver).
 * It holds one CDP page socket per page target for the whole run (harness/cdp/page-socket.ts), new tabs and popups
 * included (looked for after every step), and turns what it hears into findings (classify.ts says which events and
 * statuses count): console errors, uncaught exceptions, failed requests, HTTP errors, blocked navigations (the
 * navigation guard fails them with net::ERR_BLOCKED_BY_CLIENT) and renderer crashes. After every step it also probes:
 * - frozen: `Runtime.evaluate` of a trivial expression must answer within `probeTimeoutMs` (default 1500), twice in a
 *   row; a main thread that does not answer for that long cannot repaint anything the page changes either. The
 *   finding's screenshot shows the frozen screen; then `Runtime.terminateExecution` stops the script, so the run can
 *   go on (the loop's unstick may still reload).
 * - blank_screen: once the visible page's document is complete, a small CDP capture of it is (nearly) one colour
 *   (blank.ts), still after `blankRecheckMs`; checked when the frame hash or the URL changed.
 * Findings seen during a step are stamped with that step and share one screenshot (ctx.screenshot); repeats of the
 * same problem (same kind and text, or same URL and status) are counted on the first finding (`count`, `lastStep`).
 */
import sharp from 'sharp';
import { sleep, timeoutSignal } from '../../../harness/cancel.ts';
import { CdpCommandError, pageTargets, PageSocket, type CdpTarget } from '../../../harness/cdp/page-socket.ts';
import { isCheckableUrl } from '../../../harness/cdp/active-page.ts';
import { VncuaError } from '../../../harness/errors.ts';
import type { ExplorerObserver, ExplorerStep, ExplorerSummary, Finding, ObserverContext } from '../types.ts';
import { isBlankFrame } from './blank.ts';
import { fromConsoleApi, fromCrash, fromException, fromLoadingFailed, fromLogEntry, fromResponse, toFinding, type RawFinding } from './classify.ts';

/** What a FindingsMonitor takes. */
export interface FindingsMonitorOptions {
  /** How long the responsiveness probe may take before the page counts as not answering (default 1500 ms). */
  probeTimeoutMs?: number;
  /** Look for blank screens (default true). */
  blankScreens?: boolean;
  /** A blank page must still be blank this long after (default 500 ms). */
  blankRecheckMs?: number;
  /** How long attaching to the browser may take in start() (default 10 000 ms). */
  attachTimeoutMs?: number;
}

/** Requests remembered per page for naming failed ones (the oldest are dropped). */
const MAX_REQUESTS = 2000;

interface WatchedPage {
  id: string;
  socket: PageSocket;
  url: string | null;
  requests: Map<string, { url: string; method?: string }>;
  crashed: boolean;
  /** The frame hash and URL last checked for blankness. */
  blankChecked: string | null;
  off: Array<() => void>;
}

type ProbeResult = { ok: true; readyState: string; visible: boolean; width: number; height: number } | { ok: false; why: 'timeout' | 'gone' | 'error' };

/** The findings observer (see the file comment). */
export class FindingsMonitor implements ExplorerObserver {
  readonly #opts: Required<FindingsMonitorOptions>;
  #cdpUrl: string | null = null;
  readonly #pages = new Map<string, WatchedPage>();
  #pending: Array<RawFinding & { count: number }> = [];
  readonly #byKey = new Map<string, Finding>();
  readonly #all: Finding[] = [];
  #fresh: Finding[] = [];
  #step = 0;
  /** True while afterStep runs: what is heard then belongs to #step; otherwise to the step in progress (#step + 1). */
  #stepping = false;
  #closed = false;

  constructor(opts: FindingsMonitorOptions = {}) {
    this.#opts = {
      probeTimeoutMs: opts.probeTimeoutMs ?? 1500,
      blankScreens: opts.blankScreens ?? true,
      blankRecheckMs: opts.blankRecheckMs ?? 500,
      attachTimeoutMs: opts.attachTimeoutMs ?? 10_000,
    };
  }

  /** Every finding so far, in the order first seen (the same objects takeFindings handed out; counts keep growing). */
  get findings(): readonly Finding[] {
    return this.#all;
  }

  /** Attach to every page of the browser (EXPLORER_ERR_FINDINGS_ATTACH when the browser does not answer); without CDP, only the step stamps run. */
  async start(ctx: ObserverContext): Promise<void> {
    this.#cdpUrl = ctx.cdpUrl;
    if (!ctx.cdpUrl) return;
    const signal = timeoutSignal(ctx.signal, this.#opts.attachTimeoutMs);
    try {
      await this.#discover(signal, true);
    } catch (e) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      throw new VncuaError(
        'EXPLORER_ERR_FINDINGS_ATTACH',
        `The findings monitor could not attach to the browser over CDP within ${this.#opts.attachTimeoutMs} ms (${e instanceof Error ? e.message : String(e)}); check that the desktop's browser is up.`,
        { cause: e },
      );
    }
    // A round trip to each page, so events the enable calls replayed (console messages of the first load) are in.
    await Promise.all([...this.#pages.values()].map((p) => this.#probe(p, ctx.signal)));
    await this.#stamp(0, ctx);
  }

  /** After each step: new pages, the frozen and blank probes, then stamp what was seen with the step. */
  async afterStep(step: ExplorerStep, ctx: ObserverContext): Promise<void> {
    this.#step = step.step;
    this.#stepping = true;
    try {
      await this.#afterStep(step, ctx);
    } finally {
      this.#stepping = false;
    }
  }

  async #afterStep(step: ExplorerStep, ctx: ObserverContext): Promise<void> {
    if (this.#cdpUrl && !this.#closed) {
      try {
        await this.#discover(timeoutSignal(ctx.signal, 2000), false);
      } catch {
        /* the browser's /json endpoint did not answer: the pages already watched are still watched */
      }
      for (const page of [...this.#pages.values()]) {
        if (ctx.signal.aborted) break;
        await this.#checkPage(page, step, ctx);
      }
    }
    await this.#stamp(step.step, ctx);
  }

  /** Findings first seen since the last call. */
  takeFindings(): Finding[] {
    const out = this.#fresh;
    this.#fresh = [];
    return out;
  }

  /** Stamp what is left with the last step, then detach. */
  async finish(_summary: ExplorerSummary, ctx: ObserverContext): Promise<void> {
    try {
      await this.#stamp(this.#step, ctx);
    } finally {
      this.close();
    }
  }

  /** Detach from every page (idempotent, never throws). */
  close(): void {
    this.#closed = true;
    for (const p of this.#pages.values()) this.#drop(p);
  }

  #record(raw: RawFinding | null): void {
    if (!raw || this.#closed) return;
    const known = this.#byKey.get(raw.key);
    if (known) {
      known.count = (known.count ?? 1) + 1;
      known.lastStep = this.#stepping ? this.#step : this.#step + 1;
      return;
    }
    const pending = this.#pending.find((p) => p.key === raw.key);
    if (pending) pending.count++;
    else this.#pending.push({ ...raw, count: 1 });
  }

  /** Turn pending raw findings into findings of `step`, with one screenshot for all of them. */
  async #stamp(step: number, ctx: ObserverContext): Promise<void> {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    this.#pending = [];
    let shot: string | undefined;
    try {
      shot = await ctx.screenshot(`finding-step-${String(step).padStart(3, '0')}-${batch[0]!.kind}`);
    } catch {
      /* no screenshot (the screen is gone): the findings still count */
    }
    for (const raw of batch) {
      const f = toFinding(raw, step);
      if (shot) f.screenshot = shot;
      if (raw.count > 1) f.count = raw.count;
      this.#byKey.set(raw.key, f);
      this.#all.push(f);
      this.#fresh.push(f);
    }
  }

  /** Attach to page targets not watched yet (and forget closed ones). */
  async #discover(signal: AbortSignal, strict: boolean): Promise<void> {
    const targets = await pageTargets(this.#cdpUrl!, { signal });
    const live = new Set(targets.map((t) => t.id));
    for (const [id, p] of this.#pages) if (!live.has(id) || p.socket.closed) this.#drop(p);
    for (const t of targets) {
      if (this.#pages.has(t.id) || !t.webSocketDebuggerUrl || !isCheckableUrl(t.url)) continue;
      try {
        await this.#attach(t, signal);
      } catch (e) {
        if (strict) throw e;
      }
    }
  }

  async #attach(t: CdpTarget, signal: AbortSignal): Promise<void> {
    const socket = await PageSocket.open(t.webSocketDebuggerUrl!, signal);
    const page: WatchedPage = { id: t.id, socket, url: t.url || null, requests: new Map(), crashed: false, blankChecked: null, off: [] };
    this.#pages.set(t.id, page);
    const on = (method: string, f: (p: Record<string, unknown>) => void) => page.off.push(socket.on(method, f));
    on('Runtime.consoleAPICalled', (p) => this.#record(fromConsoleApi(p, page.url)));
    on('Log.entryAdded', (p) => this.#record(fromLogEntry(p, page.url)));
    on('Runtime.exceptionThrown', (p) => this.#record(fromException(p, page.url)));
    on('Network.requestWillBeSent', (p) => {
      const r = (p.request ?? {}) as { url?: string; method?: string };
      if (page.requests.size >= MAX_REQUESTS) page.requests.delete(page.requests.keys().next().value!);
      page.requests.set(String(p.requestId), { url: r.url ?? '', method: r.method });
    });
    on('Network.loadingFailed', (p) => this.#record(fromLoadingFailed(p, page.requests.get(String(p.requestId)), page.url)));
    on('Network.responseReceived', (p) => this.#record(fromResponse(p, page.url)));
    on('Page.frameNavigated', (p) => {
      const f = (p.frame ?? {}) as { parentId?: string; url?: string; urlFragment?: string };
      if (!f.parentId && f.url) page.url = f.url + (f.urlFragment ?? '');
    });
    on('Page.navigatedWithinDocument', (p) => {
      if (typeof p.url === 'string' && p.frameId !== undefined) page.url = p.url;
    });
    on('Inspector.targetCrashed', () => {
      page.crashed = true;
      this.#record(fromCrash(page.url));
    });
    on('Inspector.targetReloadedAfterCrash', () => {
      page.crashed = false;
    });
    socket.onClose(() => this.#pages.get(t.id) === page && this.#drop(page));
    await Promise.all(['Inspector.enable', 'Page.enable', 'Runtime.enable', 'Log.enable', 'Network.enable'].map((m) => socket.send(m, {}, signal)));
  }

  #drop(p: WatchedPage): void {
    for (const off of p.off) off();
    p.off = [];
    p.socket.close();
    if (this.#pages.get(p.id) === p) this.#pages.delete(p.id);
  }

  /** One responsiveness probe: the document's state and viewport, or why there was no answer. */
  async #probe(p: WatchedPage, signal: AbortSignal): Promise<ProbeResult> {
    if (p.socket.closed) return { ok: false, why: 'gone' };
    try {
      const r = await p.socket.send<{ result?: { value?: unknown } }>(
        'Runtime.evaluate',
        { expression: '[document.readyState, document.visibilityState, innerWidth, innerHeight]', returnByValue: true, silent: true },
        timeoutSignal(signal, this.#opts.probeTimeoutMs),
      );
      const [readyState, visibility, width, height] = (Array.isArray(r.result?.value) ? r.result.value : []) as [string, string, number, number];
      return { ok: true, readyState, visible: visibility === 'visible', width, height };
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      if (p.socket.closed) return { ok: false, why: 'gone' };
      return { ok: false, why: e instanceof CdpCommandError ? 'error' : 'timeout' };
    }
  }

  async #checkPage(p: WatchedPage, step: ExplorerStep, ctx: ObserverContext): Promise<void> {
    if (p.crashed) return;
    let r = await this.#probe(p, ctx.signal);
    if (!r.ok && r.why === 'timeout' && !p.crashed) {
      r = await this.#probe(p, ctx.signal);
      if (!r.ok && r.why === 'timeout' && !p.crashed) {
        await this.#frozen(p, step, ctx);
        return;
      }
    }
    if (!r.ok || !this.#opts.blankScreens || !r.visible || r.readyState !== 'complete' || !(r.width > 0 && r.height > 0)) return;
    const checked = `${step.frameHash}|${p.url}`;
    if (p.blankChecked === checked) return;
    p.blankChecked = checked;
    const first = await this.#blank(p, r, ctx.signal);
    if (!first?.blank) return;
    await sleep(this.#opts.blankRecheckMs, ctx.signal);
    const again = await this.#blank(p, r, ctx.signal);
    if (!again?.blank) return;
    this.#record({
      kind: 'blank_screen',
      key: `blank|${p.url ?? ''}`,
      url: p.url,
      message: `the page is blank (${Math.round(again.share * 1000) / 10}% of it ${again.colour}) after it loaded`,
      excerpt: `document.readyState complete, viewport ${r.width}x${r.height}, one colour ${again.colour} over ${(again.share * 100).toFixed(1)}% of the page`,
    });
  }

  /** Capture the page at half scale and judge it (null: no capture). */
  async #blank(p: WatchedPage, r: Extract<ProbeResult, { ok: true }>, signal: AbortSignal) {
    try {
      const shot = await p.socket.send<{ data: string }>(
        'Page.captureScreenshot',
        { format: 'png', clip: { x: 0, y: 0, width: r.width, height: r.height, scale: 0.5 } },
        timeoutSignal(signal, 3000),
      );
      const { data, info } = await sharp(Buffer.from(shot.data, 'base64')).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      return isBlankFrame({ width: info.width, height: info.height, data, channels: 3 });
    } catch {
      if (signal.aborted) throw signal.reason;
      return null;
    }
  }

  /** Record a frozen page (screenshot of the frozen screen first), then stop its script and wait for it to answer again. */
  async #frozen(p: WatchedPage, step: ExplorerStep, ctx: ObserverContext): Promise<void> {
    const waited = 2 * this.#opts.probeTimeoutMs;
    this.#record({
      kind: 'frozen',
      key: `frozen|${p.url ?? ''}`,
      url: p.url,
      message: `the page froze: its main thread did not answer for ${waited} ms after step ${step.step}${step.target ? ` (${step.target.kind} "${step.target.label}")` : ''}`,
      excerpt: `Runtime.evaluate did not answer within ${this.#opts.probeTimeoutMs} ms, twice; ${step.progress ? 'the screen changed after the step' : 'the screen did not change after the step'}; the script was stopped with Runtime.terminateExecution`,
    });
    await this.#stamp(step.step, ctx);
    try {
      await p.socket.send('Runtime.terminateExecution', {}, timeoutSignal(ctx.signal, 3000));
    } catch {
      /* the page may have recovered (or gone) meanwhile */
    }
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && !ctx.signal.aborted) {
      const r = await this.#probe(p, ctx.signal);
      if (r.ok || r.why === 'gone') return;
    }
  }
}
