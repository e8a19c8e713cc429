/**
 * Why a run stopped: finish({ status, reason }) with each stop status, needsHuman 'ask' turning a needs_human finish
 * into a help request answered by a person's takeover (the real live endpoint), and the cost caps (maxCostUsd, a
 * shared CostBudget) stopping a run before its next act(). On the in-process fake desktop (real RFB over TCP).
 */
import { describe, expect, it } from 'vitest';
import { readResult, readTrace } from '../trace/reader.ts';
import { STOP_STATUSES } from '../trace/schema.ts';
import { Agent } from './agent.ts';
import { CostBudget } from './cost-budget.ts';
import type { AgentOptions } from './options.ts';
import { useFakeRuns } from './test-helpers/fake-run.ts';
import { statusWhere } from './test-helpers/live.ts';

/** An agent whose act() is the given function (`call` counts from 1); `spend()` records a priced model call. */
class FnAgent extends Agent {
  calls = 0;
  constructor(
    opts: AgentOptions,
    private readonly fn: (a: FnAgent, call: number) => Promise<boolean>,
  ) {
    super(opts);
  }
  override act(): Promise<boolean> {
    return this.fn(this, ++this.calls);
  }
  /** Record one model call as adapters do (meta.model_calls), with `usd` as its cost (null: unpriced). */
  spend(usd: number | null): void {
    this.attachMeta({ model_calls: [{ latency_ms: 1, tokens: { input: 100, output: 10 }, ...(usd === null ? {} : { cost_usd: usd }) }] });
  }
}

describe('finish({ status, reason })', () => {
  const t = useFakeRuns();

  it.each(STOP_STATUSES)('status %s ends the run with that status and the reason, recorded on the finish entry', async (status) => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false, live: false }, async (a) => {
      await a.wait(0);
      await a.finish({ status, reason: `why: ${status}` });
      return true;
    });
    const r = await agent.run({ maxSteps: 5 });
    expect(r).toMatchObject({ status, reason: `why: ${status}`, steps: 1 });
    expect(r.error).toBeUndefined();
    expect(await readResult(outputDir)).toEqual(r);
    const { entries, partial } = await readTrace(outputDir);
    expect(partial).toBe(false);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['wait', { seconds: 0 }],
      ['finish', { status, reason: `why: ${status}` }],
    ]);
  });

  it("status 'finished' (or none) ends finished; a reason alone is kept; an unknown status or a non-string reason is ACTION_ERR_BAD_ARGUMENT", async () => {
    const desktop = await t.desktop();
    const plain = await new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false }, async (a) => {
      await a.finish({ status: 'finished' });
      return true;
    }).run();
    expect(plain.status).toBe('finished');
    expect(plain.reason).toBeUndefined();
    const withReason = await new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false }, async (a) => {
      await a.finish({ reason: 'the code is shown' });
      return true;
    }).run();
    expect(withReason).toMatchObject({ status: 'finished', reason: 'the code is shown' });
    for (const params of [{ status: 'done' }, { status: 'needs_human', reason: 3 }]) {
      const outputDir = await t.out();
      const r = await new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false, live: false }, async (a) => {
        await a.finish(params as never);
        return true;
      }).run();
      expect(r.status).toBe('error');
      expect(r.error?.code).toBe('ACTION_ERR_BAD_ARGUMENT');
      expect(r.reason).toBeUndefined();
      const { entries } = await readTrace(outputDir);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ action: 'finish', error: { code: 'ACTION_ERR_BAD_ARGUMENT' } });
    }
  });
});

describe("needsHuman: 'ask'", () => {
  const t = useFakeRuns();

  it('while served live, a needs_human finish asks for help and pauses; after a takeover and handback the agent goes on and finishes', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false, needsHuman: 'ask' }, async (a, call) => {
      if (call === 1) {
        await a.finish({ status: 'needs_human', reason: 'a login wall' });
        return true;
      }
      await a.finish();
      return true;
    });
    const run = agent.run({ maxSteps: 5 });
    // The real live endpoint (startLiveEndpoint) serves the run; the help request carries the reason.
    await statusWhere(agent, (s) => s.state === 'help', 'the help request');
    expect(agent.status()).toMatchObject({ state: 'help', help: 'a login wall', steps: 1 });
    await agent.takeover('ana');
    await statusWhere(agent, (s) => s.holder === 'ana', 'the takeover');
    expect(agent.calls).toBe(1);
    await agent.handback('ana');
    const r = await run;
    expect(r).toMatchObject({ status: 'finished', steps: 2, help_requests: 1 });
    expect(r.reason).toBeUndefined();
    const { entries } = await readTrace(outputDir);
    expect(entries.map((e) => [e.action, e.params, e.meta])).toEqual([
      ['finish', { status: 'needs_human', reason: 'a login wall' }, { help_requested: true }],
      ['finish', {}, undefined],
    ]);
  });

  it('without a live endpoint (live: false) a needs_human finish ends the run as needs_human', async () => {
    const desktop = await t.desktop();
    const r = await new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false, needsHuman: 'ask' }, async (a) => {
      await a.finish({ status: 'needs_human', reason: 'a CAPTCHA' });
      return true;
    }).run();
    expect(r).toMatchObject({ status: 'needs_human', reason: 'a CAPTCHA', steps: 1 });
    expect(r.help_requests).toBeUndefined();
  });
});

describe('cost caps', () => {
  const t = useFakeRuns();

  it('maxCostUsd: the run stops before the act() after the one that reached it, status cost_cap, trace valid, cost in result.json', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false, live: false, maxCostUsd: 0.05 }, async (a) => {
      a.spend(0.02);
      await a.wait(0);
      return false;
    });
    const r = await agent.run({ maxSteps: 10 });
    // 0.02, 0.04 (under the cap), 0.06 (reached): no 4th act().
    expect(agent.calls).toBe(3);
    expect(r).toMatchObject({ status: 'cost_cap', steps: 3, model_calls: 3, cost_usd: 0.06, error: { code: 'AGENT_ERR_COST_CAP' } });
    expect(r.error!.message).toContain('$0.06');
    expect(await readResult(outputDir)).toEqual(r);
    const { entries, partial } = await readTrace(outputDir);
    expect(partial).toBe(false);
    expect(entries).toHaveLength(3);
  });

  it('a shared CostBudget: what one run spent counts for the next, which stops before its first act() (EVAL_ERR_SUITE_COST_CAP)', async () => {
    const desktop = await t.desktop();
    const budget = new CostBudget(0.05);
    const spendTwice = async (a: FnAgent, call: number) => {
      a.spend(0.03);
      await a.wait(0);
      return call === 2;
    };
    const first = await new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false, costBudget: budget }, spendTwice).run();
    expect(first).toMatchObject({ status: 'finished', cost_usd: 0.06 });
    expect(budget.spentUsd).toBe(0.06);
    const secondDir = await t.out();
    const second = new FnAgent({ outputDir: secondDir, vncUrl: desktop.vncUrl, record: false, live: false, costBudget: budget }, spendTwice);
    const r = await second.run();
    expect(second.calls).toBe(0);
    expect(r).toMatchObject({ status: 'cost_cap', steps: 0, error: { code: 'EVAL_ERR_SUITE_COST_CAP' } });
    expect(await readResult(secondDir)).toEqual(r);
  });

  it('a cap with an unpriced model call ends the run error AGENT_ERR_COST_UNKNOWN (the cap cannot be kept)', async () => {
    const desktop = await t.desktop();
    const r = await new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false, maxCostUsd: 1 }, async (a) => {
      a.spend(null);
      await a.wait(0);
      return false;
    }).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'error', steps: 1, model_calls: 1, error: { code: 'AGENT_ERR_COST_UNKNOWN' } });
  });
});
