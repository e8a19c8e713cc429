/**
 * The explorer's one CDP session to the browser's active page, held open for the run (re-opened only when the page
 * target changes or the socket closes): the per-step scan (TARGETS_PROBE), the navigation history, and the way out of
 * a frozen page (Runtime.terminateExecution, then Page.reload). Every call has a short timeout, so a page whose main
 * thread loops forever never hangs the loop.
 */
import { timeoutSignal } from '../../harness/cancel.ts';
import { PageSocket, pageTargets } from '../../harness/cdp/page-socket.ts';
import { TARGETS_PROBE, parseScan, type PageScan } from './targets.ts';

/** How long one CDP call of the explorer may take. */
export const CDP_CALL_TIMEOUT_MS = 1500;

/** What a scan found: the page, or why not (no page target, a frozen page, an answer of the wrong shape). */
export type ScanResult = { ok: true; scan: PageScan } | { ok: false; why: 'no_page' | 'frozen' | 'bad_answer' | 'error'; message: string };

/** The active page over CDP (see the file comment). */
export class ExplorerPage {
  #socket: PageSocket | null = null;
  #targetId = '';
  #closed = false;

  constructor(
    readonly cdpUrl: string,
    readonly timeoutMs = CDP_CALL_TIMEOUT_MS,
  ) {}

  /** The socket of the active page (the first page target), opened or reused. */
  async #page(signal: AbortSignal): Promise<PageSocket | null> {
    if (this.#closed) return null;
    const targets = await pageTargets(this.cdpUrl, { signal, timeoutMs: this.timeoutMs });
    const t = targets.find((p) => p.webSocketDebuggerUrl && (p.url.startsWith('http') || p.url.startsWith('file:'))) ?? targets.find((p) => p.webSocketDebuggerUrl);
    if (!t?.webSocketDebuggerUrl) return null;
    if (this.#socket && !this.#socket.closed && this.#targetId === t.id) return this.#socket;
    this.#socket?.close();
    this.#socket = null;
    this.#socket = await PageSocket.open(t.webSocketDebuggerUrl, timeoutSignal(signal, this.timeoutMs));
    this.#targetId = t.id;
    return this.#socket;
  }

  /** One Runtime.evaluate of TARGETS_PROBE on the active page; never throws (but rethrows the run's cancellation). */
  async scan(screen: { width: number; height: number }, signal: AbortSignal): Promise<ScanResult> {
    try {
      const s = await this.#page(signal);
      if (!s) return { ok: false, why: 'no_page', message: 'no page target' };
      const r = await s.send<{ result?: { value?: unknown }; exceptionDetails?: { text?: string } }>(
        'Runtime.evaluate',
        { expression: TARGETS_PROBE, returnByValue: true, silent: true },
        timeoutSignal(signal, this.timeoutMs),
      );
      if (r.exceptionDetails) return { ok: false, why: 'error', message: r.exceptionDetails.text ?? 'exception' };
      const scan = parseScan(r.result?.value, screen);
      return scan ? { ok: true, scan } : { ok: false, why: 'bad_answer', message: 'the probe answered something else' };
    } catch (e) {
      if (signal.aborted) throw signal.reason;
      const timedOut = e instanceof Error && (e.name === 'TimeoutError' || /timed? ?out/i.test(e.message));
      return { ok: false, why: timedOut ? 'frozen' : 'error', message: e instanceof Error ? e.message : String(e) };
    }
  }

  /** Where the page stands in its history: the current index and the previous entry's URL (null when unknown). */
  async history(signal: AbortSignal): Promise<{ index: number; previousUrl: string | null } | null> {
    try {
      const s = await this.#page(signal);
      if (!s) return null;
      const h = await s.send<{ currentIndex: number; entries: Array<{ url: string }> }>('Page.getNavigationHistory', {}, timeoutSignal(signal, this.timeoutMs));
      return { index: h.currentIndex, previousUrl: h.entries[h.currentIndex - 1]?.url ?? null };
    } catch {
      if (signal.aborted) throw signal.reason;
      return null;
    }
  }

  /** Stop whatever script runs (a frozen main thread), then reload the page; false when CDP could not do it. */
  async reload(signal: AbortSignal): Promise<boolean> {
    try {
      const s = await this.#page(signal);
      if (!s) return false;
      s.post('Runtime.terminateExecution', {});
      await s.send('Page.reload', { ignoreCache: false }, timeoutSignal(signal, this.timeoutMs));
      return true;
    } catch {
      if (signal.aborted) throw signal.reason;
      return false;
    }
  }

  /** Close the socket (the page stays). */
  close(): void {
    this.#closed = true;
    this.#socket?.close();
    this.#socket = null;
  }
}
