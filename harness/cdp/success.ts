/**
 * The benchmark success check: after each agent action, does the page the user sees show the
 * success sentinel? One persistent CDP connection, one small `Runtime.evaluate` per check.
 *
 * Answers:
 * - `true` / `false` — the active page does / does not satisfy the sentinel. A page that is
 *   mid-navigation is retried once after 50 ms and is `false` if it still has no document; a page
 *   showing a JavaScript dialog is `false` (the checker never touches dialogs); no web page at all is `false`.
 * - `null` — no answer from CDP: the endpoint is unreachable, the connection dropped and could not
 *   be re-made, or nothing answered within `timeoutMs` (e.g. a page frozen in a loop). `lastFailure` says which.
 * - throws CDP_ERR_BAD_SENTINEL when the page rejects the sentinel (invalid selector, an expression
 *   that throws or yields a non-boolean), CDP_ERR_ABORTED when the signal fires, CDP_ERR_CLOSED after close().
 *
 * Which page is "active": see active-page.ts. The pick is cached; it is redone when a page opens or
 * closes, or when the cached page is not visible-and-focused while other pages exist.
 */
import type { CDPSession } from 'playwright-core';
import { VncuaError, isVncuaError } from '../errors.ts';
import { redactUrl } from '../redact.ts';
import { pickActive, type PageView } from './active-page.ts';
import { type Budget, BudgetExpired, checkPositiveMs, openBudget, type CheckOptions } from './budget.ts';
import { CdpConnection, ProbeError, type TrackedPage } from './connection.ts';
import { STATE_PROBE, compileSentinel, decodeProbe, type Probe, type ProbeEvidence, type ProbeResult, type Sentinel } from './sentinel.ts';

export type { Sentinel, ProbeEvidence, SentinelRule } from './sentinel.ts';
export type { CheckOptions } from './budget.ts';

/** Options of a SuccessChecker. */
export interface SuccessCheckerOptions {
  /** How long one connection attempt may take (default 5000 ms); a check never waits longer than its own timeout. */
  connectTimeoutMs?: number;
  /** Default `timeoutMs` of each check (default 5000 ms). */
  timeoutMs?: number;
}

/** Why the last check returned null. */
export interface CheckFailure {
  /** 'unreachable': could not connect (or reconnect); 'timeout': no answer within the check's timeout. */
  readonly reason: 'unreachable' | 'timeout';
  /** The underlying error, when there was one. */
  readonly error?: unknown;
}

/** A check's answer with what it saw: `evidence` is set when `ok` is true. */
export interface CheckAnswer {
  /** As check() answers: true, false, or null (no answer). */
  readonly ok: boolean | null;
  /** The rule, pattern, matching snippet and URL, when `ok` is true. */
  readonly evidence: ProbeEvidence | null;
}

const NO: CheckAnswer = Object.freeze({ ok: false, evidence: null });
const NONE: CheckAnswer = Object.freeze({ ok: null, evidence: null });

/** Delay before the one retry of a check that hit a navigation in flight. */
const NAVIGATION_RETRY_MS = 50;
const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/** Throw CDP_ERR_BAD_URL unless `url` is an http(s):// CDP endpoint or a ws(s):// browser URL. */
export function checkCdpUrl(url: string): void {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  // Messages show scheme, host and port only: the path may hold a desktop's token.
  if (!u || !['http:', 'https:', 'ws:', 'wss:'].includes(u.protocol) || u.hostname === '') {
    throw new VncuaError(
      'CDP_ERR_BAD_URL',
      `CDP URL ${redactUrl(url)} is not http(s)://host:port[/token/] (a desktop's cdpUrl, or a --remote-debugging-port endpoint) or a ws(s):// browser URL`,
      { details: { url: redactUrl(url) } },
    );
  }
  if (u.username || u.password) {
    throw new VncuaError(
      'CDP_ERR_BAD_URL',
      `CDP URL ${redactUrl(url)} holds credentials (user:password@), which are refused so they never end up in logs; CDP endpoints take none`,
      { details: { url: redactUrl(url) } },
    );
  }
}

/** Checks a success sentinel on the active page over one persistent CDP connection. */
export class SuccessChecker {
  /** Why the last check returned null (null after a check that answered). */
  lastFailure: CheckFailure | null = null;

  private readonly probe: Probe;
  private readonly connectTimeoutMs: number;
  private readonly timeoutMs: number;
  private conn: CdpConnection | null = null;
  private connecting: Promise<CdpConnection> | null = null;
  private closed = false;

  /** Validates the URL (CDP_ERR_BAD_URL), the sentinel (CDP_ERR_BAD_SENTINEL) and options (CDP_ERR_BAD_ARGUMENT); connects lazily. */
  constructor(
    readonly cdpUrl: string,
    readonly sentinel: Sentinel,
    options: SuccessCheckerOptions = {},
  ) {
    checkCdpUrl(cdpUrl);
    checkPositiveMs(options.connectTimeoutMs, 'connectTimeoutMs');
    checkPositiveMs(options.timeoutMs, 'timeoutMs');
    this.probe = compileSentinel(sentinel);
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Does the active page show the sentinel? `null` when CDP gave no answer (see the file comment). */
  async check(opts: CheckOptions = {}): Promise<boolean | null> {
    return (await this.inspect(opts)).ok;
  }

  /** check() with its evidence: what matched and where (the same single round trip). */
  async inspect(opts: CheckOptions = {}): Promise<CheckAnswer> {
    if (this.closed) throw new VncuaError('CDP_ERR_CLOSED', 'this SuccessChecker was closed; create a new one');
    const budget = openBudget(opts, this.timeoutMs);
    let reconnected = false;
    let repicked = false;
    let navigationRetried = false;
    try {
      for (;;) {
        let conn: CdpConnection;
        try {
          conn = await budget.race(this.connection());
        } catch (e) {
          if (isVncuaError(e)) throw e;
          return this.fail(e instanceof BudgetExpired ? 'timeout' : 'unreachable', e);
        }
        try {
          const answer = await this.checkOn(conn, budget);
          this.lastFailure = null;
          return answer;
        } catch (e) {
          if (isVncuaError(e)) throw e;
          if (e instanceof BudgetExpired) return this.fail('timeout', e);
          if (e instanceof ProbeError && e.kind === 'navigation') {
            if (navigationRetried) {
              this.lastFailure = null;
              return NO;
            }
            navigationRetried = true;
            await budget.sleep(NAVIGATION_RETRY_MS);
            continue;
          }
          // The page or the connection is gone: tell which with a ping.
          if (!(await this.connectionUp(conn, budget))) {
            this.drop(conn);
            if (reconnected) return this.fail('unreachable', e);
            reconnected = true;
            continue;
          }
          conn.changed = true;
          if (repicked) {
            this.lastFailure = null;
            return NO;
          }
          repicked = true;
        }
      }
    } catch (e) {
      if (e instanceof BudgetExpired) return this.fail('timeout', e);
      throw e;
    } finally {
      budget.dispose();
    }
  }

  /** The URL of the active page (the one checks probe), or null when CDP gives no answer. */
  async activeUrl(opts: CheckOptions = {}): Promise<string | null> {
    return this.withActivePage(opts, async (active) => active.page.url());
  }

  /** The raw CDP session of the active page (the one checks probe), or null when CDP gives no answer or there is no page. */
  async activeSession(opts: CheckOptions = {}): Promise<CDPSession | null> {
    return this.withActivePage(opts, (active, conn, budget) => budget.race(conn.sessionOf(active)));
  }

  /** `fn` of the active page within the check budget; null when there is no page or CDP gives no answer. */
  private async withActivePage<T>(opts: CheckOptions, fn: (active: TrackedPage, conn: CdpConnection, budget: Budget) => Promise<T>): Promise<T | null> {
    if (this.closed) return null;
    const budget = openBudget(opts, this.timeoutMs);
    try {
      const conn = await budget.race(this.connection());
      const candidates = conn.candidates();
      if (candidates.length === 0) return null;
      const cached = conn.cached;
      const active = cached && !conn.changed && candidates.includes(cached) ? cached : await this.pick(conn, candidates, budget);
      return await fn(active, conn, budget);
    } catch {
      return null;
    } finally {
      budget.dispose();
    }
  }

  /** Disconnect (the browser and its pages are left as they are). Later checks throw CDP_ERR_CLOSED. */
  async close(): Promise<void> {
    this.closed = true;
    const conn = this.conn;
    this.conn = null;
    if (conn) await conn.close();
    // A connection still being made is closed as soon as it completes (see connection()).
  }

  private fail(reason: CheckFailure['reason'], error: unknown): CheckAnswer {
    this.lastFailure = { reason, error };
    return NONE;
  }

  private async connectionUp(conn: CdpConnection, budget: Budget): Promise<boolean> {
    if (!conn.alive) return false;
    try {
      await conn.ping(budget);
      return true;
    } catch (e) {
      if (e instanceof BudgetExpired || isVncuaError(e)) throw e;
      return false;
    }
  }

  /** The live connection, or the one being made (shared by concurrent checks). */
  private connection(): Promise<CdpConnection> {
    if (this.closed) return Promise.reject(new VncuaError('CDP_ERR_CLOSED', 'this SuccessChecker was closed during the check'));
    if (this.conn?.alive) return Promise.resolve(this.conn);
    if (this.conn) this.drop(this.conn);
    if (!this.connecting) {
      const attempt = CdpConnection.open(this.cdpUrl, this.connectTimeoutMs).then(
        (c) => {
          if (this.connecting === attempt) this.connecting = null;
          if (this.closed) {
            void c.close();
            throw new VncuaError('CDP_ERR_CLOSED', 'this SuccessChecker was closed while connecting');
          }
          this.conn = c;
          c.onLost = () => {
            if (this.conn === c) this.conn = null;
          };
          return c;
        },
        (e: unknown) => {
          if (this.connecting === attempt) this.connecting = null;
          throw e;
        },
      );
      attempt.catch(() => {});
      this.connecting = attempt;
    }
    return this.connecting;
  }

  private drop(conn: CdpConnection): void {
    if (this.conn === conn) this.conn = null;
    void conn.close();
  }

  private async checkOn(conn: CdpConnection, budget: Budget): Promise<CheckAnswer> {
    const candidates = conn.candidates();
    if (candidates.length === 0) return NO;
    const cached = conn.cached;
    if (cached && !conn.changed && candidates.includes(cached)) {
      const r = await this.probeOn(conn, cached, budget);
      if (candidates.length === 1 || (r.visible && r.focused)) return answerOf(r);
    }
    const active = await this.pick(conn, candidates, budget);
    return answerOf(await this.probeOn(conn, active, budget));
  }

  /** Rank every candidate by visibility and focus (one parallel round trip) and cache the winner. */
  private async pick(conn: CdpConnection, candidates: TrackedPage[], budget: Budget): Promise<TrackedPage> {
    conn.changed = false;
    type View = PageView & { t: TrackedPage };
    const views = await Promise.all(
      candidates.map(async (t): Promise<View | null> => {
        if (candidates.length === 1 || t.dialogs > 0) return { t, seq: t.seq, visible: true, focused: true };
        try {
          const r = await conn.evaluate(t, STATE_PROBE, false, budget);
          if ('dialog' in r) return { t, seq: t.seq, visible: true, focused: true };
          const s = 'value' in r && Array.isArray(r.value) ? r.value : null;
          // No readable state: the page is between documents; assume visible, not focused.
          return { t, seq: t.seq, visible: s ? s[0] === true : true, focused: s ? s[1] === true : false };
        } catch (e) {
          if (e instanceof ProbeError) return e.kind === 'gone' ? null : { t, seq: t.seq, visible: true, focused: false };
          throw e;
        }
      }),
    );
    const best = pickActive(views.filter((v): v is View => v !== null));
    if (!best) {
      conn.changed = true;
      throw new ProbeError('gone', 'every page closed while the active page was being picked');
    }
    conn.cached = best.t;
    return best.t;
  }

  private async probeOn(conn: CdpConnection, t: TrackedPage, budget: Budget): Promise<ProbeResult> {
    const r = await conn.evaluate(t, this.probe.expression, this.probe.awaitPromise, budget);
    if ('dialog' in r) return { ok: false, visible: true, focused: true };
    if ('exception' in r) {
      throw new VncuaError('CDP_ERR_BAD_SENTINEL', `${this.probe.label} could not run in the page: ${r.exception}`, { details: { exception: r.exception } });
    }
    return decodeProbe(this.probe, r.value);
  }
}

function answerOf(r: ProbeResult): CheckAnswer {
  return r.ok ? { ok: true, evidence: r.evidence ?? null } : NO;
}
