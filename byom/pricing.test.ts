/**
 * The pricing maths per API usage shape (the SDKs' types: openai's ResponseUsage and CompletionUsage,
 * @anthropic-ai/sdk's BetaUsage), the table lookup, and the validation of user prices.
 */
import { readFileSync } from 'node:fs';
import type { BetaUsage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { CompletionUsage } from 'openai/resources/completions';
import type { ResponseUsage } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { PRICE_TABLE, PRICES_AS_OF, costUsd, findPrice, pricesProblem, traceTokens, usageTokens, type ModelPrice } from './pricing.ts';

/** Dollars for `tokens` at `perMillion` USD per 1M tokens. */
const usd = (tokens: number, perMillion: number) => (tokens * perMillion) / 1e6;
const close = (a: number, b: number) => expect(a).toBeCloseTo(b, 12);

/** An Anthropic usage as the SDK types it, with the given counts. */
function anthropicUsage(u: Partial<BetaUsage>): BetaUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    cache_creation: null,
    fallback_credit: null,
    inference_geo: null,
    iterations: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
    ...u,
  };
}

describe('usageTokens and costUsd', () => {
  it('OpenAI Responses: cached tokens are part of input_tokens and billed at the cached rate; reasoning is part of output', () => {
    const usage: ResponseUsage = {
      input_tokens: 5000,
      input_tokens_details: { cached_tokens: 3000, cache_write_tokens: 0 },
      output_tokens: 400,
      output_tokens_details: { reasoning_tokens: 300 },
      total_tokens: 5400,
    };
    const t = usageTokens(usage)!;
    expect(t).toEqual({ uncached: 2000, cacheRead: 3000, cacheWrite: 0, cacheWrite1h: 0, output: 400, reasoning: 300 });
    expect(traceTokens(t)).toEqual({ input: 5000, output: 400, cached_input: 3000, reasoning: 300 });
    const gpt41 = findPrice('gpt-4.1-2025-04-14')!.price;
    close(costUsd(t, gpt41), usd(2000, 2) + usd(3000, 0.5) + usd(400, 8));
    // computer-use-preview lists no cached rate: cached tokens bill at the input rate.
    close(costUsd(t, findPrice('computer-use-preview-2025-03-11')!.price), usd(5000, 3) + usd(400, 12));
  });

  it('OpenAI Responses: cache_write_tokens are billed at cacheWrite when the price has one, else at input', () => {
    const usage: ResponseUsage = {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 100, cache_write_tokens: 600 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1010,
    };
    const t = usageTokens(usage)!;
    expect(t).toMatchObject({ uncached: 300, cacheRead: 100, cacheWrite: 600 });
    expect(traceTokens(t)).toEqual({ input: 1000, output: 10, cached_input: 100, cache_write: 600, reasoning: 0 });
    const p: ModelPrice = { input: 2, output: 8, cachedInput: 0.5, cacheWrite: 2.5 };
    close(costUsd(t, p), usd(300, 2) + usd(100, 0.5) + usd(600, 2.5) + usd(10, 8));
    close(costUsd(t, { input: 2, output: 8 }), usd(1000, 2) + usd(10, 8));
  });

  it('chat completions: prompt_tokens with prompt_tokens_details.cached_tokens, completion_tokens with reasoning', () => {
    const usage: CompletionUsage = {
      prompt_tokens: 1200,
      completion_tokens: 80,
      total_tokens: 1280,
      prompt_tokens_details: { cached_tokens: 1024 },
      completion_tokens_details: { reasoning_tokens: 64 },
    };
    const t = usageTokens(usage)!;
    expect(t).toEqual({ uncached: 176, cacheRead: 1024, cacheWrite: 0, cacheWrite1h: 0, output: 80, reasoning: 64 });
    expect(traceTokens(t)).toEqual({ input: 1200, output: 80, cached_input: 1024, reasoning: 64 });
    close(costUsd(t, findPrice('gpt-4o-2024-08-06')!.price), usd(176, 2.5) + usd(1024, 1.25) + usd(80, 10));
    // A local server's bare usage (the chat fake's): no details, no reasoning figure.
    expect(usageTokens({ prompt_tokens: 1001, completion_tokens: 21, total_tokens: 1022 })).toEqual({
      uncached: 1001,
      cacheRead: 0,
      cacheWrite: 0,
      cacheWrite1h: 0,
      output: 21,
      reasoning: null,
    });
  });

  it('Anthropic: input_tokens is only the uncached part; cache writes (5-minute and 1-hour) and reads come on top, each at its rate', () => {
    const usage = anthropicUsage({
      input_tokens: 50,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 },
      cache_read_input_tokens: 10_000,
      output_tokens: 500,
      output_tokens_details: { thinking_tokens: 200 },
    });
    const t = usageTokens(usage)!;
    expect(t).toEqual({ uncached: 50, cacheRead: 10_000, cacheWrite: 2000, cacheWrite1h: 1000, output: 500, reasoning: 200 });
    expect(traceTokens(t)).toEqual({ input: 13_050, output: 500, cached_input: 10_000, cache_write: 3000, reasoning: 200 });
    const sonnet = findPrice('claude-sonnet-4-5-20250929')!.price;
    close(costUsd(t, sonnet), usd(50, 3) + usd(2000, 3.75) + usd(1000, 6) + usd(10_000, 0.3) + usd(500, 15));
    // Without the per-TTL split every write is a 5-minute one; null cache fields count as none.
    expect(usageTokens(anthropicUsage({ input_tokens: 7, cache_creation_input_tokens: 30, output_tokens: 3 }))).toEqual({
      uncached: 7,
      cacheRead: 0,
      cacheWrite: 30,
      cacheWrite1h: 0,
      output: 3,
      reasoning: null,
    });
    expect(traceTokens(usageTokens(anthropicUsage({ input_tokens: 7, output_tokens: 3 }))!)).toEqual({ input: 7, output: 3 });
  });

  it('usage without token counts reads as null (no cost is computed from it)', () => {
    expect(usageTokens(undefined)).toBeNull();
    expect(usageTokens({})).toBeNull();
    expect(usageTokens({ input_tokens: 5 })).toBeNull();
    expect(usageTokens({ prompt_tokens: 5 })).toBeNull();
    expect(usageTokens({ input_tokens: -1, output_tokens: 2 })).toBeNull();
    expect(usageTokens({ cache_read_input_tokens: 5, output_tokens: 2 })).toBeNull();
  });

  it('costs are rounded to 1e-10 USD', () => {
    const t = usageTokens({ prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 })!;
    expect(costUsd(t, { input: 0.1, output: 0 })).toBe(1e-7);
    expect(costUsd(t, { input: 0.00001, output: 0 })).toBe(0);
  });
});

describe('findPrice', () => {
  it('exact name, then without a date suffix or -latest; the prices given win over the table', () => {
    expect(findPrice('computer-use-preview')).toMatchObject({ from: 'table', key: 'computer-use-preview', price: { input: 3, output: 12 } });
    expect(findPrice('computer-use-preview-2025-03-11')).toMatchObject({ from: 'table', key: 'computer-use-preview' });
    expect(findPrice('claude-sonnet-4-20250514')).toMatchObject({ key: 'claude-sonnet-4', price: { input: 3, cacheWrite: 3.75, cachedInput: 0.3, output: 15 } });
    expect(findPrice('claude-3-7-sonnet-latest')).toMatchObject({ key: 'claude-3-7-sonnet' });
    // A dated row of its own beats the family's.
    expect(findPrice('gpt-4o-2024-05-13')).toMatchObject({ key: 'gpt-4o-2024-05-13', price: { input: 5, output: 15 } });
    expect(findPrice('gpt-4o-2024-11-20')).toMatchObject({ key: 'gpt-4o', price: { input: 2.5, cachedInput: 1.25, output: 10 } });
    const mine = { 'gpt-4o': { input: 1, output: 2 }, 'my-vlm': { input: 0, output: 0 } };
    expect(findPrice('gpt-4o-2024-08-06', mine)).toEqual({ from: 'prices', key: 'gpt-4o', price: { input: 1, output: 2 } });
    expect(findPrice('my-vlm', mine)).toMatchObject({ from: 'prices' });
    expect(findPrice('gpt-4.1', mine)).toMatchObject({ from: 'table' });
  });

  it('no near guesses: a sibling, a prefix or another case is unknown', () => {
    for (const m of ['gpt-4o-mini-search', 'gpt-4', 'claude-sonnet', 'claude-sonnet-4-7', 'GPT-4O', 'computer-use', 'toString', 'constructor', ''])
      expect(findPrice(m), m).toBeNull();
  });

  it('every table row has rates >= 0, its provider page and the date it is known for', () => {
    expect(pricesProblem(PRICE_TABLE)).toMatch(/unknown key "provider"/); // rows carry more than a user's price
    for (const [model, row] of Object.entries(PRICE_TABLE)) {
      const { provider: _p, source, asOf, ...rates } = row;
      expect(pricesProblem({ [model]: rates }), model).toBeNull();
      expect(source).toMatch(row.provider === 'openai' ? /^https:\/\/platform\.openai\.com\// : /^https:\/\/platform\.claude\.com\//);
      expect(asOf).toBe(PRICES_AS_OF);
      if (row.provider === 'anthropic') {
        // Anthropic's multipliers: 5-minute writes 1.25x, 1-hour writes 2x, hits 0.1x the base input rate.
        close(row.cacheWrite!, row.input * 1.25);
        close(row.cacheWrite1h!, row.input * 2);
        close(row.cachedInput!, row.input * 0.1);
      }
    }
  });
});

describe('byom/README.md', () => {
  it("lists PRICE_TABLE's rows with their rates, and the date they are known for", () => {
    const readme = readFileSync(new URL('README.md', import.meta.url), 'utf8');
    const table = /<!-- prices:start[^>]*-->\n([\s\S]*?)<!-- prices:end -->/.exec(readme)?.[1];
    expect(table, 'the prices table between its markers').toBeTruthy();
    const rate = (x: number | undefined) => (x === undefined ? '—' : String(x));
    const rows = Object.entries(PRICE_TABLE).map(
      ([model, r]) => `| \`${model}\` | ${[r.input, r.cachedInput, r.cacheWrite, r.cacheWrite1h, r.output].map(rate).join(' | ')} | ${r.provider} |`,
    );
    expect(table!.trim().split('\n').slice(2)).toEqual(rows);
    expect(readme).toContain(`as known on ${PRICES_AS_OF}`);
  });
});

describe('pricesProblem', () => {
  it('accepts a map of model to rates, and says what is wrong otherwise', () => {
    expect(pricesProblem({})).toBeNull();
    expect(pricesProblem({ 'my-vlm': { input: 0, output: 0 }, x: { input: 1, output: 2, cachedInput: 0.1, cacheWrite: 1.25, cacheWrite1h: 2 } })).toBeNull();
    expect(pricesProblem([])).toMatch(/must be an object of model names/);
    expect(pricesProblem('x')).toMatch(/must be an object of model names/);
    expect(pricesProblem({ ' ': { input: 1, output: 1 } })).toBe('has an empty model name');
    expect(pricesProblem({ m: 3 })).toBe('["m"] must be { input, output, cachedInput?, cacheWrite?, cacheWrite1h? } in USD per 1M tokens');
    expect(pricesProblem({ m: { output: 1 } })).toBe('["m"] needs input (USD per 1M tokens)');
    expect(pricesProblem({ m: { input: '3', output: 1 } })).toBe('["m"].input must be a number >= 0 (USD per 1M tokens), not "3"');
    expect(pricesProblem({ m: { input: 1, output: 1, cacheWrite: -2 } })).toMatch(/\["m"\]\.cacheWrite must be a number >= 0/);
    expect(pricesProblem({ m: { input: 1, output: 1, cache_read: 1 } })).toMatch(/unknown key "cache_read" \(the rates are input, output, cachedInput, cacheWrite, cacheWrite1h\)/);
  });
});
