import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MAX_FRAME_INTERVAL_MS, RUNNING_FRAME_INTERVAL_MS, UPDATE_BUDGET, UpdatePacer } from './pacer.ts';

let clock = 0;
beforeEach(() => {
  clock = 1000;
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A watcher whose update "takes" `cost` ms of the pacer's clock. */
function watcher(cost: number, sends = true): { sendUpdate: () => boolean; calls: number[] } {
  const w = {
    calls: [] as number[],
    sendUpdate() {
      w.calls.push(clock);
      clock += cost;
      return sends;
    },
  };
  return w;
}

describe('UpdatePacer', () => {
  it('serves every watcher that asked in one frame, on the next turn of the loop', () => {
    const p = new UpdatePacer(() => clock);
    const a = watcher(1);
    const b = watcher(0);
    p.want(a);
    p.want(b);
    p.want(a);
    expect(a.calls).toEqual([]);
    vi.advanceTimersToNextTimer();
    expect(a.calls).toEqual([1000]);
    expect(b.calls).toEqual([1001]);
    expect(p.frames).toBe(1);
    expect(p.busyMs).toBe(1);
  });

  it('after a frame that took c ms, waits until c / UPDATE_BUDGET ms after it began; a quiet screen goes at once', () => {
    const p = new UpdatePacer(() => clock);
    const a = watcher(3);
    p.want(a);
    vi.advanceTimersToNextTimer();
    const next = 1000 + 3 / UPDATE_BUDGET;
    clock = 1010;
    p.want(a);
    vi.advanceTimersByTime(next - 1010 - 1);
    expect(a.calls).toHaveLength(1);
    clock = next;
    vi.advanceTimersByTime(1);
    expect(a.calls).toEqual([1000, next]);
    clock = next + 10_000; // long quiet
    p.want(a);
    vi.advanceTimersToNextTimer();
    expect(a.calls.at(-1)).toBe(next + 10_000);
  });

  it('waits at most MAX_FRAME_INTERVAL_MS; a frame that sent nothing does not delay the next', () => {
    const p = new UpdatePacer(() => clock);
    const slow = watcher(50); // 50 / budget is far more than the cap
    p.want(slow);
    vi.advanceTimersToNextTimer();
    clock = 1050;
    const idle = watcher(40, false);
    p.want(idle);
    vi.advanceTimersByTime(MAX_FRAME_INTERVAL_MS - 50 - 1);
    expect(idle.calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(idle.calls).toEqual([1050]);
    clock = 1000 + MAX_FRAME_INTERVAL_MS + 1;
    const c = watcher(1);
    p.want(c);
    vi.advanceTimersByTime(0);
    expect(c.calls, 'the empty frame set no new wait').toEqual([clock - 1]);
  });

  it('forgets a watcher that left, and close() cancels the pending frame', () => {
    const p = new UpdatePacer(() => clock);
    const a = watcher(1);
    p.want(a);
    p.forget(a);
    vi.advanceTimersToNextTimer();
    expect(a.calls).toEqual([]);
    p.want(a);
    p.close();
    vi.runAllTimers();
    expect(a.calls).toEqual([]);
  });

  it('while the agent is running, frames are at least RUNNING_FRAME_INTERVAL_MS apart however cheap', () => {
    const p = new UpdatePacer(() => clock);
    p.running = true;
    const a = watcher(1); // 1 ms: the budget alone would allow a frame every 1 / UPDATE_BUDGET ms
    expect(1 / UPDATE_BUDGET).toBeLessThan(RUNNING_FRAME_INTERVAL_MS);
    p.want(a);
    vi.advanceTimersToNextTimer();
    clock = 1001;
    p.want(a);
    vi.advanceTimersByTime(RUNNING_FRAME_INTERVAL_MS - 2);
    expect(a.calls).toHaveLength(1);
    clock = 1000 + RUNNING_FRAME_INTERVAL_MS;
    vi.advanceTimersByTime(1);
    expect(a.calls).toEqual([1000, 1000 + RUNNING_FRAME_INTERVAL_MS]);
    // A person took over: from the next frame on, only the budget paces.
    p.running = false;
    clock = 2000;
    p.want(a);
    vi.advanceTimersByTime(0);
    expect(a.calls).toHaveLength(3);
    clock = 2002;
    p.want(a);
    vi.advanceTimersByTime(Math.ceil(1 / UPDATE_BUDGET) - 2);
    expect(a.calls).toHaveLength(4);
  });
});
