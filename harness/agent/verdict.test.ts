/**
 * RunVerdict's attribution rules, with a scripted page (a marker the test turns on), a scripted screen
 * and a recording markComplete, on fake timers (no desktop; success-grace.desktop.test.ts runs the real thing).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CheckAnswer } from '../cdp/success.ts';
import type { ActionName, EntrySuccess } from '../trace/schema.ts';
import type { ScreenFeed } from './grace.ts';
import { RunVerdict, type RunVerdictOptions } from './verdict.ts';

const GRACE = 1000;
const EVIDENCE = { rule: 'text' as const, pattern: '>code#1</', snippet: '<div>code#1</div>', url: 'http://127.0.0.1/t.html' };

class Page {
  marker = false;
  checks = 0;
  /** The marker shows from this check on (1-based), if set. */
  trueFrom = Infinity;
  inspect = async (): Promise<CheckAnswer> => {
    this.checks++;
    return this.marker || this.checks >= this.trueFrom ? { ok: true, evidence: EVIDENCE } : { ok: false, evidence: null };
  };
}

class Screen implements ScreenFeed {
  version = 1;
  listeners = new Set<() => void>();
  onUpdate(l: () => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  paint() {
    this.version++;
    for (const l of [...this.listeners]) l();
  }
}

let page: Page;
let screen: Screen;
let marks: Array<[number, EntrySuccess]>;
let index: number;

function verdict(over: Partial<RunVerdictOptions> = {}): RunVerdict {
  return new RunVerdict({
    inspect: page.inspect,
    screen: () => screen,
    markComplete: async (i, c) => void marks.push([i, c]),
    graceMs: GRACE,
    quietMs: 300,
    checkTimeoutMs: 5000,
    ...over,
  });
}

/** One action through the verdict as the ActionRecorder drives it; returns the entry's immediate answer. */
async function act(v: RunVerdict, action: ActionName, effect?: () => void): Promise<boolean | null> {
  v.actionStarting(action);
  effect?.();
  const c = await v.check(undefined);
  v.recorded(index++, c, action);
  return c.answer.ok;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  page = new Page();
  screen = new Screen();
  marks = [];
  index = 0;
});
afterEach(() => {
  vi.useRealTimers();
});

describe('RunVerdict', () => {
  it('type then finish at once; the marker appears 200 ms later with no screen change: the type entry gets it (grace), finish waits for its window', async () => {
    const v = verdict();
    expect(await act(v, 'type_text')).toBe(false);
    expect(await act(v, 'finish')).toBe(false);
    setTimeout(() => (page.marker = true), 200);
    const done = v.finish(undefined);
    await vi.advanceTimersByTimeAsync(GRACE);
    await done;
    expect(marks.map(([i, c]) => [i, c.phase, c.pattern])).toEqual([[0, 'grace', '>code#1</']]);
    expect(v.result()).toEqual({ success: true, success_at: expect.any(Number), evidence: { ...EVIDENCE, at: expect.any(Number), entry_index: 0, phase: 'grace' } });
  });

  it("finish's own immediate check sees the success while the type entry's window is open: both entries are complete, the first success is the type entry", async () => {
    const v = verdict();
    await act(v, 'type_text');
    page.marker = true;
    expect(await act(v, 'finish')).toBe(true);
    await v.finish(undefined);
    expect(marks.map(([i, c]) => [i, c.phase])).toEqual([[0, 'grace']]);
    expect(v.result().evidence).toMatchObject({ entry_index: 0, phase: 'grace' });
  });

  it('an action that sends input ends the previous window: a later success belongs to it (its immediate check)', async () => {
    const v = verdict();
    await act(v, 'mouse_click');
    screen.paint();
    await vi.advanceTimersByTimeAsync(0);
    const before = page.checks;
    expect(before).toBe(2); // the immediate check and one on the update
    expect(await act(v, 'type_text', () => (page.marker = true))).toBe(true);
    await v.finish(undefined);
    expect(marks).toEqual([]);
    expect(v.result().evidence).toMatchObject({ entry_index: 1, phase: 'immediate' });
  });

  it('no success in any window: the final check after the tail finds it and marks the last entry that sent input', async () => {
    const v = verdict();
    await act(v, 'mouse_click');
    await act(v, 'wait');
    await act(v, 'finish');
    // Checks 1-3 are the immediate ones, 4 the click's deadline check; the success shows from the 5th on.
    page.trueFrom = 5;
    const done = v.finish(undefined);
    await vi.advanceTimersByTimeAsync(GRACE);
    await done;
    expect(page.checks).toBe(5);
    expect(marks.map(([i, c]) => [i, c.phase])).toEqual([[0, 'final']]);
    expect(v.result()).toMatchObject({ success: true, evidence: { entry_index: 0, phase: 'final' } });
  });

  it("after a wait that outlasted the click's window, the wait's own window watches for the click: a success there is the click's", async () => {
    const v = verdict();
    await act(v, 'mouse_click');
    await vi.advanceTimersByTimeAsync(GRACE); // the click's window runs out during the wait
    await act(v, 'wait');
    setTimeout(() => (page.marker = true), 100);
    await vi.advanceTimersByTimeAsync(GRACE);
    expect(marks.map(([i, c]) => [i, c.phase])).toEqual([[0, 'grace']]);
    await v.finish(undefined);
    expect(v.result().evidence).toMatchObject({ entry_index: 0, phase: 'grace' });
  });

  it('never a success: success false, no marks; a static screen cost one deadline check per window and one final check', async () => {
    const v = verdict();
    await act(v, 'mouse_click');
    await vi.advanceTimersByTimeAsync(GRACE);
    await act(v, 'type_text');
    const done = v.finish(undefined);
    await vi.advanceTimersByTimeAsync(GRACE);
    await done;
    expect(v.lateChecks).toBe(3);
    expect(page.checks).toBe(2 + 3);
    expect(marks).toEqual([]);
    expect(v.result()).toEqual({ success: false, success_at: null, evidence: null });
  });

  it('a run that already succeeded pays nothing extra: no monitor, no final check', async () => {
    const v = verdict();
    page.marker = true;
    await act(v, 'mouse_click');
    page.marker = false;
    await act(v, 'mouse_click');
    await v.finish(undefined);
    expect(v.lateChecks).toBe(0);
    expect(v.result()).toMatchObject({ success: true, evidence: { entry_index: 0, phase: 'immediate' } });
  });

  it('graceMs 0: no re-checks, the final check stays', async () => {
    const v = verdict({ graceMs: 0 });
    await act(v, 'type_text');
    screen.paint();
    page.marker = true;
    await vi.advanceTimersByTimeAsync(5 * GRACE);
    expect(v.lateChecks).toBe(0);
    await v.finish(undefined);
    expect(v.lateChecks).toBe(1);
    expect(marks.map(([i, c]) => [i, c.phase])).toEqual([[0, 'final']]);
  });

  it('a cancelled run does not wait for the window; the final check still runs', async () => {
    const v = verdict();
    await act(v, 'type_text');
    page.marker = true;
    await v.finish(AbortSignal.abort());
    expect(marks.map(([i, c]) => [i, c.phase])).toEqual([[0, 'final']]);
  });

  it('no CDP endpoint: no check at all, success null', async () => {
    const v = verdict({ inspect: null });
    expect(await act(v, 'type_text')).toBe(null);
    await v.finish(undefined);
    expect(v.lateChecks).toBe(0);
    expect(v.result()).toEqual({ success: null, success_at: null, evidence: null });
  });

  it('checks that throw answer null; a run whose checks never answered has success null', async () => {
    const v = verdict({ inspect: async () => Promise.reject(new Error('cdp down')) });
    expect(await act(v, 'type_text')).toBe(null);
    const done = v.finish(undefined);
    await vi.advanceTimersByTimeAsync(GRACE);
    await done;
    expect(v.result().success).toBe(null);
  });
});
