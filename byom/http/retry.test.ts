import { describe, expect, it } from 'vitest';
import { VncuaError } from '../../harness/errors.ts';
import { DEFAULT_RETRY, backoffDelay, parseRetryAfter, retryPolicy, withRetries, type Attempt, type RetryRecord } from './retry.ts';

describe('backoffDelay (full jitter)', () => {
  it('is uniform in [0, min(cap, base * 2^n)): random 0 gives 0, random near 1 gives the ceiling', () => {
    const p = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, p, () => 0.999999))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(backoffDelay(5, p, () => 0)).toBe(0);
    expect(backoffDelay(2, p, () => 0.5)).toBe(200);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates, and ignores garbage', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter('0.25')).toBe(250);
    expect(parseRetryAfter(['2', '9'])).toBe(2000);
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:27:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(undefined)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter('-1')).toBeNull();
  });
});

describe('withRetries', () => {
  const fail = (code: 'MODEL_ERR_SERVER' | 'MODEL_ERR_REQUEST', retryable: boolean, retryAfterMs?: number): Attempt<string> => ({
    ok: false,
    retryable,
    status: code === 'MODEL_ERR_SERVER' ? 503 : 400,
    error: new VncuaError(code, 'failed'),
    retryAfterMs,
  });
  const policy = retryPolicy({ maxAttempts: 4, baseDelayMs: 8, maxDelayMs: 20 });

  it('retries retryable failures with full-jitter backoff, then succeeds', async () => {
    let n = 0;
    const retries: RetryRecord[] = [];
    const r = await withRetries(async () => (++n < 3 ? fail('MODEL_ERR_SERVER', true) : { ok: true, value: 'ok' }), policy, { random: () => 0.999, retries });
    expect(r).toEqual({ value: 'ok', attempts: 3 });
    expect(retries).toEqual([
      { attempt: 1, code: 'MODEL_ERR_SERVER', status: 503, delay_ms: 7, retry_after: false },
      { attempt: 2, code: 'MODEL_ERR_SERVER', status: 503, delay_ms: 15, retry_after: false },
    ]);
  });

  it('waits exactly Retry-After when given, and gives up at once when it exceeds maxRetryAfterMs', async () => {
    const retries: RetryRecord[] = [];
    let n = 0;
    await withRetries(async () => (++n === 1 ? fail('MODEL_ERR_SERVER', true, 30) : { ok: true, value: 'x' }), policy, { random: () => 0, retries });
    expect(retries).toEqual([{ attempt: 1, code: 'MODEL_ERR_SERVER', status: 503, delay_ms: 30, retry_after: true }]);
    n = 0;
    const e = await withRetries(async () => (n++, fail('MODEL_ERR_SERVER', true, 10_000)), { ...policy, maxRetryAfterMs: 1000 }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'MODEL_ERR_SERVER', details: { attempts: 1 } });
    expect(n).toBe(1);
  });

  it('throws the last error after maxAttempts, and at once for a non-retryable one', async () => {
    let n = 0;
    const e = await withRetries(async () => (n++, fail('MODEL_ERR_SERVER', true)), policy, { random: () => 0 }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'MODEL_ERR_SERVER', details: { attempts: 4 } });
    expect(n).toBe(4);
    n = 0;
    const e2 = await withRetries(async () => (n++, fail('MODEL_ERR_REQUEST', false)), policy).catch((x: unknown) => x);
    expect(e2).toMatchObject({ code: 'MODEL_ERR_REQUEST', details: { attempts: 1 } });
    expect(n).toBe(1);
  });

  it('treats thrown timeouts and connection errors as retryable, other throws as final', async () => {
    let n = 0;
    const r = await withRetries(
      async () => {
        if (++n === 1) throw new VncuaError('MODEL_ERR_TIMEOUT', 't');
        if (n === 2) throw new VncuaError('MODEL_ERR_CONNECT', 'c');
        return { ok: true, value: n };
      },
      policy,
      { random: () => 0 },
    );
    expect(r).toEqual({ value: 3, attempts: 3 });
    n = 0;
    await expect(withRetries(async () => (n++, Promise.reject(new Error('bug'))), policy)).rejects.toThrow('bug');
    expect(n).toBe(1);
  });

  it('a backoff wait is cut short by the signal', async () => {
    const ac = new AbortController();
    const p = withRetries(async () => fail('MODEL_ERR_SERVER', true), retryPolicy({ baseDelayMs: 60_000, maxDelayMs: 60_000 }), { signal: ac.signal, random: () => 0.9 });
    setTimeout(() => ac.abort(new VncuaError('AGENT_ERR_CANCELLED', 'stop')), 20);
    await expect(p).rejects.toMatchObject({ code: 'AGENT_ERR_CANCELLED' });
  });
});
