/**
 * HttpPlannerAgent on a real desktop (Xvnc + Chromium) against a local planner server speaking the
 * wire format of wire.ts: a plan's actions reach the events page (text selected and typed over,
 * scrolled), and one task solved end to end (the page's success check over CDP). The wire format,
 * previous_steps, the socket, scaling, re-authentication, API errors, loop guards and option checks
 * run on the fake desktop: agent.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { ActionStep } from '../../harness/agent/index.ts';
import { tempOutputDir, useEventsDesktop } from '../../harness/agent/test-helpers/desktops.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import { useSuiteTaskDesktop, type StepParams } from '../chat/test-helpers/suite-task.ts';
import { HttpPlannerAgent } from './agent.ts';
import { buildHttpPlannerAgent } from './index.ts';
import { startScriptedServer, type Reply, type ScriptedServer, type SeenRequest } from './test-helpers/servers.ts';
import type { PlannerAction, PlannerRequest } from './wire.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
});
async function outDir(): Promise<string> {
  const d = await tempOutputDir('vncua-planner-');
  cleanups.push(() => d.remove());
  return d.dir;
}
async function planner(script: (req: PlannerRequest, n: number, seen: SeenRequest) => Reply | Promise<Reply>): Promise<ScriptedServer> {
  const s = await startScriptedServer((seen, n) => script(JSON.parse(seen.body) as PlannerRequest, n, seen));
  cleanups.push(() => s.close());
  return s;
}
const actions = (...a: PlannerAction[]): Reply => ({ body: { actions: a } });

describe('HttpPlannerAgent on the events page', () => {
  const env = useEventsDesktop('xvnc');

  it("a plan's actions reach the page: clicks where the planner said, text selected with Shift+Home and typed over, a scroll", async () => {
    const s = await planner((_req, n) =>
      n === 1
        ? actions(
            { type: 'CLICK', x: 100, y: 50 },
            { type: 'TYPE_INTO', text: 'ab', x: 700, y: 100 },
            { type: 'KEY_PRESS', keys: ['shift', 'Home'] },
            { type: 'TYPE_INTO', text: 'XY' },
            { type: 'SCROLL', x: 150, y: 420, direction: 'down', amount: 2 },
          )
        : actions({ type: 'FINISH', success: true }),
    );
    const a = new HttpPlannerAgent({ outputDir: await outDir(), vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl, record: false, endpoint: `${s.url}v1/plan`, token: 't' });
    expect(await a.run({ maxSteps: 5 })).toMatchObject({ status: 'finished', steps: 2 });
    const state = await env.desktop.settle((st) => st.text === 'XY' && st.scroll.top > 0);
    expect(state.text).toBe('XY');
    expect(state.scroll.top).toBeGreaterThan(0);
    expect(state.events.filter((e) => e.type === 'mousedown').map((e) => [e.x, e.y])).toEqual([
      [100, 50],
      [700, 100],
    ]);
  });
});

describe('HttpPlannerAgent end to end', () => {
  const e2e = useSuiteTaskDesktop('type-search');

  it("solves the basic suite's type-search task through buildHttpPlannerAgent", async () => {
    const { task, reference } = e2e;
    // The scripted planner sends the task's reference trace as one plan, then FINISH.
    const steps = reference.filter((st) => st.action !== 'finish').map(toPlannerAction);
    const s = await planner((_req, n) => (n === 1 ? { body: { actions: steps } } : actions({ type: 'FINISH', success: true })));
    const outputDir = await outDir();
    const ctx = e2e.context(outputDir);
    const a = buildHttpPlannerAgent(ctx, { VNCUA_PLANNER_URL: `${s.url}plan`, VNCUA_PLANNER_TOKEN: 'env-token' });
    const r = await a.run({ maxSteps: ctx.maxSteps });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    const { entries } = await readTrace(outputDir);
    expect(entries.map((e) => ({ action: e.action, params: e.action === 'finish' ? {} : e.params }))).toEqual(reference.map((st) => ({ action: st.action, params: st.params })));
    expect(entries[0]!.task_marked_complete).toBe(false);
    expect(entries.at(-1)!.task_marked_complete).toBe(true);
    expect(s.requests.map((q) => q.headers.authorization)).toEqual(['Bearer env-token', 'Bearer env-token']);
    expect((JSON.parse(s.requests[0]!.body) as PlannerRequest).task).toBe(task.goal);
    expect(s.connections).toBe(1);
  });
});

/** A trace step as a planner action. */
function toPlannerAction(step: ActionStep): PlannerAction {
  const p = (step.params ?? {}) as unknown as StepParams;
  const at = (q: { x: number; y: number }) => ({ x: q.x, y: q.y });
  switch (step.action) {
    case 'mouse_click':
      return { type: 'CLICK', ...at(p.position), button: p.button, click_count: p.click_type === 'triple' ? 3 : p.click_type === 'double' ? 2 : 1 };
    case 'mouse_move':
      return { type: 'MOUSE_MOVE', ...at(p.position) };
    case 'mouse_drag':
      return { type: 'DRAG', start: at(p.start), end: at(p.end), button: p.button };
    case 'mouse_scroll':
      return { type: 'SCROLL', ...at(p.position), direction: p.direction as 'up' | 'down' | 'left' | 'right', amount: p.repeat };
    case 'type_text':
      return { type: 'TYPE_INTO', text: p.text };
    case 'press_keys':
      return { type: 'KEY_PRESS', keys: p.keys };
    case 'page_navigation':
      return { type: 'KEY_PRESS', keys: p.direction === 'back' ? 'alt+Left' : 'alt+Right' };
    case 'wait':
      return { type: 'WAIT', seconds: p.seconds };
    default:
      return { type: 'FINISH' };
  }
}
