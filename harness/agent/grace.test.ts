/**
 * The grace monitor's logic, driven by a scripted screen feed and checks answered by hand, on fake
 * timers (no desktop; the desktop behaviour is in success-grace.desktop.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GraceMonitor, type ScreenFeed, type TimedAnswer } from './grace.ts';

/** A screen whose updates the test emits. */
class FakeScreen implements ScreenFeed {
  version = 10;
  listeners = new Set<() => void>();
  onUpdate(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  /** An update that changed pixels (version bump), or one that did not. */
  emit(pixels = true): void {
    if (pixels) this.version++;
    for (const l of [...this.listeners]) l();
  }
}

/** Checks that stay pending until the test answers them, in order. */
class Checks {
  pending: Array<(a: TimedAnswer | Error) => void> = [];
  started = 0;
  fn = (): Promise<TimedAnswer> => {
    this.started++;
    return new Promise<TimedAnswer>((resolve, reject) => {
      this.pending.push((a) => (a instanceof Error ? reject(a) : resolve(a)));
    });
  };
  /** Answer the oldest pending check. */
  async answer(ok: boolean | null, at = 1): Promise<void> {
    const next = this.pending.shift();
    if (!next) throw new Error('no check is pending');
    next(ok === true ? { ok, at, evidence: { rule: 'text', pattern: '>code#1</', snippet: 'code#1', url: 'http://t/' } } : { ok, at, evidence: null });
    await vi.advanceTimersByTimeAsync(0);
  }
  async fail(): Promise<void> {
    this.pending.shift()!(new Error('boom'));
    await vi.advanceTimersByTimeAsync(0);
  }
}

const QUIET = 300;
const GRACE = 1000;

let screen: FakeScreen;
let checks: Checks;
let successes: TimedAnswer[];
let ended: boolean;

function start(over: { versionAtCheck?: number; screen?: ScreenFeed | null; onSuccess?: (a: TimedAnswer) => Promise<void> } = {}): GraceMonitor {
  const m = new GraceMonitor({
    check: checks.fn,
    screen: over.screen === undefined ? screen : over.screen,
    versionAtCheck: over.versionAtCheck ?? screen.version,
    graceLeftMs: GRACE,
    quietMs: QUIET,
    onSuccess: over.onSuccess ?? ((a) => void successes.push(a)),
  });
  void m.done.then(() => (ended = true));
  return m;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  screen = new FakeScreen();
  checks = new Checks();
  successes = [];
  ended = false;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('GraceMonitor', () => {
  it('static screen: no check until the deadline, then exactly one, then it ends', async () => {
    const m = start();
    await vi.advanceTimersByTimeAsync(GRACE - 1);
    expect(checks.started).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks.started).toBe(1);
    expect(ended).toBe(false);
    await checks.answer(false);
    expect(ended).toBe(true);
    expect(m.checks).toBe(1);
    expect(screen.listeners.size).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * GRACE);
    expect(checks.started).toBe(1);
  });

  it('stop() on a static screen before the deadline: no check at all', async () => {
    const m = start();
    await vi.advanceTimersByTimeAsync(GRACE / 2);
    m.stop();
    await m.done;
    await vi.advanceTimersByTimeAsync(10 * GRACE);
    expect(checks.started).toBe(0);
    expect(screen.listeners.size).toBe(0);
  });

  it('updates: one check in flight at a time, later updates coalesced into one re-check; then the quiet check; then the deadline check', async () => {
    start();
    screen.emit();
    expect(checks.started).toBe(1);
    for (let i = 0; i < 5; i++) screen.emit();
    expect(checks.started).toBe(1);
    await checks.answer(false);
    expect(checks.started).toBe(2); // the coalesced re-check
    await checks.answer(false);
    expect(checks.started).toBe(2);
    await vi.advanceTimersByTimeAsync(QUIET);
    expect(checks.started).toBe(3); // the screen went quiet
    await checks.answer(false);
    await vi.advanceTimersByTimeAsync(GRACE);
    expect(checks.started).toBe(4); // the deadline
    await checks.answer(false);
    expect(ended).toBe(true);
    expect(successes).toEqual([]);
  });

  it('an update that changed no pixels does not trigger a check', async () => {
    start();
    screen.emit(false);
    screen.emit(false);
    await vi.advanceTimersByTimeAsync(GRACE - 1);
    expect(checks.started).toBe(0);
  });

  it('a change between the immediate check and the start of the monitor is checked at once', async () => {
    start({ versionAtCheck: screen.version - 1 });
    expect(checks.started).toBe(1);
  });

  it('the first true answer is reported once; no check follows, whatever the screen does; done waits for onSuccess', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    start({
      onSuccess: async (a) => {
        successes.push(a);
        await held;
      },
    });
    screen.emit();
    screen.emit();
    await checks.answer(true, 42);
    expect(successes.map((s) => [s.ok, s.at])).toEqual([[true, 42]]);
    expect(ended).toBe(false);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(ended).toBe(true);
    screen.emit();
    await vi.advanceTimersByTimeAsync(2 * GRACE);
    expect(checks.started).toBe(1);
  });

  it("stop() with a check in flight: it is over at once, and the answer is dropped, true or not (the page may have run the check after the next action's input)", async () => {
    const m = start();
    screen.emit();
    screen.emit(); // would re-check
    m.stop();
    await m.done;
    screen.emit();
    await checks.answer(true, 7);
    expect(successes).toEqual([]);
    expect(m.success).toBeNull();
    await vi.advanceTimersByTimeAsync(2 * GRACE);
    expect(checks.started).toBe(1);
  });

  it('a check that throws or answers null counts as no answer: the monitor goes on to the deadline', async () => {
    start();
    screen.emit();
    await checks.fail();
    screen.emit();
    await checks.answer(null);
    await vi.advanceTimersByTimeAsync(GRACE);
    expect(checks.started).toBe(3); // two updates, the quiet check (still in flight at the deadline)
    await checks.answer(false);
    expect(checks.started).toBe(4); // the deadline's check, after it
    await checks.answer(true, 99);
    expect(successes.map((s) => s.at)).toEqual([99]);
  });

  it('the deadline with a check in flight: one more check after it, then the end', async () => {
    start();
    await vi.advanceTimersByTimeAsync(GRACE - 10);
    screen.emit();
    expect(checks.started).toBe(1);
    await vi.advanceTimersByTimeAsync(10);
    expect(checks.started).toBe(1);
    await checks.answer(false);
    expect(checks.started).toBe(2);
    await checks.answer(false);
    expect(ended).toBe(true);
  });

  it('poke(): a check now; nothing after stop()', async () => {
    const m = start();
    m.poke();
    expect(checks.started).toBe(1);
    m.poke(); // coalesced with the one in flight
    await checks.answer(false);
    expect(checks.started).toBe(2);
    await checks.answer(false);
    expect(m.running).toBe(true);
    m.stop();
    m.poke();
    expect(checks.started).toBe(2);
    await m.done;
    expect(m.running).toBe(false);
  });

  it('no screen (no live connection): only the deadline check', async () => {
    start({ screen: null });
    await vi.advanceTimersByTimeAsync(GRACE);
    expect(checks.started).toBe(1);
    await checks.answer(true, 5);
    expect(successes).toHaveLength(1);
    expect(ended).toBe(true);
  });
});
