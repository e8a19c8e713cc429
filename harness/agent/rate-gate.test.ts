/**
 * The rate gate's rules (`--rate-limit` specs: good ones, and a one-line QUEUE_ERR_BAD_RATE_LIMIT for each bad one)
 * and the in-process LocalRateGate: the window rule on its own grant times, backoffs per model, cancellation and
 * timeouts that never count a request.
 */
import { describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { LocalRateGate, backoffKey, parseRateLimit, parseRateLimits, rulesFor } from './rate-gate.ts';

const CALL = { adapter: 'chat', model: 'm' };

/** The first pair (i, i + limit) of sorted grants closer than `periodMs`: a span of one period holding limit + 1. */
function windowViolation(grants: number[], limit: number, periodMs: number): [number, number] | null {
  const s = [...grants].sort((a, b) => a - b);
  for (let i = 0; i + limit < s.length; i++) if (s[i + limit]! - s[i]! < periodMs) return [s[i]!, s[i + limit]!];
  return null;
}

describe('parseRateLimit', () => {
  it.each([
    ['60/min', { limit: 60, periodMs: 60_000, scope: null }],
    ['10/s', { limit: 10, periodMs: 1000, scope: null }],
    ['3600/h', { limit: 3600, periodMs: 3_600_000, scope: null }],
    ['60/min:gpt-5', { limit: 60, periodMs: 60_000, scope: 'gpt-5' }],
    [' 5/SEC:anthropic ', { limit: 5, periodMs: 1000, scope: 'anthropic' }],
    ['30/minute:llama3.1:8b', { limit: 30, periodMs: 60_000, scope: 'llama3.1:8b' }],
    ['2/hour:openai/gpt-4o', { limit: 2, periodMs: 3_600_000, scope: 'openai/gpt-4o' }],
  ])('%s', (spec, rule) => {
    expect(parseRateLimit(spec)).toEqual({ ...rule, spec: spec.trim() });
  });

  it.each([
    ['60', 'expected N/unit'],
    ['60/mn', 'the unit "mn" is not s, min or h'],
    ['1.5/s', 'the count "1.5" is not a whole number'],
    ['x/min', 'is not a whole number'],
    ['0/s', 'the count must be 1..1000000'],
    ['2000000/s', 'the count must be 1..1000000'],
    ['60/min:', 'the name after ":"'],
    ['60/min:gpt 5', 'the name after ":"'],
    ['/min', 'is not a whole number'],
  ])('%s is QUEUE_ERR_BAD_RATE_LIMIT: %s', (spec, why) => {
    let err: unknown;
    try {
      parseRateLimit(spec);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(VncuaError);
    const e = err as VncuaError;
    expect(e.code).toBe('QUEUE_ERR_BAD_RATE_LIMIT');
    expect(e.message).toContain(why);
    expect(e.message).toContain(JSON.stringify(spec));
    expect(e.message).toContain('e.g. 60/min, 10/s, 3600/h');
    expect(e.message).not.toContain('\n');
  });

  it('parseRateLimits takes repeated flags and comma-separated rules; an empty one is an error', () => {
    expect(parseRateLimits(['60/min,10/s:gpt-5', '100/h:chat']).map((r) => r.spec)).toEqual(['60/min', '10/s:gpt-5', '100/h:chat']);
    expect(() => parseRateLimits('60/min,')).toThrow(expect.objectContaining({ code: 'QUEUE_ERR_BAD_RATE_LIMIT' }));
  });

  it('rulesFor: the global rules and those naming the call model or adapter; backoffs by model, else adapter', () => {
    const rules = parseRateLimits('100/min,60/min:gpt-5,10/s:chat,5/s:anthropic');
    expect(rulesFor(rules, { adapter: 'chat', model: 'gpt-5' }).map((r) => r.spec)).toEqual(['100/min', '60/min:gpt-5', '10/s:chat']);
    expect(rulesFor(rules, { adapter: 'http' }).map((r) => r.spec)).toEqual(['100/min']);
    expect(backoffKey({ adapter: 'chat', model: 'gpt-5' })).toBe('model:gpt-5');
    expect(backoffKey({ adapter: 'http' })).toBe('adapter:http');
  });
});

describe('LocalRateGate', () => {
  it('20/s from 6 concurrent callers: 50 grants, never 21 within any 1 s span, and the limit is reached', async () => {
    const gate = new LocalRateGate('20/s');
    const grants: number[] = [];
    let left = 50;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (left-- > 0) grants.push((await gate.acquire(CALL)).at);
      }),
    );
    expect(grants).toHaveLength(50);
    expect(windowViolation(grants, 20, 1000)).toBeNull();
    expect(windowViolation(grants, 19, 1000)).not.toBeNull();
  });

  it('a backoff holds the calls of its model until it ends, not those of another model; listeners hear it', async () => {
    const gate = new LocalRateGate();
    const heard: unknown[] = [];
    const stop = gate.onBackoff((e) => heard.push(e));
    const b = await gate.backoff(CALL, 400, 'HTTP 429');
    expect((await gate.acquire({ adapter: 'chat', model: 'other' })).at).toBeLessThan(b.until);
    expect((await gate.acquire(CALL)).at).toBeGreaterThanOrEqual(b.until);
    stop();
    await gate.backoff(CALL, 1, 'not heard');
    expect(heard).toEqual([{ call: CALL, ms: 400, reason: 'HTTP 429' }]);
  });

  it('cancellation and a timeout reject with their codes and never count the request', async () => {
    const gate = new LocalRateGate('1/min');
    await gate.acquire(CALL);
    const ctl = new AbortController();
    const waiting = gate.acquire(CALL, { signal: ctl.signal });
    ctl.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'AGENT_ERR_CANCELLED' });
    const reason = new VncuaError('AGENT_ERR_BUDGET_EXCEEDED', 'budget');
    await expect(gate.acquire(CALL, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(gate.acquire(CALL, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'QUEUE_ERR_RATE_LIMIT_TIMEOUT' });
    expect(gate.admitted(CALL)).toBe(1);
  });

  it('specs given to the constructor are parsed (a bad one is QUEUE_ERR_BAD_RATE_LIMIT)', () => {
    expect(new LocalRateGate(['60/min', '10/s:gpt-5']).rules.map((r) => r.limit)).toEqual([60, 10]);
    expect(() => new LocalRateGate('ten/s')).toThrow(expect.objectContaining({ code: 'QUEUE_ERR_BAD_RATE_LIMIT' }));
  });
});
