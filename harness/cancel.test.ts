import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type MapError, follow, race, scope, sleep, timeoutSignal } from './cancel.ts';
import { VncuaError } from './errors.ts';

const listeners = (s: AbortSignal) => getEventListeners(s, 'abort').length;

/** Maps like the modules do: a VncuaError reason passes through, anything else is wrapped; the timeout gets its own code. */
const mapError: MapError = (c) =>
  c.kind === 'timeout'
    ? new VncuaError('RFB_ERR_TIMEOUT', `x did not finish within ${c.timeoutMs} ms`)
    : c.reason instanceof VncuaError
      ? c.reason
      : new VncuaError('RFB_ERR_ABORTED', 'x was aborted', { cause: c.reason });

const never = () => new Promise<never>(() => {});

describe('race', () => {
  it('settles with the promise and leaves no listener on the signal', async () => {
    const ctl = new AbortController();
    const p = race(Promise.resolve(7), { signal: ctl.signal, timeoutMs: 1000, mapError });
    expect(listeners(ctl.signal)).toBe(1);
    await expect(p).resolves.toBe(7);
    expect(listeners(ctl.signal)).toBe(0);
    await expect(race(Promise.reject(new Error('boom')), { signal: ctl.signal, mapError })).rejects.toThrow('boom');
    expect(listeners(ctl.signal)).toBe(0);
  });

  it('rejects with the mapped error on abort, runs onAbort once, and removes its listener', async () => {
    const ctl = new AbortController();
    const seen: unknown[] = [];
    const p = race(never(), { signal: ctl.signal, mapError, onAbort: (e) => seen.push(e) });
    const cause = new Error('user');
    ctl.abort(cause);
    const err = await p.catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'RFB_ERR_ABORTED', cause });
    expect(seen).toEqual([err]);
    expect(listeners(ctl.signal)).toBe(0);
  });

  it('passes a VncuaError reason through unchanged', async () => {
    const ctl = new AbortController();
    const reason = new VncuaError('AGENT_ERR_STEP_TIMEOUT', 'too slow');
    const p = race(never(), { signal: ctl.signal, mapError });
    ctl.abort(reason);
    await expect(p).rejects.toBe(reason);
  });

  it('without mapError rejects with the raw reason', async () => {
    const ctl = new AbortController();
    const p = race(never(), { signal: ctl.signal });
    ctl.abort('why');
    await expect(p).rejects.toBe('why');
  });

  it('rejects with the mapped timeout error, and removes the listener', async () => {
    const ctl = new AbortController();
    const t0 = performance.now();
    await expect(race(never(), { signal: ctl.signal, timeoutMs: 30, mapError })).rejects.toMatchObject({ code: 'RFB_ERR_TIMEOUT', message: 'x did not finish within 30 ms' });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(listeners(ctl.signal)).toBe(0);
    await expect(race(never(), { timeoutMs: 10 })).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('an already-aborted signal rejects at once without calling the work or adding a listener', async () => {
    const ctl = new AbortController();
    ctl.abort(new Error('before'));
    let called = false;
    let aborted = 0;
    const p = race(
      async () => {
        called = true;
        return 1;
      },
      { signal: ctl.signal, mapError, onAbort: () => aborted++ },
    );
    await expect(p).rejects.toMatchObject({ code: 'RFB_ERR_ABORTED' });
    expect(called).toBe(false);
    expect(aborted).toBe(1);
    expect(listeners(ctl.signal)).toBe(0);
  });

  it('a promise raced against an aborted signal may reject later without an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (e: Error) => void;
      const p = new Promise<never>((_, reject) => (fail = reject));
      await expect(race(p, { signal: AbortSignal.abort('gone') })).rejects.toBe('gone');
      fail(new Error('late'));
      const q = race(new Promise<never>((_, reject) => (fail = reject)), { timeoutMs: 5 });
      await expect(q).rejects.toMatchObject({ name: 'TimeoutError' });
      fail(new Error('late too'));
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('gives a function the signal that fires when the race is lost', async () => {
    const ctl = new AbortController();
    let inner: AbortSignal | undefined;
    const p = race((s) => ((inner = s), never()), { signal: ctl.signal, mapError });
    ctl.abort();
    const err = await p.catch((e: unknown) => e);
    expect(inner!.aborted).toBe(true);
    expect(inner!.reason).toBe(err);
  });

  it('a work function that throws synchronously rejects the race', async () => {
    await expect(
      race(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
  });

  it('a long-lived signal collects no listeners over many races', async () => {
    const ctl = new AbortController();
    for (let i = 0; i < 200; i++) await race(Promise.resolve(i), { signal: ctl.signal, timeoutMs: 10_000 });
    expect(listeners(ctl.signal)).toBe(0);
  });
});

describe('sleep', () => {
  it('waits, then leaves no listener', async () => {
    const ctl = new AbortController();
    const t0 = performance.now();
    await sleep(20, ctl.signal);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);
    expect(listeners(ctl.signal)).toBe(0);
  });

  it('rejects at once on abort with the mapped error', async () => {
    const ctl = new AbortController();
    const p = sleep(60_000, ctl.signal, mapError);
    ctl.abort();
    await expect(p).rejects.toMatchObject({ code: 'RFB_ERR_ABORTED' });
    expect(listeners(ctl.signal)).toBe(0);
    await expect(sleep(60_000, ctl.signal, mapError)).rejects.toMatchObject({ code: 'RFB_ERR_ABORTED' });
    expect(listeners(ctl.signal)).toBe(0);
  });
});

describe('scope', () => {
  it('fires its signal with the mapped error on timeout, races and sleeps within it', async () => {
    const s = scope({ timeoutMs: 40, mapError });
    await s.sleep(1);
    await expect(s.race(never())).rejects.toMatchObject({ code: 'RFB_ERR_TIMEOUT' });
    expect(s.signal.reason).toMatchObject({ code: 'RFB_ERR_TIMEOUT' });
    s.dispose();
  });

  it('follows the caller signal until disposed', () => {
    const ctl = new AbortController();
    const s = scope({ signal: ctl.signal, timeoutMs: 1000, mapError });
    expect(listeners(ctl.signal)).toBe(1);
    s.dispose();
    s.dispose();
    expect(listeners(ctl.signal)).toBe(0);
    ctl.abort();
    expect(s.signal.aborted).toBe(false);
  });

  it('is aborted at once for an aborted signal', () => {
    const reason = new VncuaError('CDP_ERR_ABORTED', 'gone');
    const s = scope({ signal: AbortSignal.abort(reason), mapError });
    expect(s.signal.aborted).toBe(true);
    expect(s.signal.reason).toBe(reason);
  });
});

describe('follow and timeoutSignal', () => {
  it('follow aborts the controller with the mapped error, and unfollows', () => {
    const a = new AbortController();
    const b = new AbortController();
    const stop = follow(a.signal, b, (reason) => new VncuaError('RFB_ERR_ABORTED', 'x was aborted', { cause: reason }));
    expect(listeners(a.signal)).toBe(1);
    a.abort();
    expect(b.signal.reason).toMatchObject({ code: 'RFB_ERR_ABORTED' });
    stop();
    const c = new AbortController();
    const unfollow = follow(c.signal, new AbortController());
    unfollow();
    expect(listeners(c.signal)).toBe(0);
  });

  it('timeoutSignal fires on the timeout or the caller signal', async () => {
    const t = timeoutSignal(undefined, 10);
    await new Promise((r) => setTimeout(r, 40));
    expect(t.reason).toMatchObject({ name: 'TimeoutError' });
    const ctl = new AbortController();
    const s = timeoutSignal(ctl.signal, 60_000);
    ctl.abort('x');
    expect(s.reason).toBe('x');
  });

  it('timeoutSignal still fires after a garbage collection (AbortSignal.any + AbortSignal.timeout did not, on Node 20)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const outer = new AbortController();
    const signals = Array.from({ length: 50 }, () => timeoutSignal(outer.signal, 50));
    const fired: number[] = [];
    for (const [i, s] of signals.entries()) s.addEventListener('abort', () => fired.push(i));
    gc();
    await new Promise((r) => setTimeout(r, 20));
    gc();
    await expect.poll(() => fired.length, { timeout: 5000 }).toBe(50);
    for (const s of signals) expect(s.reason).toMatchObject({ name: 'TimeoutError', message: 'The operation was aborted due to timeout' });
    expect(outer.signal.aborted).toBe(false);
  });
});
