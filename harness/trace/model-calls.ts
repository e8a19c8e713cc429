/**
 * The generic part of a model call as adapters record it in a trace entry's `meta.model_calls`
 * (byom/model-agent.ts writes them; any agent may): besides the API's own `usage`, each call may carry
 * - `tokens`: `{ input, output, cached_input?, cache_write?, reasoning? }`, the usage read the same way
 *   for every API: `input` counts every prompt token (uncached, cache hits and cache writes), `output`
 *   every generated token (reasoning included), `cached_input` / `cache_write` / `reasoning` the parts;
 * - `cost_usd`: what the call cost at list prices (absent when the model has no known price).
 *
 * The harness reads only these fields, never an API's usage shape: `ModelUsageTally` sums them over a
 * run into result.json's `model_calls`, `input_tokens`, `output_tokens` and `cost_usd`, and the readers
 * below serve `vncua export`, `vncua score` and the viewer.
 */

/** A model call's normalized token counts (`tokens` on a `meta.model_calls` item). */
export interface ModelCallTokens {
  /** Every prompt token: uncached, cache hits and cache writes. */
  input: number;
  /** Every generated token, reasoning included. */
  output: number;
  /** Prompt tokens read from the provider's cache (part of `input`). */
  cached_input?: number;
  /** Prompt tokens written to the provider's cache (part of `input`). */
  cache_write?: number;
  /** Reasoning tokens (part of `output`). */
  reasoning?: number;
}

/** result.json's model fields: set when the run made model calls. */
export interface ModelUsageTotals {
  /** Model calls made during the run. */
  model_calls: number;
  /** Prompt tokens over all calls; absent unless every call reported its tokens. */
  input_tokens?: number;
  /** Generated tokens over all calls; absent unless every call reported its tokens. */
  output_tokens?: number;
  /** USD over all calls at list prices; absent unless every call was priced. */
  cost_usd?: number;
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/** Round a USD amount to 1e-10 (sums of per-token prices otherwise show float noise). */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}

/** The items of `meta.model_calls` that are objects (none when `meta` has no such array). */
export function modelCallsOf(meta: unknown): Record<string, unknown>[] {
  if (typeof meta !== 'object' || meta === null) return [];
  const calls = (meta as Record<string, unknown>).model_calls;
  return Array.isArray(calls) ? calls.filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null && !Array.isArray(c)) : [];
}

/** A call's `tokens.input` and `tokens.output`, or null when it has no normalized tokens. */
export function callTokens(call: Record<string, unknown>): { input: number; output: number } | null {
  const t = call.tokens;
  if (typeof t !== 'object' || t === null) return null;
  const input = count((t as Record<string, unknown>).input);
  const output = count((t as Record<string, unknown>).output);
  return input === null || output === null ? null : { input, output };
}

/** A call's `cost_usd`, or null when it was not priced. */
export function callCost(call: Record<string, unknown>): number | null {
  return count(call.cost_usd);
}

/** Sums of model calls over a run (or a step): the call count, and tokens and cost while every call has them. */
export class ModelUsageTally {
  #calls = 0;
  #input = 0;
  #output = 0;
  #cost = 0;
  #allTokens = true;
  #allPriced = true;

  /** Count the `model_calls` items of one `meta` object (anything else is ignored). */
  addMeta(meta: unknown): void {
    for (const call of modelCallsOf(meta)) this.addCall(call);
  }

  /** Count one call. */
  addCall(call: Record<string, unknown>): void {
    this.#calls++;
    const t = callTokens(call);
    if (t) {
      this.#input += t.input;
      this.#output += t.output;
    } else this.#allTokens = false;
    const c = callCost(call);
    if (c !== null) this.#cost += c;
    else this.#allPriced = false;
  }

  /** USD over the calls counted that were priced. */
  get pricedUsd(): number {
    return roundUsd(this.#cost);
  }

  /** Some counted call had no cost_usd. */
  get hasUnpriced(): boolean {
    return !this.#allPriced;
  }

  /** The totals, or null when no call was counted. */
  totals(): ModelUsageTotals | null {
    if (this.#calls === 0) return null;
    const out: ModelUsageTotals = { model_calls: this.#calls };
    if (this.#allTokens) {
      out.input_tokens = this.#input;
      out.output_tokens = this.#output;
    }
    if (this.#allPriced) out.cost_usd = roundUsd(this.#cost);
    return out;
  }
}
