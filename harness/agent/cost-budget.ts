/**
 * A cost cap shared by several runs (`vncua eval --max-suite-cost USD`): every run given the same `CostBudget`
 * (AgentOptions.costBudget) adds the cost of each model call it records (meta.model_calls[].cost_usd) as it
 * is attached; once the sum reaches `limitUsd`, each of those runs stops before its next model call (status
 * `cost_cap`) and the eval runner starts no new run. Calls in flight when the cap is reached still finish and
 * count, so the total may pass the cap by the calls made at that moment (one per running run at most).
 * In-process only: `vncua eval --queue` refuses --max-suite-cost (QUEUE_ERR_SUITE_COST), its workers being other processes.
 */
import { VncuaError } from '../errors.ts';

/** The spend of a set of runs against one cap in USD. */
export class CostBudget {
  /** The cap in USD (> 0). */
  readonly limitUsd: number;
  #spent = 0;

  /** A budget of `limitUsd` (a positive finite number; else AGENT_ERR_BAD_OPTIONS). */
  constructor(limitUsd: number) {
    if (typeof limitUsd !== 'number' || !Number.isFinite(limitUsd) || limitUsd <= 0) {
      throw new VncuaError('AGENT_ERR_BAD_OPTIONS', `A cost budget must be a positive number of USD; got ${String(limitUsd)}.`, {
        details: { field: 'limitUsd', value: limitUsd },
      });
    }
    this.limitUsd = limitUsd;
  }

  /** USD spent so far by the runs sharing this budget. */
  get spentUsd(): number {
    return Math.round(this.#spent * 1e10) / 1e10;
  }

  /** The cap is reached: no new model call, no new run. */
  get reached(): boolean {
    return this.#spent >= this.limitUsd;
  }

  /** Count `usd` spent (ignored unless a finite number > 0). */
  add(usd: number): void {
    if (typeof usd === 'number' && Number.isFinite(usd) && usd > 0) this.#spent += usd;
  }
}
