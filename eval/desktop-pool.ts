/**
 * A warm pool of desktops (`vncua eval --pool N`): up to N desktops started ahead of need, so a run
 * does not wait for one to boot. It wraps any provider that can start a desktop at its empty page
 * (DesktopProvider.start: local, docker) and is a DesktopProvider itself, so the runner only tells it
 * what comes next (plan()) before each acquire().
 *
 * - **What it starts**: spares at the sizes of the next N runs of the runner's queue (plan(), in
 *   order), never one no run will use: a spare whose size the queue no longer needs is stopped at once,
 *   and so is every spare at the end of the suite (close()) or when the signal fires.
 * - **acquire()**: the oldest ready spare of that size, opened at the task's URL (LeasedDesktop.open:
 *   navigate, clear the history, the same page wait and PAGE_ERR_* as a desktop started there:
 *   `ready`) and checked meanwhile (its CDP answers): it is handed out once the check passed. Else a
 *   spare of that size still starting, awaited; else a desktop started for this run as without a
 *   pool (inner.acquire). Each desktop serves one run and is released after it, never reused.
 * - **Dead spares**: a spare whose process exits (LeasedDesktop.exited), whose health() fails (checked
 *   every `checkEveryMs` while it waits) or whose CDP does not answer when it is taken is released and
 *   replaced, never handed out (with the task page it began opening).
 * - **Failed starts**: a spare that could not start fails the run that would have got it, with the
 *   start's own error (DESKTOP_ERR_*: an infra error the runner retries, as without a pool).
 * - **How many**: spares (starting or ready) ≤ N, and desktops alive (spares, runs' desktops, those
 *   being stopped) ≤ workers + N and ≤ the provider's capacity: a run whose size has no spare makes
 *   room by stopping the spare needed last.
 */
import { channel } from 'node:diagnostics_channel';
import { race } from '../harness/cancel.ts';
import { cdpAnswers } from '../harness/cdp/page-socket.ts';
import type { ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { withPageReady } from './cdp-page.ts';
import type { DesktopProvider, DesktopRequest, LeasedDesktop } from './providers/types.ts';

/** Options of desktopPool(). */
export interface DesktopPoolOptions {
  /** Desktops kept started ahead of need (>= 1). */
  spares: number;
  /** Runs at once: with `spares`, the most desktops alive at once. */
  workers: number;
  /** Stops every spare when it fires (the suite's signal). */
  signal?: AbortSignal;
  /** Start timeout of each spare (the provider's default otherwise). */
  timeoutMs?: number;
  /** A page on the tasks' origin where spares wait (StartRequest.standAt); default: their empty page. */
  standAt?: string;
  /** Time for a task page to load on a spare (LeasedDesktop.open; default 20 000 ms). */
  loadTimeoutMs?: number;
  /** How often a waiting spare's health() is checked (default 5000 ms). */
  checkEveryMs?: number;
  /** How long the check before a spare is handed out may take (default 2000 ms). */
  handOutCheckMs?: number;
  /** The check before a spare is handed out, made while its task page starts opening (default: its CDP endpoint answers /json/version). */
  answers?: (lease: LeasedDesktop, o: { signal?: AbortSignal; timeoutMs: number }) => Promise<boolean>;
}

/** What the pool did (for benches and tests). */
export interface PoolStats {
  /** Spares started (successfully or not). */
  started: number;
  /** Spares that could not start (each failed the run that took it, if one did). */
  failed: number;
  /** Runs served by a spare. */
  hits: number;
  /** Runs that found no spare of their size and got a desktop started for them. */
  misses: number;
  /** Spares stopped unused: dead, no longer needed, making room, or at the end. */
  discarded: number;
  /** Of those, the spares found dead (exited, health() failed, CDP silent at hand-out). */
  dead: number;
  /** Most desktops alive at once. */
  maxAlive: number;
}

/** A provider with a warm pool in front (see the file comment). */
export interface PooledProvider extends DesktopProvider {
  plan(upcoming: readonly ScreenSize[]): void;
  stats(): PoolStats;
  /** Desktops alive now: spares (starting, ready), runs' desktops, those being stopped. */
  alive(): number;
}

interface Spare {
  size: ScreenSize;
  key: string;
  state: 'starting' | 'ready' | 'failed';
  lease?: LeasedDesktop;
  error?: unknown;
  /** Stops the start. */
  ctl: AbortController;
  /** Settles when the start settled (and the spare is ready, failed or gone). */
  settled: Promise<void>;
  /** A run waits for this spare (starting): nothing else may take or stop it. */
  claimed: boolean;
  /** Taken out of the pool (handed out, or discarded). */
  gone: boolean;
  /** Its process exited while it waited (LeasedDesktop.exited). */
  dead: boolean;
  checking: boolean;
}

/** Where the pool publishes each hand-out's steps ({ url, step: take | open | checked, t: performance.now() }) for benches (bench/pool-breakdown.ts). */
export const POOL_STEPS = channel('vncua:desktop-pool');

function mark(url: string, step: string): void {
  if (POOL_STEPS.hasSubscribers) POOL_STEPS.publish({ url, step, t: performance.now() });
}

const sizeKey = (s: ScreenSize) => `${s.width}x${s.height}`;

/** Longest time a spare's start waits for a handed-out desktop's task page to be ready (see handOut). */
const OPENING_HOLD_MS = 1000;

/** The pool over `inner` (see the file comment); `inner` must have start(). */
export function desktopPool(inner: DesktopProvider, opts: DesktopPoolOptions): PooledProvider {
  if (!inner.start) {
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `runSuite option pool: the ${inner.name} provider cannot start desktops ahead of need (the pool works with local and docker).`, {
      details: { field: 'pool', value: opts.spares },
    });
  }
  const start = inner.start.bind(inner);
  const answers = opts.answers ?? ((lease, o) => cdpAnswers(lease.cdpUrl, o));
  const n = opts.spares;
  const maxAlive = Math.max(1, Math.min(inner.capacity ?? Infinity, opts.workers + n));
  let spares: Spare[] = [];
  let upcoming: string[] = [];
  const sizes = new Map<string, ScreenSize>();
  /** Runs' desktops: handed out or being started for a run, until their release() finished. */
  let leased = 0;
  /** Discarded spares still starting or being stopped. */
  let dying = 0;
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  /** Spares handed out whose task page is still opening: starting another desktop now would take CPU from it. */
  let opening = 0;
  const stats: PoolStats = { started: 0, failed: 0, hits: 0, misses: 0, discarded: 0, dead: 0, maxAlive: 0 };

  const alive = () => leased + dying + spares.filter((s) => s.state !== 'failed').length;
  const track = () => {
    stats.maxAlive = Math.max(stats.maxAlive, alive());
  };
  const keep = (p: Promise<unknown>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  /** Take `s` out of the pool and stop it (its start is cancelled; a started desktop is released). */
  function discard(s: Spare, dead = false): void {
    if (s.gone) return;
    s.gone = true;
    spares = spares.filter((x) => x !== s);
    stats.discarded++;
    if (dead) stats.dead++;
    if (s.state === 'failed') return;
    dying++;
    s.ctl.abort(new VncuaError('DESKTOP_ERR_ABORTED', 'the pool stopped this spare desktop'));
    keep(
      s.settled
        .then(() => s.lease?.release())
        .catch(() => {})
        .finally(() => {
          dying--;
          refill();
        }),
    );
  }

  /** Start a spare at `size`. */
  function startSpare(size: ScreenSize): void {
    const ctl = new AbortController();
    const s: Spare = { size, key: sizeKey(size), state: 'starting', ctl, settled: Promise.resolve(), claimed: false, gone: false, dead: false, checking: false };
    stats.started++;
    const signal = opts.signal ? AbortSignal.any([ctl.signal, opts.signal]) : ctl.signal;
    s.settled = start({ size, signal, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}), ...(opts.standAt ? { standAt: opts.standAt } : {}) }).then(
      (lease) => {
        s.lease = lease;
        s.state = 'ready';
        if (s.gone) return;
        if (!lease.open) {
          s.state = 'failed';
          s.error = new VncuaError('EVAL_ERR_BAD_OPTIONS', `the ${inner.name} provider's start() gave a desktop without open(): it cannot be pooled.`);
          stats.failed++;
          void lease.release().catch(() => {});
          return;
        }
        void lease.exited?.then(() => {
          s.dead = true;
          if (!s.gone && !s.claimed) {
            discard(s, true);
            refill();
          }
        });
      },
      (e: unknown) => {
        if (s.gone) return;
        s.state = 'failed';
        s.error = e;
        stats.failed++;
      },
    );
    spares.push(s);
    track();
    keep(s.settled.finally(() => refill()));
  }

  /** Bring the spares in line with the next N runs' sizes (see the file comment). */
  function refill(): void {
    if (closed || opening > 0) return;
    const next = upcoming.slice(0, n);
    const want = new Map<string, number>();
    for (const k of next) want.set(k, (want.get(k) ?? 0) + 1);
    const later = new Map<string, number>();
    for (const k of upcoming.slice(n)) later.set(k, (later.get(k) ?? 0) + 1);
    const rank = { ready: 0, starting: 1, failed: 2 } as const;
    const free = spares.filter((s) => !s.claimed).sort((a, b) => rank[a.state] - rank[b.state]);
    const matched: Spare[] = [];
    const extra: Spare[] = [];
    for (const s of free) {
      const w = want.get(s.key) ?? 0;
      if (w > 0) {
        want.set(s.key, w - 1);
        matched.push(s);
      } else extra.push(s);
    }
    const unmet = [...want.values()].reduce((a, b) => a + b, 0);
    // A spare the next N runs do not need stays only while a later run needs its size and nothing nearer wants its place.
    let room = n - matched.length - unmet;
    for (const s of extra) {
      const l = later.get(s.key) ?? 0;
      if (s.state !== 'failed' && room > 0 && l > 0) {
        later.set(s.key, l - 1);
        room--;
      } else discard(s);
    }
    // Start what the next runs miss, in queue order, within N spares and the desktops allowed alive.
    for (const k of next) {
      const w = want.get(k) ?? 0;
      if (w === 0) continue;
      if (spares.filter((s) => !s.claimed).length >= n || alive() >= maxAlive) break;
      want.set(k, w - 1);
      startSpare(sizes.get(k)!);
    }
  }

  /** Stop the spare needed last (for room); false when there is none to stop. */
  function evictOne(): boolean {
    const free = spares.filter((s) => !s.claimed && s.state !== 'failed');
    if (free.length === 0) return false;
    const pos = (s: Spare) => {
      const i = upcoming.indexOf(s.key);
      return i === -1 ? Infinity : i;
    };
    free.sort((a, b) => pos(b) - pos(a));
    discard(free[0]!);
    return true;
  }

  /** Release a run's desktop once, then let the pool refill. */
  function runDesktop(lease: LeasedDesktop, pooled: boolean): LeasedDesktop {
    let released: Promise<void> | undefined;
    const release = () =>
      (released ??= lease
        .release()
        .catch(() => {})
        .finally(() => {
          leased--;
          refill();
        }));
    return { ...lease, pooled, info: { ...lease.info, pooled }, release };
  }

  /** Open the spare `s` at the task URL for `req`: the run's desktop, `ready` when the page is. */
  function openSpare(s: Spare, req: DesktopRequest): LeasedDesktop {
    const lease = s.lease!;
    const { ready: _ready, ...rest } = lease;
    const d = runDesktop(rest, true);
    mark(req.url, 'open');
    return withPageReady(d, (signal) => lease.open!(req.url, { signal, ...(opts.loadTimeoutMs !== undefined ? { loadTimeoutMs: opts.loadTimeoutMs } : {}) }), req.signal);
  }

  /** Hand out `leased` (openSpare()); the pool's refill waits for its page (see below). */
  function handOut(leased: LeasedDesktop): LeasedDesktop {
    stats.hits++;
    // The next spare starts once this task's page is ready (or after OPENING_HOLD_MS): a desktop
    // booting beside the page load (Xvnc, Chromium: most of a core for ~0.7 s) slows it. take() held
    // the pool's refill (opening++) from the moment it took the spare.
    let timer: NodeJS.Timeout | undefined;
    const held = new Promise<void>((r) => {
      timer = setTimeout(r, OPENING_HOLD_MS);
      timer.unref();
    });
    void Promise.race([leased.ready?.catch(() => {}), held]).finally(() => {
      clearTimeout(timer);
      opening--;
      refill();
    });
    return leased;
  }

  /** Take `s` (ready or failed) out of the pool for a run; null when it is dead. */
  async function take(s: Spare, req: DesktopRequest): Promise<LeasedDesktop | null> {
    s.gone = true;
    spares = spares.filter((x) => x !== s);
    if (s.state === 'failed') {
      refill();
      throw s.error;
    }
    leased++;
    opening++;
    const lease = s.lease!;
    mark(req.url, 'take');
    // The task page starts opening now, while the check runs (it would add its round trip to every
    // task); a spare that fails the check is released with the page it began, never handed out.
    const opened = s.dead ? null : openSpare(s, req);
    const ok = opened !== null && (await answers(lease, { timeoutMs: opts.handOutCheckMs ?? 2000, ...(req.signal ? { signal: req.signal } : {}) }).catch(() => false));
    mark(req.url, 'checked');
    if (ok) return handOut(opened);
    opening--;
    stats.discarded++;
    stats.dead++;
    if (opened) {
      // Its release() stops the page wait, releases the desktop, then leased-- and refill() (runDesktop).
      await opened.release();
    } else {
      await lease.release().catch(() => {});
      leased--;
      refill();
    }
    if (req.signal?.aborted) throw req.signal.reason;
    return null;
  }

  /** Every spare's health(), while it waits. */
  const timer = setInterval(() => {
    for (const s of spares) {
      if (s.state !== 'ready' || s.claimed || s.checking) continue;
      s.checking = true;
      keep(
        s
          .lease!.health({ timeoutMs: 3000 })
          .then((problem) => {
            if (problem && !s.gone && !s.claimed) {
              discard(s, true);
              refill();
            }
          })
          .catch(() => {})
          .finally(() => {
            s.checking = false;
          }),
      );
    }
  }, opts.checkEveryMs ?? 5000);
  timer.unref();

  /** Stop every spare (idempotent); runs' desktops are their runs' to release. */
  async function drain(): Promise<void> {
    closed = true;
    clearInterval(timer);
    while (spares.length > 0 || pending.size > 0) {
      for (const s of [...spares]) discard(s);
      await Promise.allSettled([...pending]);
    }
  }
  const onAbort = () => void drain();
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  return {
    name: inner.name,
    ...(inner.capacity !== undefined ? { capacity: inner.capacity } : {}),
    ...(inner.prepare ? { prepare: (o: Parameters<NonNullable<DesktopProvider['prepare']>>[0]) => inner.prepare!(o) } : {}),
    plan(next) {
      for (const s of next) sizes.set(sizeKey(s), s);
      upcoming = next.map(sizeKey);
      refill();
    },
    async acquire(req: DesktopRequest): Promise<LeasedDesktop> {
      const key = sizeKey(req.size);
      sizes.set(key, req.size);
      // This acquire is the plan's first entry of its size (plan() just before it): no longer ahead.
      const i = upcoming.indexOf(key);
      if (i !== -1) upcoming.splice(i, 1);
      for (;;) {
        if (req.signal?.aborted) throw req.signal.reason;
        const ready = spares.find((s) => s.key === key && !s.claimed && (s.state === 'ready' || s.state === 'failed'));
        if (ready) {
          const d = await take(ready, req);
          if (d) return d;
          continue;
        }
        const starting = spares.find((s) => s.key === key && !s.claimed && s.state === 'starting');
        if (starting && !closed) {
          starting.claimed = true;
          try {
            await race(starting.settled, { signal: req.signal });
          } catch (e) {
            starting.claimed = false;
            if (closed) discard(starting);
            refill();
            throw e;
          }
          starting.claimed = false;
          if (starting.gone) continue;
          const d = await take(starting, req);
          if (d) return d;
          continue;
        }
        // No spare of this size: a desktop started for this run, as without a pool (its place is
        // reserved first, then spares are stopped until it fits: those needed last).
        stats.misses++;
        leased++;
        for (let need = alive() - maxAlive - dying; need > 0 && evictOne(); need--) {}
        while (alive() > maxAlive && pending.size > 0) await Promise.race([...pending]);
        track();
        try {
          return runDesktop(await inner.acquire(req), false);
        } catch (e) {
          leased--;
          refill();
          throw e;
        }
      }
    },
    async close() {
      opts.signal?.removeEventListener('abort', onAbort);
      await drain();
      await inner.close?.();
    },
    stats: () => ({ ...stats }),
    alive,
  };
}
