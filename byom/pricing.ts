/**
 * What a model call cost: list prices per model (`PRICE_TABLE`, USD per 1M tokens), the usage each API
 * reports read into one token breakdown (`usageTokens`), and the cost of that usage at a price
 * (`costUsd`). I/O-free; byom/model-agent.ts puts the result on each `meta.model_calls` item as
 * `tokens` and `cost_usd` (harness/trace/model-calls.ts sums them into result.json).
 *
 * Usage shapes (as the SDKs type them, and as the fake servers under byom/ send them):
 * - OpenAI Responses: `input_tokens` (all of the prompt), `input_tokens_details.cached_tokens` (cache
 *   hits) and `.cache_write_tokens`, `output_tokens` (reasoning included), `output_tokens_details.reasoning_tokens`;
 * - OpenAI chat completions (and compatible servers): `prompt_tokens`, `prompt_tokens_details.cached_tokens`
 *   and `.cache_write_tokens`, `completion_tokens` (reasoning included), `completion_tokens_details.reasoning_tokens`;
 * - Anthropic Messages: `input_tokens` (only the uncached part), `cache_creation_input_tokens` (split
 *   by `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens` when given),
 *   `cache_read_input_tokens`, `output_tokens` (thinking included), `output_tokens_details.thinking_tokens`.
 * The shape is told by its fields (`prompt_tokens`: chat; a `cache_*_input_tokens` key: Anthropic; else
 * `input_tokens`: Responses), so the http adapter's free-form `usage` is read too when it uses one of them.
 *
 * Prices: `PRICE_TABLE` holds the list prices of the models the adapters target by default and their
 * common siblings, each row with its provider's pricing page and the date it is known for. They were
 * written from what was known on that date, not read from the live pages: check them before relying on
 * a figure, and give your own with the adapters' `prices` option or `--prices FILE`. A model is found
 * by its exact name, then with a date suffix (`-2025-03-11`, `-20250929`) or `-latest` removed; an
 * unknown model gets no cost (never a guess). Rates left out of a price (cachedInput, cacheWrite,
 * cacheWrite1h) bill their tokens at `input`, as the providers do for models without a cache rate.
 * Not modelled: batch and priority tiers, long-context surcharges (prompts over 200K tokens on some
 * Claude models), regional or negotiated rates.
 */

/** A model's rates in USD per 1M tokens. */
export interface ModelPrice {
  /** Uncached prompt tokens. */
  input: number;
  /** Generated tokens (reasoning and thinking included). */
  output: number;
  /** Prompt tokens read from the cache (OpenAI's cached input, Anthropic's cache hits); default `input`. */
  cachedInput?: number;
  /** Prompt tokens written to the cache (Anthropic's 5-minute cache writes, OpenAI's cache_write_tokens); default `input`. */
  cacheWrite?: number;
  /** Prompt tokens written to Anthropic's 1-hour cache; default `input`. */
  cacheWrite1h?: number;
}

/** Per-model rates, keyed by the model name the API reports (or the adapter sent). */
export type Prices = Readonly<Record<string, ModelPrice>>;

/** A row of the built-in table: the rates, and where and when they are from. */
export interface PriceRow extends ModelPrice {
  provider: 'openai' | 'anthropic';
  /** The provider's pricing page. */
  source: string;
  /** The date the rates are known for (YYYY-MM-DD), not a date they were read from the page. */
  asOf: string;
}

const OPENAI_PAGE = 'https://platform.openai.com/docs/pricing';
const ANTHROPIC_PAGE = 'https://platform.claude.com/docs/en/about-claude/pricing';
/** The date the built-in rates are known for. */
export const PRICES_AS_OF = '2026-11-27';

const openai = (input: number, cachedInput: number | undefined, output: number): PriceRow => ({
  provider: 'openai',
  input,
  ...(cachedInput === undefined ? {} : { cachedInput }),
  output,
  source: OPENAI_PAGE,
  asOf: PRICES_AS_OF,
});
/** Anthropic: base input, 5-minute cache write (1.25x), 1-hour cache write (2x), cache hit (0.1x), output. */
const anthropic = (input: number, cacheWrite: number, cacheWrite1h: number, cachedInput: number, output: number): PriceRow => ({
  provider: 'anthropic',
  input,
  cacheWrite,
  cacheWrite1h,
  cachedInput,
  output,
  source: ANTHROPIC_PAGE,
  asOf: PRICES_AS_OF,
});

const SONNET = anthropic(3, 3.75, 6, 0.3, 15);
const OPUS_4 = anthropic(15, 18.75, 30, 1.5, 75);

/** List prices, USD per 1M tokens, as known on PRICES_AS_OF (see the file comment: check before relying on them). */
export const PRICE_TABLE: Readonly<Record<string, PriceRow>> = Object.freeze({
  // OpenAI: computer use (no cached-input rate listed), GPT-4o, GPT-4.1 and GPT-5 families.
  'computer-use-preview': openai(3, undefined, 12),
  'gpt-4o': openai(2.5, 1.25, 10),
  'gpt-4o-2024-05-13': openai(5, undefined, 15),
  'gpt-4o-mini': openai(0.15, 0.075, 0.6),
  'gpt-4.1': openai(2, 0.5, 8),
  'gpt-4.1-mini': openai(0.4, 0.1, 1.6),
  'gpt-4.1-nano': openai(0.1, 0.025, 0.4),
  'gpt-5': openai(1.25, 0.125, 10),
  'gpt-5-mini': openai(0.25, 0.025, 2),
  'gpt-5-nano': openai(0.05, 0.005, 0.4),
  // Anthropic: the models that take the computer-use tool.
  'claude-sonnet-4-6': SONNET,
  'claude-sonnet-4-5': SONNET,
  'claude-sonnet-4-0': SONNET,
  'claude-sonnet-4': SONNET,
  'claude-3-7-sonnet': SONNET,
  'claude-opus-4-5': anthropic(5, 6.25, 10, 0.5, 25),
  'claude-opus-4-1': OPUS_4,
  'claude-opus-4-0': OPUS_4,
  'claude-opus-4': OPUS_4,
  'claude-haiku-4-5': anthropic(1, 1.25, 2, 0.1, 5),
});

/** `model` with a trailing date (`-2025-03-11`, `-20250929`) or `-latest` removed; null when it has none. */
function withoutVersion(model: string): string | null {
  const m = /^(.+?)-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$/.exec(model);
  return m ? m[1]! : null;
}

/** Where a price was found. */
export interface FoundPrice {
  price: ModelPrice;
  /** `prices`: the user's; `table`: PRICE_TABLE. */
  from: 'prices' | 'table';
  /** The key it was found under. */
  key: string;
}

/** The price of `model`: the user's `prices` first, then the table; each by exact name, then without its date suffix. Null when unknown. */
export function findPrice(model: string, prices?: Prices): FoundPrice | null {
  const names = [model, withoutVersion(model)].filter((n): n is string => n !== null);
  for (const [from, table] of [
    ['prices', prices],
    ['table', PRICE_TABLE],
  ] as const) {
    if (!table) continue;
    for (const key of names) if (Object.hasOwn(table, key)) return { price: table[key]!, from, key };
  }
  return null;
}

/** One call's tokens, split as the providers bill them. */
export interface TokenBreakdown {
  /** Prompt tokens billed at `input`. */
  uncached: number;
  /** Prompt tokens read from the cache. */
  cacheRead: number;
  /** Prompt tokens written to the (5-minute) cache. */
  cacheWrite: number;
  /** Prompt tokens written to the 1-hour cache. */
  cacheWrite1h: number;
  /** Generated tokens, reasoning included. */
  output: number;
  /** Reasoning (thinking) tokens, part of `output`; null when the API did not say. */
  reasoning: number | null;
}

const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** The usage an API reported, read into a TokenBreakdown (see the file comment for the shapes); null when it has no token counts. */
export function usageTokens(usage: unknown): TokenBreakdown | null {
  const u = obj(usage);
  if (n(u.prompt_tokens) !== null) {
    // Chat completions: prompt_tokens counts the whole prompt, cached and cache writes included.
    const details = obj(u.prompt_tokens_details);
    return openAIInput(n(u.prompt_tokens)!, n(details.cached_tokens), n(details.cache_write_tokens), n(u.completion_tokens), n(obj(u.completion_tokens_details).reasoning_tokens));
  }
  if ('cache_creation_input_tokens' in u || 'cache_read_input_tokens' in u) {
    // Anthropic: input_tokens is only what follows the last cache breakpoint; the cache tokens come on top.
    const input = n(u.input_tokens);
    const output = n(u.output_tokens);
    if (input === null || output === null) return null;
    const written = n(u.cache_creation_input_tokens) ?? 0;
    const oneHour = Math.min(written, n(obj(u.cache_creation).ephemeral_1h_input_tokens) ?? 0);
    return {
      uncached: input,
      cacheRead: n(u.cache_read_input_tokens) ?? 0,
      cacheWrite: written - oneHour,
      cacheWrite1h: oneHour,
      output,
      reasoning: n(obj(u.output_tokens_details).thinking_tokens),
    };
  }
  if (n(u.input_tokens) !== null) {
    // Responses: input_tokens counts the whole prompt; the details say how much of it hit or filled the cache.
    const details = obj(u.input_tokens_details);
    return openAIInput(n(u.input_tokens)!, n(details.cached_tokens), n(details.cache_write_tokens), n(u.output_tokens), n(obj(u.output_tokens_details).reasoning_tokens));
  }
  return null;
}

function openAIInput(total: number, cached: number | null, written: number | null, output: number | null, reasoning: number | null): TokenBreakdown | null {
  if (output === null) return null;
  const cacheRead = Math.min(total, cached ?? 0);
  const cacheWrite = Math.min(total - cacheRead, written ?? 0);
  return { uncached: total - cacheRead - cacheWrite, cacheRead, cacheWrite, cacheWrite1h: 0, output, reasoning };
}

/** The `tokens` a `meta.model_calls` item carries (harness/trace/model-calls.ts ModelCallTokens): input all of the prompt, output all generated. */
export function traceTokens(t: TokenBreakdown): { input: number; output: number; cached_input?: number; cache_write?: number; reasoning?: number } {
  const out: ReturnType<typeof traceTokens> = { input: t.uncached + t.cacheRead + t.cacheWrite + t.cacheWrite1h, output: t.output };
  if (t.cacheRead > 0) out.cached_input = t.cacheRead;
  if (t.cacheWrite + t.cacheWrite1h > 0) out.cache_write = t.cacheWrite + t.cacheWrite1h;
  if (t.reasoning !== null) out.reasoning = t.reasoning;
  return out;
}

/** USD for `t` at `price` (rates per 1M tokens; a rate left out bills at `input`), rounded to 1e-10. */
export function costUsd(t: TokenBreakdown, price: ModelPrice): number {
  const micro =
    t.uncached * price.input +
    t.cacheRead * (price.cachedInput ?? price.input) +
    t.cacheWrite * (price.cacheWrite ?? price.input) +
    t.cacheWrite1h * (price.cacheWrite1h ?? price.input) +
    t.output * price.output;
  return Math.round((micro / 1e6) * 1e10) / 1e10;
}

const RATE_KEYS = ['input', 'output', 'cachedInput', 'cacheWrite', 'cacheWrite1h'] as const;

/** What is wrong with `value` as Prices (a message naming the model and the rate), or null when it is fine. */
export function pricesProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'must be an object of model names to { input, output, cachedInput?, cacheWrite?, cacheWrite1h? } in USD per 1M tokens';
  for (const [model, price] of Object.entries(value)) {
    const at = `[${JSON.stringify(model)}]`;
    if (model.trim() === '') return 'has an empty model name';
    if (typeof price !== 'object' || price === null || Array.isArray(price))
      return `${at} must be { input, output, cachedInput?, cacheWrite?, cacheWrite1h? } in USD per 1M tokens`;
    for (const key of Object.keys(price)) {
      if (!(RATE_KEYS as readonly string[]).includes(key)) return `${at} has an unknown key ${JSON.stringify(key)} (the rates are ${RATE_KEYS.join(', ')})`;
    }
    for (const key of RATE_KEYS) {
      const rate = (price as Record<string, unknown>)[key];
      if (rate === undefined && (key === 'input' || key === 'output')) return `${at} needs ${key} (USD per 1M tokens)`;
      if (rate !== undefined && n(rate) === null) return `${at}.${key} must be a number >= 0 (USD per 1M tokens), not ${JSON.stringify(rate)}`;
    }
  }
  return null;
}
