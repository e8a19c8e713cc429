/**
 * waitForPageReady(): start an agent on a ready task page, or say precisely why the page is not.
 *
 * Over one page WebSocket (page-socket.ts), events first and short polls as a fallback:
 * 1. find the page target (with `navigate`, first point it at the URL with `Page.navigate`);
 * 2. wait until the task's document has loaded (Page.loadEventFired / frameNavigated wake the wait)
 *    and shows something, within `loadTimeoutMs`. Along the way:
 *    - an HTTP status >= 400 for the main document → PAGE_ERR_HTTP_STATUS (url, status);
 *    - Chromium's own error page (`chrome-error://chromewebdata/`, while /json/list still lists the
 *      requested URL) → the navigation is issued again to read Chromium's `errorText`
 *      (net::ERR_CONNECTION_REFUSED, ERR_NAME_NOT_RESOLVED, ERR_SSL_PROTOCOL_ERROR…) →
 *      PAGE_ERR_UNREACHABLE (url, netError); if it now loads, the wait goes on;
 *    - still about:blank, still loading, or showing nothing when the timeout passes → PAGE_ERR_BLANK;
 * 3. wait until the DOM is quiet: no mutation for `quietMs` (a MutationObserver in the page, awaited
 *    in one evaluation), then two animation frames so the quiet DOM is painted; bounded by its own
 *    `settleTimeoutMs` → PAGE_ERR_NOT_SETTLED.
 * A JavaScript dialog opening on the page ends the wait at once (the page is ready: the dialog is
 * what the agent sees). CDP reports a dialog only when it opens after Page.enable: one the page opened
 * before the wait attached blocks every probe, and the wait ends PAGE_ERR_BLANK at the load timeout
 * (an infra error, retried; seen on a loaded machine with a page that calls alert() as it loads).
 * The page-verdict.ts rules decide; this file only drives CDP.
 */
import { channel } from 'node:diagnostics_channel';
import { VncuaError, isVncuaError } from '../errors.ts';
import { race, sleep, timeoutSignal } from '../cancel.ts';
import { checkPositiveMs } from './budget.ts';
import { blankError, httpStatusError, judgePage, notSettledError, PAGE_PROBE, unreachableError, type PageProbe } from './page-verdict.ts';
import { CdpCommandError, PageSocket, pageTargets, type CdpTarget } from './page-socket.ts';
import { checkCdpUrl } from './success.ts';

/** Options of waitForPageReady(). */
export interface PageReadyOptions {
  /** The task page's URL (absolute): named in every error, and told apart from about:blank. */
  url: string;
  /** Point the page at `url` first (Page.navigate), e.g. a remote desktop's browser; default false (it is opening it already). */
  navigate?: boolean;
  /**
   * With `navigate`: clear the page's history once the task's document has loaded
   * (Page.resetNavigationHistory), so Back does not reach the page shown before (a pooled desktop's
   * empty start page); default false.
   */
  resetHistory?: boolean;
  /**
   * With `navigate`: the page's socket, opened and prepared ahead (preparePage(); a pool's spare),
   * used instead of looking the page up, connecting and preparing it now: the wait starts at
   * Page.navigate. Closed at the end like a socket opened here. Ignored when its socket is closed.
   */
  prepared?: PreparedPage;
  signal?: AbortSignal;
  /** Time for the document to load and show something (default 20 000 ms; PAGE_ERR_BLANK after it). */
  loadTimeoutMs?: number;
  /** Time for the DOM to go quiet once loaded (default 5000 ms; PAGE_ERR_NOT_SETTLED after it). */
  settleTimeoutMs?: number;
  /** How long without a DOM mutation counts as quiet (default 100 ms). */
  quietMs?: number;
}

/** A page's socket made ready for a navigation ahead of it (preparePage()). */
export interface PreparedPage {
  socket: PageSocket;
  /** The mutation clock's script (Page.addScriptToEvaluateOnNewDocument), removed once the page is ready; undefined if it could not be installed. */
  clockId: string | undefined;
}

/** A ready page. */
export interface PageReady {
  /** `location.href` of the ready page. */
  href: string;
  /** The main document's HTTP status (0 when unknown: file:, data:, about:). */
  status: number;
  /** Milliseconds from the call until the page had loaded and showed something. */
  loadMs: number;
  /** Milliseconds spent waiting for the DOM to settle (quiet window and paint included). */
  settleMs: number;
  /** A JavaScript dialog was open (the wait ended there). */
  dialog: boolean;
}

export const DEFAULT_LOAD_TIMEOUT_MS = 20_000;
export const DEFAULT_SETTLE_TIMEOUT_MS = 5000;
export const DEFAULT_QUIET_MS = 100;
/** Longest wait between two looks at a loading page when no event comes. */
const POLL_MS = 100;
/** Extra time given to the settle evaluation over its in-page cap (a page frozen in a loop never answers). */
const SETTLE_SLACK_MS = 2000;
/** Attempts at Page.resetNavigationHistory before the page is handed over with its history as it is. */
const RESET_TRIES = 10;
/** The page events that mean "look again". */
const WAKE_EVENTS = ['Page.loadEventFired', 'Page.frameNavigated', 'Page.frameStoppedLoading', 'Page.domContentEventFired'];

const NAVIGATION_ERRORS = /Execution context was destroyed|Cannot find (default )?(execution )?context|Inspected target navigated|most likely because of a navigation/i;

/** Where the document-start observer (MUTATION_CLOCK) keeps the time of the page's last DOM mutation, and itself. */
const CLOCK = '__vncuaLastMutation';
const CLOCK_OBSERVER = '__vncuaMutationClock';
/** Animation frames the page has run since its last DOM mutation (counted by MUTATION_CLOCK). */
const FRAMES = '__vncuaFramesSinceMutation';

/**
 * Installed before a navigation we make (Page.addScriptToEvaluateOnNewDocument, so it runs before the
 * page's own scripts): records when the DOM last changed, from the document's first moment. The settle
 * wait then counts the quiet that already passed before it was evaluated, instead of starting its
 * window at zero: the same rule (no mutation for quietMs), without the wait that added nothing.
 */
const MUTATION_CLOCK = `(() => {
  const mark = () => { globalThis.${CLOCK} = performance.now(); globalThis.${FRAMES} = 0; };
  mark();
  const tick = () => { if (!globalThis.${CLOCK_OBSERVER}) return; globalThis.${FRAMES}++; requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  const obs = new MutationObserver(mark);
  obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  Object.defineProperty(globalThis, '${CLOCK_OBSERVER}', { value: obs, configurable: true, enumerable: false });
})()`;

/**
 * The in-page settle wait: resolves `{ quiet, content }` once no mutation came for quietMs (then two
 * frames), or quiet=false at maxMs. With the document-start clock, quiet time already elapsed counts,
 * and so do frames: when the page has run two animation frames since its last mutation (the quiet
 * DOM is painted already), the two frames are not waited for again.
 */
function settleScript(quietMs: number, maxMs: number): string {
  return `new Promise((resolve) => {
  const last = globalThis.${CLOCK};
  const t0 = performance.now();
  // How long the DOM has been quiet already (-1: no clock).
  const age = typeof last === 'number' ? t0 - last : -1;
  const initial = typeof last === 'number' ? Math.max(0, ${quietMs} - (t0 - last)) : ${quietMs};
  // Animation frames since the last mutation (the clock's count; a mutation seen here starts it again).
  let frames = typeof last === 'number' ? globalThis.${FRAMES} ?? 0 : 0;
  const frames0 = frames;
  const count = () => { if (ended) return; frames++; requestAnimationFrame(count); };
  try { globalThis.${CLOCK_OBSERVER}?.disconnect(); delete globalThis.${CLOCK_OBSERVER}; delete globalThis.${CLOCK}; delete globalThis.${FRAMES}; } catch {}
  let timer = 0;
  const obs = new MutationObserver(() => { frames = 0; clearTimeout(timer); timer = setTimeout(() => finish(true), ${quietMs}); });
  const cap = setTimeout(() => finish(false), ${maxMs});
  let ended = false;
  function finish(quiet) {
    if (ended) return;
    ended = true;
    obs.disconnect();
    clearTimeout(timer);
    clearTimeout(cap);
    const probe = ${PAGE_PROBE.replace(/\n\s*/g, ' ')};
    // The wait's own account (bench/pool-breakdown.ts): quiet so far when it began, what was left of the window, frames run, ms until quiet and until painted.
    const quietAt = performance.now() - t0;
    const account = { age, initial, frames0, quietAt };
    const done = () => { clearTimeout(fallback); resolve({ quiet, content: probe.content, ...account, paintedAt: performance.now() - t0 }); };
    // Two animation frames: the quiet DOM has been painted (a hidden page gets no frames: 100 ms at most).
    if (quiet && frames >= 2) return resolve({ quiet, content: probe.content, ...account, paintedAt: quietAt });
    const fallback = setTimeout(done, 100);
    requestAnimationFrame(() => requestAnimationFrame(done));
  }
  obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  requestAnimationFrame(count);
  timer = setTimeout(() => finish(true), initial);
})`;
}

/** One step of waitForPageReady, as published on PAGE_READY_STEPS. */
export interface PageReadyStep {
  url: string;
  /** socket, page-enable, clock, navigate, probe, history, settle-sent, settled. */
  step: string;
  /** performance.now() when the step was done. */
  t: number;
  /** probe: the verdict; settled: the settle wait's own account of the page (settleScript). */
  detail?: Record<string, unknown>;
}

/** Where waitForPageReady publishes its steps (for benches: bench/pool-breakdown.ts); nothing is built when nobody subscribes. */
export const PAGE_READY_STEPS = channel('vncua:page-ready');

function mark(url: string, step: string, detail?: Record<string, unknown>): void {
  if (PAGE_READY_STEPS.hasSubscribers) PAGE_READY_STEPS.publish({ url, step, t: performance.now(), ...(detail ? { detail } : {}) } satisfies PageReadyStep);
}

/** The target to watch: with `navigate`, the first page; else the one listing `url`, else one that left about:blank, else the first. */
function pickTarget(pages: CdpTarget[], url: string, navigate: boolean): CdpTarget | undefined {
  const usable = pages.filter((p) => p.webSocketDebuggerUrl);
  if (navigate) return usable[0];
  return usable.find((p) => p.url === url) ?? usable.find((p) => p.url && p.url !== 'about:blank') ?? usable[0];
}

/** Poll /json/list until the page target is there, and open its WebSocket. */
export async function openPage(cdpUrl: string, url: string, navigate: boolean, signal: AbortSignal): Promise<PageSocket> {
  for (;;) {
    try {
      const target = pickTarget(await pageTargets(cdpUrl, { signal }), url, navigate);
      if (target) return await PageSocket.open(target.webSocketDebuggerUrl!, signal);
    } catch (e) {
      if (signal.aborted) throw e;
      // not up yet: look again
    }
    await sleep(50, signal);
  }
}

/** A promise that resolves on the next wake event or after `ms`; cancel() drops the listeners. */
function nextWake(s: PageSocket, ms: number, signal: AbortSignal): { promise: Promise<void>; cancel(): void } {
  const offs: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  const cancel = () => {
    clearTimeout(timer);
    for (const off of offs.splice(0)) off();
  };
  const woke = new Promise<void>((resolve) => {
    for (const ev of WAKE_EVENTS) offs.push(s.on(ev, () => resolve()));
    timer = setTimeout(resolve, ms);
  });
  return { promise: race(woke, { signal }).finally(cancel), cancel };
}

/** Evaluate `expression` by value (awaiting a promise); rejects with CdpCommandError on a page exception. */
async function evaluate<T>(s: PageSocket, expression: string, signal: AbortSignal, awaitPromise = false): Promise<T> {
  const r = await s.send<{ result?: { value?: unknown }; exceptionDetails?: { text?: string; exception?: { description?: string } } }>(
    'Runtime.evaluate',
    { expression, returnByValue: true, awaitPromise },
    signal,
  );
  if (r.exceptionDetails) throw new CdpCommandError('Runtime.evaluate', r.exceptionDetails.exception?.description ?? r.exceptionDetails.text ?? 'exception');
  return r.result?.value as T;
}

/** True when `e` says the page navigated away under the evaluation (look again). */
function isNavigation(e: unknown): boolean {
  return e instanceof Error && NAVIGATION_ERRORS.test(e.message);
}

/**
 * Navigate to `url` with the Network domain on: Chromium's `errorText` for a failed navigation and
 * the main document's HTTP status, if a response came.
 */
async function navigate(s: PageSocket, url: string, signal: AbortSignal, networkOn = false): Promise<{ netError: string | null; status: number | null }> {
  let status: number | null = null;
  const off = s.on('Network.responseReceived', (p) => {
    const response = p.response as { status?: number } | undefined;
    if (p.type === 'Document' && typeof response?.status === 'number') status = response.status;
  });
  try {
    if (!networkOn) await s.send('Network.enable', {}, signal);
    const r = await s.send<{ errorText?: string }>('Page.navigate', { url }, signal);
    return { netError: r.errorText ? r.errorText : null, status };
  } finally {
    off();
    // Not awaited: right after a cross-process navigation its answer can take 20-70 ms (the new
    // renderer's network agent), and nothing here needs it; the status was read above.
    void s.send('Network.disable', {}, signal).catch(() => {});
  }
}

/** Bring the page to front and install the mutation clock for its next document; the clock's identifier, undefined if it could not be installed. */
async function beforeNavigate(s: PageSocket, signal: AbortSignal): Promise<string | undefined> {
  await s.send('Page.bringToFront', {}, signal).catch(() => {});
  return (await s.send<{ identifier: string }>('Page.addScriptToEvaluateOnNewDocument', { source: MUTATION_CLOCK }, signal).catch(() => null))?.identifier;
}

/**
 * Do ahead, on a page's socket (a pool's spare while it waits), what a navigating waitForPageReady
 * does before Page.navigate: the Page and Network domains on, the page brought to front, the
 * mutation clock installed for its next document. The wait given the result (`prepared`) then
 * starts at Page.navigate. The page's next document must be the task's (navigate nowhere else).
 */
export async function preparePage(socket: PageSocket, signal: AbortSignal): Promise<PreparedPage> {
  await socket.send('Page.enable', {}, signal);
  const clockId = await beforeNavigate(socket, signal);
  await socket.send('Network.enable', {}, signal);
  return { socket, clockId };
}

/** The URL Chromium's error page stands for (Page.getFrameTree's unreachableUrl), else `url`. */
async function unreachableUrl(s: PageSocket, url: string, signal: AbortSignal): Promise<string> {
  const tree = await s.send<{ frameTree?: { frame?: { unreachableUrl?: string } } }>('Page.getFrameTree', {}, signal).catch(() => null);
  return tree?.frameTree?.frame?.unreachableUrl || url;
}

/** Throw the error a navigation outcome means, if any. */
function throwIfFailed(url: string, r: { netError: string | null; status: number | null }): void {
  if (r.status !== null && r.status >= 400) throw httpStatusError(url, r.status);
  if (r.netError) throw unreachableError(url, r.netError);
}

/** Wait until the browser at `cdpUrl` shows `opts.url` loaded and settled (see the file comment); throws PAGE_ERR_* otherwise. */
export async function waitForPageReady(cdpUrl: string, opts: PageReadyOptions): Promise<PageReady> {
  checkCdpUrl(cdpUrl);
  checkPositiveMs(opts.loadTimeoutMs, 'loadTimeoutMs');
  checkPositiveMs(opts.settleTimeoutMs, 'settleTimeoutMs');
  checkPositiveMs(opts.quietMs, 'quietMs');
  const url = opts.url;
  const loadTimeoutMs = opts.loadTimeoutMs ?? DEFAULT_LOAD_TIMEOUT_MS;
  const settleTimeoutMs = opts.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS;
  const quietMs = opts.quietMs ?? DEFAULT_QUIET_MS;
  const user = opts.signal;
  const aborted = () => new VncuaError('PAGE_ERR_ABORTED', `waiting for the task page ${url} was cancelled through its AbortSignal`, { cause: user?.reason, details: { url } });
  if (user?.aborted) throw aborted();
  const t0 = performance.now();
  const loadSignal = timeoutSignal(user, loadTimeoutMs);
  let last: PageProbe | null = null;
  let s: PageSocket | undefined;
  let dialog = false;
  let historyReset = false;
  let clockId: string | undefined;
  let resetTries = 0;
  const dialogSeen = new AbortController();
  try {
    const prepared = opts.navigate && opts.prepared && !opts.prepared.socket.closed ? opts.prepared : undefined;
    s = prepared?.socket ?? (await openPage(cdpUrl, url, opts.navigate === true, loadSignal));
    const page = s;
    mark(url, 'socket');
    page.on('Page.javascriptDialogOpening', () => {
      dialog = true;
      dialogSeen.abort();
    });
    if (!prepared) await page.send('Page.enable', {}, loadSignal);
    mark(url, 'page-enable');
    if (opts.navigate) {
      // The mutation clock for the document we are about to load (removed again in finally).
      clockId = prepared ? prepared.clockId : await beforeNavigate(page, loadSignal);
      mark(url, 'clock');
      throwIfFailed(url, await navigate(page, url, AbortSignal.any([loadSignal, dialogSeen.signal]), prepared !== undefined));
      mark(url, 'navigate');
    }
    for (;;) {
      const step = AbortSignal.any([loadSignal, dialogSeen.signal]);
      const wake = nextWake(page, POLL_MS, step);
      wake.promise.catch(() => {});
      let probe: PageProbe;
      try {
        probe = await evaluate<PageProbe>(page, PAGE_PROBE, step);
      } catch (e) {
        if (!isNavigation(e)) throw e;
        await wake.promise;
        continue;
      }
      last = probe;
      const verdict = judgePage(probe, url, opts.navigate === true);
      mark(url, 'probe', { verdict: verdict.kind });
      if (verdict.kind === 'http-status') throw httpStatusError(url, verdict.status);
      if (verdict.kind === 'error-page') {
        wake.cancel();
        throwIfFailed(url, await navigate(page, await unreachableUrl(page, url, step), step));
        continue;
      }
      if (verdict.kind !== 'loaded') {
        await wake.promise;
        continue;
      }
      if (opts.resetHistory && opts.navigate && !historyReset && resetTries++ < RESET_TRIES) {
        // Once the task's document is there (right after Page.navigate, a cross-process navigation can
        // still answer "Not attached to an active page"): the history becomes [the page shown now].
        try {
          await page.send('Page.resetNavigationHistory', {}, step);
          historyReset = true;
          mark(url, 'history');
        } catch (e) {
          if (step.aborted) throw e;
          await wake.promise;
          continue;
        }
      }
      wake.cancel();
      const loadMs = performance.now() - t0;
      const t1 = performance.now();
      const settleSignal = AbortSignal.any([timeoutSignal(user, settleTimeoutMs + SETTLE_SLACK_MS), dialogSeen.signal]);
      let settled: { quiet: boolean; content: boolean };
      try {
        mark(url, 'settle-sent');
        settled = await evaluate(page, settleScript(quietMs, settleTimeoutMs), settleSignal, true);
        mark(url, 'settled', settled);
      } catch (e) {
        if (isNavigation(e)) continue;
        if (settleSignal.aborted && !user?.aborted && !dialog) throw notSettledError(url, settleTimeoutMs, quietMs);
        throw e;
      }
      if (!settled.quiet) throw notSettledError(url, settleTimeoutMs, quietMs);
      if (!settled.content && url !== 'about:blank') continue;
      return { href: probe.href, status: probe.status, loadMs: Math.round(loadMs), settleMs: Math.round(performance.now() - t1), dialog: false };
    }
  } catch (e) {
    if (user?.aborted) throw aborted();
    if (dialog)
      return { href: last && last.href !== 'about:blank' ? last.href : url, status: last?.status ?? 0, loadMs: Math.round(performance.now() - t0), settleMs: 0, dialog: true };
    if (isVncuaError(e)) throw e;
    if (loadSignal.aborted) {
      if (!s) {
        throw new VncuaError('PAGE_ERR_NO_PAGE', `the browser at ${cdpUrl} did not list a page to open ${url} in within ${loadTimeoutMs} ms (Chromium did not start, or crashed)`, {
          cause: e,
          details: { url, cdpUrl, timeoutMs: loadTimeoutMs },
        });
      }
      throw blankError(url, loadTimeoutMs, last);
    }
    throw new VncuaError('PAGE_ERR_NO_PAGE', `lost the browser's page while waiting for ${url}: ${(e as Error)?.message ?? String(e)} (Chromium crashed, or the page was closed)`, {
      cause: e,
      details: { url, cdpUrl },
    });
  } finally {
    // Later documents (the agent's own navigations) get no clock: removed before the socket closes,
    // without holding up the answer.
    const sock = s;
    if (clockId && sock && !sock.closed) {
      void sock
        .send('Page.removeScriptToEvaluateOnNewDocument', { identifier: clockId }, AbortSignal.timeout(2000))
        .catch(() => {})
        .finally(() => sock.close());
    } else sock?.close();
    if (opts.prepared && opts.prepared.socket !== sock) opts.prepared.socket.close();
  }
}
