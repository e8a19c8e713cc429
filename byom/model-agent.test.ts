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
    expect(entries[1]!.meta).toEqual({ model_calls: [{ latency_ms: 1.5, usage: { input_tokens: 10, output_tokens: 2 }, response_id: 'r2' }] });
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
