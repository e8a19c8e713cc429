/** The generic model-call fields (tokens, cost_usd) and their sums, as result.json, export and score read them. */
import { describe, expect, it } from 'vitest';
import { ModelUsageTally, callCost, callTokens, modelCallsOf, roundUsd } from './model-calls.ts';

describe('model calls in meta', () => {
  it('modelCallsOf keeps the object items of meta.model_calls only', () => {
    expect(modelCallsOf(undefined)).toEqual([]);
    expect(modelCallsOf({ model_calls: 'x' })).toEqual([]);
    expect(modelCallsOf({ model_calls: [{ a: 1 }, null, 3, [1], { b: 2 }] })).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('callTokens and callCost read the normalized fields only, never a usage shape', () => {
    expect(callTokens({ tokens: { input: 10, output: 2, cached_input: 4 } })).toEqual({ input: 10, output: 2 });
    expect(callTokens({ usage: { input_tokens: 10, output_tokens: 2 } })).toBeNull();
    expect(callTokens({ tokens: { input: 10 } })).toBeNull();
    expect(callTokens({ tokens: { input: -1, output: 2 } })).toBeNull();
    expect(callCost({ cost_usd: 0.25 })).toBe(0.25);
    expect(callCost({ cost_usd: '0.25' })).toBeNull();
    expect(callCost({})).toBeNull();
  });

  it('the tally sums tokens and cost while every call has them, and counts every call', () => {
    const t = new ModelUsageTally();
    expect(t.totals()).toBeNull();
    t.addMeta({
      model_calls: [
        { tokens: { input: 100, output: 10 }, cost_usd: 0.1 },
        { tokens: { input: 200, output: 20 }, cost_usd: 0.2 },
      ],
    });
    expect(t.totals()).toEqual({ model_calls: 2, input_tokens: 300, output_tokens: 30, cost_usd: 0.3 });
    t.addMeta({ note: 'no calls here' });
    t.addCall({ tokens: { input: 1, output: 1 } });
    expect(t.totals()).toEqual({ model_calls: 3, input_tokens: 301, output_tokens: 31 });
    t.addCall({ cost_usd: 1 });
    expect(t.totals()).toEqual({ model_calls: 4 });
  });

  it('roundUsd drops float noise below 1e-10 USD', () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(0.00000123456789)).toBe(0.0000012346);
  });
});
