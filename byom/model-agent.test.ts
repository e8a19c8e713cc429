/**
 * The loop guards every adapter shares: the same action N times → stuck, N identical screens
 * with actions in between → stuck, the wall-clock budget → timeout; and model-call accounting.
 * Pure logic above the RFB client: it runs on the in-process fake desktop (no X server, no browser).
 */
import { describe, expect, it } from 'vitest';
import { useFakeRuns } from '../harness/agent/test-helpers/fake-run.ts';
import type { FakeDesktopOptions } from '../harness/rfb/test-helpers/fake-desktop.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import type { ActionStep } from '../harness/agent/index.ts';
import { statusWhere, until } from '../harness/agent/test-helpers/live.ts';
import { ModelAgent, type ModelAgentOptions } from './model-agent.ts';

/** A "model" that returns the next step of a list (or repeats the last one), observing before each. */
class ListAgent extends ModelAgent {
  observations = 0;
  constructor(
    options: ModelAgentOptions,
    private readonly next: (call: number) => ActionStep | null,
    private readonly look = false,
  ) {
    super(options);
  }
  calls = 0;
  override async act(): Promise<boolean> {
    if (this.look) {
      await this.observe({ cursor: false });
      this.observations++;
    }
    const step = this.next(++this.calls);
    this.noteModelCall({ latencyMs: 1.5, usage: { input_tokens: 10, output_tokens: 2 }, responseId: `r${this.calls}` });
    if (!step) return true;
    await this.perform(step);
    return false;
  }
}

describe('ModelAgent guards', () => {
  const t = useFakeRuns();
  const out = () => t.out('vncua-byom-');
  const fakeDesktop = (options: FakeDesktopOptions = {}) => t.desktop(options);

  it('the same action stuckRepeats times in a row ends the run as stuck; calls are accounted in meta', async () => {
    const desktop = await fakeDesktop();
    const dir = await out();
    const r = await new ListAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false, stuckRepeats: 3 }, (i) =>
      i === 1 ? { action: 'wait', params: { seconds: 0.01 } } : { action: 'wait', params: { seconds: 0 } },
    ).run({ maxSteps: 20 });
    expect(r.status).toBe('stuck');
    expect(r.error?.code).toBe('AGENT_ERR_STUCK');
    expect(await readResult(dir)).toEqual(r);
    const { entries } = await readTrace(dir);
    // One different wait, then three identical ones (the third trips the guard).
    expect(entries.map((e) => e.params)).toEqual([{ seconds: 0.01 }, { seconds: 0 }, { seconds: 0 }, { seconds: 0 }]);
    // No model name: the tokens are read, no cost, and the first entry says why (once).
    expect(entries[1]!.meta).toEqual({ model_calls: [{ latency_ms: 1.5, usage: { input_tokens: 10, output_tokens: 2 }, response_id: 'r2', tokens: { input: 10, output: 2 } }] });
    expect(entries[0]!.meta!.price_notes).toEqual([expect.stringContaining('named no model')]);
    expect(entries.slice(1).every((e) => e.meta!.price_notes === undefined)).toBe(true);
    expect(r).toMatchObject({ model_calls: 4, input_tokens: 40, output_tokens: 8 });
    expect(r).not.toHaveProperty('cost_usd');
  });

  it('cost_usd per call from the prices option (before the table) or the table; an unknown model gets one note a run and no cost', async () => {
    const desktop = await fakeDesktop();
    const steps = (i: number): ActionStep | null => (i > 3 ? null : { action: 'wait', params: { seconds: i / 100 } });
    const base = { vncUrl: desktop.vncUrl, record: false } as const;

    // computer-use-preview from the table: 10 input at $3/M + 2 output at $12/M per call.
    const table = await out();
    const r1 = await new ListAgent({ ...base, outputDir: table, model: 'computer-use-preview' }, steps).run({ maxSteps: 10 });
    expect(r1).toMatchObject({ status: 'finished', model_calls: 4, input_tokens: 40, output_tokens: 8, cost_usd: 4 * (10 * 3 + 2 * 12) * 1e-6 });
    const e1 = (await readTrace(table)).entries;
    expect(e1[0]!.meta!.model_calls).toEqual([expect.objectContaining({ tokens: { input: 10, output: 2 }, cost_usd: 0.000054 })]);
    expect(e1[0]!.meta!.price_notes).toBeUndefined();
    expect(await readResult(table)).toEqual(r1);

    // The prices option wins over the table.
    const own = await out();
    const r2 = await new ListAgent({ ...base, outputDir: own, model: 'computer-use-preview', prices: { 'computer-use-preview': { input: 100, output: 1000 } } }, steps).run({
      maxSteps: 10,
    });
    expect(r2.cost_usd).toBe(4 * (10 * 100 + 2 * 1000) * 1e-6);

    // Unknown: tokens, no cost, one note naming the model and the way to price it; a second run notes it again.
    const unknown = new ListAgent({ ...base, outputDir: await out(), model: 'my-vlm' }, steps);
    const r3 = await unknown.run({ maxSteps: 10 });
    expect(r3).toMatchObject({ model_calls: 4, input_tokens: 40 });
    expect(r3).not.toHaveProperty('cost_usd');
    const e3 = (await readTrace(unknown.options.outputDir)).entries;
    // Three entries: the fourth call answered "done" with no action, so it has no entry (result.json still counts it).
    expect(e3.map((e) => e.meta!.price_notes)).toEqual([
      [expect.stringMatching(/No price known for model "my-vlm".*prices option.*--prices FILE.*\{"my-vlm":\{"input":1,"output":4\}\}/)],
      undefined,
      undefined,
    ]);
    expect(e3.every((e) => (e.meta!.model_calls as Array<Record<string, unknown>>).every((c) => c.cost_usd === undefined))).toBe(true);
  });

  it('a bad prices option is AGENT_ERR_BAD_OPTIONS naming the model and the rate', () => {
    const make = (prices: unknown) => () => new ListAgent({ outputDir: '/tmp/x', vncUrl: 'ws://127.0.0.1:1', prices } as ModelAgentOptions, () => null);
    expect(make({ m: { input: -1, output: 1 } })).toThrow(
      expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', message: expect.stringContaining('prices: ["m"].input must be a number >= 0') }),
    );
    expect(make({ m: { input: 1 } })).toThrow(expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', message: expect.stringContaining('["m"] needs output') }));
    expect(make({ m: { input: 1, output: 1, cacheRead: 1 } })).toThrow(expect.objectContaining({ message: expect.stringContaining('unknown key "cacheRead"') }));
    expect(make([1])).toThrow(expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', details: { field: 'prices', value: [1] } }));
  });

  it('identical screens with actions in between end the run as stuck; a changing screen does not', async () => {
    // The screen's colour follows the pointer's x: moving to the same place repaints the same screen.
    const followPointer: FakeDesktopOptions['onInput'] = (e, d) => {
      if (e.kind === 'pointer') d.fill([e.x * 4, 10, 10]);
    };
    const desktop = await fakeDesktop({ onInput: followPointer });
    const dir = await out();
    const stuck = await new ListAgent(
      { outputDir: dir, vncUrl: desktop.vncUrl, record: false, stuckScreens: 3, stuckRepeats: 0 },
      () => ({ action: 'mouse_move', params: { position: { x: 5, y: 5 } } }),
      true,
    ).run({ maxSteps: 20 });
    expect(stuck.status).toBe('stuck');
    expect(stuck.error?.code).toBe('AGENT_ERR_STUCK');
    // Three identical observations need two actions between them, plus the first move, which changed the screen.
    expect((await readTrace(dir)).entries.length).toBe(3);
    expect(desktop.events).toContainEqual({ kind: 'pointer', x: 5, y: 5, mask: 0 });

    let n = 0;
    const changing = await fakeDesktop({ onInput: followPointer });
    const moving = new ListAgent(
      { outputDir: await out(), vncUrl: changing.vncUrl, record: false, stuckScreens: 3, stuckRepeats: 0 },
      (i) => {
        if (i > 5) return null;
        n = i;
        return { action: 'mouse_move', params: { position: { x: 10 * i, y: 5 } } };
      },
      true,
    );
    const ok = await moving.run({ maxSteps: 20 });
    expect(ok.status).toBe('finished');
    expect(n).toBe(5);
    expect(changing.pixel(0, 0)).toEqual([200, 10, 10]);
  });

  it('budgetMs ends a run that outlives it with status timeout', async () => {
    const desktop = await fakeDesktop();
    const dir = await out();
    const r = await new ListAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false, budgetMs: 300, stuckRepeats: 0 }, () => ({
      action: 'wait',
      params: { seconds: 0.1 },
    })).run({ maxSteps: 100 });
    expect(r.status).toBe('timeout');
    expect(r.error?.code).toBe('AGENT_ERR_BUDGET_EXCEEDED');
    expect((await readTrace(dir)).partial).toBe(false);
  });

  it('budgetMs does not count the time the loop is paused (askForHelp, a takeover)', async () => {
    const desktop = await fakeDesktop();
    const dir = await out();
    const agent = new ListAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false, budgetMs: 300, stuckRepeats: 0 }, (i) => {
      if (i === 1) agent.askForHelp('please look');
      return i < 3 ? { action: 'wait', params: { seconds: 0 } } : null;
    });
    const run = agent.run({ maxSteps: 10 });
    await statusWhere(agent, (s) => s.state === 'help', 'the help request');
    await agent.pause();
    await until(() => agent.pausedMs > 700, 'a pause longer than twice the budget');
    await agent.resume();
    const r = await run;
    expect(r.status).toBe('finished');
    expect(r.paused_ms).toBeGreaterThan(700);
  });
});
