/**
 * HttpPlannerAgent on the fake RFB desktop (1280x800, no X server, no browser) against a local planner
 * server speaking the wire format of wire.ts: ordered actions performed (the presses and keys the
 * desktop receives), previous_steps, one socket across steps, scaled screenshots mapped back exactly,
 * re-authentication, API errors ending with a clear code and a valid trace, the loop guards, and
 * option checks. (The actions' effect on a real page and one task solved end to end: agent.desktop.test.ts.)
 */
import sharp from 'sharp';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { keyDowns, presses, useFakeRuns } from '../../harness/agent/test-helpers/fake-run.ts';
import type { FakeDesktop } from '../../harness/rfb/test-helpers/fake-desktop.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { HttpPlannerAgent, type HttpPlannerAgentOptions } from './agent.ts';
import { startScriptedServer, startTokenServer, type Reply, type ScriptedServer, type SeenRequest } from './test-helpers/servers.ts';
import type { PlannerAction, PlannerRequest } from './wire.ts';

const t = useFakeRuns();
async function planner(script: (req: PlannerRequest, n: number, seen: SeenRequest) => Reply | Promise<Reply>): Promise<ScriptedServer> {
  const s = await startScriptedServer((seen, n) => script(JSON.parse(seen.body) as PlannerRequest, n, seen));
  t.defer(() => s.close());
  return s;
}
const actions = (...a: PlannerAction[]): Reply => ({ body: { actions: a } });
const fast = { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 10 };

describe('HttpPlannerAgent on the fake desktop', () => {
  let desktop: FakeDesktop;
  beforeEach(async () => {
    desktop = await t.desktop({ width: 1280, height: 800 });
  });
  // The fake desktop's screen stays the same: the identical-screens guard is off unless a test sets it.
  const agent = async (s: ScriptedServer, extra: Partial<HttpPlannerAgentOptions> = {}) =>
    new HttpPlannerAgent({
      outputDir: await t.out('vncua-planner-'),
      vncUrl: desktop.vncUrl,
      record: false,
      stuckScreens: 0,
      endpoint: `${s.url}v1/plan`,
      token: 'static-token',
      task: 'Use the page.',
      retry: fast,
      ...extra,
    });

  it("performs each plan's actions in order, sends previous_steps, and keeps one connection across steps", async () => {
    const plans: PlannerAction[][] = [
      [
        { type: 'MOUSE_MOVE', x: 10, y: 10 },
        { type: 'CLICK', x: 100, y: 50, description: 'the pad' },
        { type: 'TYPE_INTO', text: 'ab', x: 700, y: 100 },
      ],
      [
        { type: 'KEY_PRESS', keys: ['shift', 'Home'] },
        { type: 'TYPE_INTO', text: 'XY' },
        { type: 'SCROLL', x: 150, y: 420, direction: 'down', amount: 2 },
      ],
      [
        { type: 'WAIT', seconds: 0.05 },
        { type: 'FINISH', success: true, message: 'done' },
        { type: 'CLICK', x: 1, y: 1 },
      ],
    ];
    const s = await planner((_req, n) => ({ body: { actions: plans[n - 1], id: `plan-${n}`, usage: { input_tokens: n } } }));
    const a = await agent(s);
    const r = await a.run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 3 });

    const { entries } = await readTrace(a.options.outputDir);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 10, y: 10 } }],
      ['mouse_click', { position: { x: 100, y: 50 }, button: 'left', click_type: 'single' }],
      ['mouse_click', { position: { x: 700, y: 100 }, button: 'left', click_type: 'single' }],
      ['type_text', { text: 'ab' }],
      ['press_keys', { keys: 'shift+Home' }],
      ['type_text', { text: 'XY' }],
      ['mouse_scroll', { position: { x: 150, y: 420 }, direction: 'down', repeat: 2 }],
      ['wait', { seconds: 0.05 }],
      ['finish', { success: true, message: 'done' }],
    ]);
    expect(entries[0]!.meta?.model_calls).toEqual([{ latency_ms: expect.any(Number), usage: { input_tokens: 1 }, response_id: 'plan-1', attempts: 1 }]);
    expect(entries[1]!.meta?.description).toBe('the pad');
    // On the desktop: the two clicks (TYPE_INTO's first), then ab, Shift+Home, XY (typed with Shift), then two wheel-down notches.
    expect(presses(desktop.events)).toEqual([
      [100, 50, 0],
      [700, 100, 0],
      [150, 420, 4],
      [150, 420, 4],
    ]);
    const SHIFT_L = 0xffe1;
    expect(keyDowns(desktop.events)).toEqual([0x61, 0x62, SHIFT_L, 0xff50, SHIFT_L, 0x58, SHIFT_L, 0x59]);
    const firstKey = desktop.events.findIndex((e) => e.kind === 'key');
    const firstWheel = desktop.events.findIndex((e) => e.kind === 'pointer' && e.mask === 16);
    expect(
      desktop.events
        .slice(0, firstKey)
        .filter((e) => e.kind === 'pointer' && e.mask === 1)
        .map((e) => e.kind === 'pointer' && [e.x, e.y]),
    ).toEqual([
      [100, 50],
      [700, 100],
    ]);
    expect(desktop.events.slice(firstWheel).some((e) => e.kind === 'key')).toBe(false);

    expect(s.requests.length).toBe(3);
    expect(s.connections).toBe(1);
    expect(s.requests.map((q) => q.socket)).toEqual([1, 1, 1]);
    const bodies = s.requests.map((q) => JSON.parse(q.body) as PlannerRequest);
    expect(s.requests[0]!.headers.authorization).toBe('Bearer static-token');
    expect(s.requests[0]!.path).toBe('/v1/plan');
    expect(Object.keys(bodies[0]!).sort()).toEqual(['previous_steps', 'resolution', 'screenshot', 'task']);
    expect(bodies[0]!.task).toBe('Use the page.');
    expect(bodies[0]!.resolution).toEqual({ width: 1280, height: 800 });
    expect(await sharp(Buffer.from(bodies[0]!.screenshot, 'base64')).metadata()).toMatchObject({ format: 'png', width: 1280, height: 800 });
    expect(bodies[0]!.previous_steps).toEqual([]);
    expect(bodies[1]!.previous_steps).toEqual(plans[0]!.map((action) => ({ step: 0, action })));
    expect(bodies[2]!.previous_steps).toEqual([...plans[0]!.map((action) => ({ step: 0, action })), ...plans[1]!.map((action) => ({ step: 1, action }))]);
  });

  it("prices each plan from its usage: the answer's model (from the table), else the model option (with the prices option); result.json sums them", async () => {
    const usage = { prompt_tokens: 2000, completion_tokens: 100, total_tokens: 2100, prompt_tokens_details: { cached_tokens: 1000 } };
    const s = await planner((_req, n) =>
      n === 1 ? { body: { actions: [{ type: 'WAIT', seconds: 0 }], model: 'gpt-4.1-2025-04-14', usage } } : { body: { actions: [{ type: 'FINISH' }], usage } },
    );
    const a = await agent(s, { model: 'my-planner', prices: { 'my-planner': { input: 10, output: 20 } } });
    const r = await a.run({ maxSteps: 5 });
    const gpt41 = (1000 * 2 + 1000 * 0.5 + 100 * 8) / 1e6;
    const mine = (2000 * 10 + 100 * 20) / 1e6;
    expect(r).toMatchObject({ status: 'finished', model_calls: 2, input_tokens: 4000, output_tokens: 200 });
    expect(r.cost_usd).toBeCloseTo(gpt41 + mine, 12);
    const { entries } = await readTrace(a.options.outputDir);
    expect(entries.map((e) => (e.meta!.model_calls as Array<Record<string, unknown>>)[0])).toEqual([
      expect.objectContaining({ model: 'gpt-4.1-2025-04-14', tokens: { input: 2000, output: 100, cached_input: 1000 }, cost_usd: gpt41 }),
      expect.objectContaining({ tokens: { input: 2000, output: 100, cached_input: 1000 }, cost_usd: mine }),
    ]);
    expect(entries[1]!.meta!.model_calls).not.toContainEqual(expect.objectContaining({ model: expect.anything() }));
    expect(await readResult(a.options.outputDir)).toEqual(r);
  });

  it('FINISH with a status and reason ends the run with that stop status; an unknown status is a bad response', async () => {
    const s = await planner((_req, n) =>
      n === 1 ? actions({ type: 'WAIT', seconds: 0 }) : actions({ type: 'FINISH', status: 'problem', reason: 'The page shows a 502 error.', description: 'broken' }),
    );
    const a = await agent(s);
    const r = await a.run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'problem', reason: 'The page shows a 502 error.', steps: 2 });
    expect(await readResult(a.options.outputDir)).toEqual(r);
    expect((await readTrace(a.options.outputDir)).entries.map((e) => [e.action, e.params])).toEqual([
      ['wait', { seconds: 0 }],
      ['finish', { status: 'problem', reason: 'The page shows a 502 error.' }],
    ]);
    const bad = await planner(() => ({ body: { actions: [{ type: 'FINISH', status: 'gave_up' }] } }));
    const r2 = await (await agent(bad)).run({ maxSteps: 5 });
    expect(r2).toMatchObject({ status: 'error', error: { code: 'MODEL_ERR_BAD_RESPONSE' } });
  });

  it('maxCostUsd reached mid-run: the run ends cost_cap before the next plan request', async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
    const s = await planner(() => ({ body: { actions: [{ type: 'WAIT', seconds: 0 }], usage } }));
    // $10 / $20 per 1M tokens: 0.012 a plan; the cap of 0.03 is reached by the third.
    const a = await agent(s, { model: 'my-planner', prices: { 'my-planner': { input: 10, output: 20 } }, maxCostUsd: 0.03 });
    const r = await a.run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'cost_cap', steps: 3, model_calls: 3, error: { code: 'AGENT_ERR_COST_CAP' } });
    expect(r.cost_usd).toBeCloseTo(0.036, 12);
    expect(s.requests).toHaveLength(3);
  });

  it('with screenshotSize, sends the scaled size as resolution and maps its pixels back exactly', async () => {
    const s = await planner((_req, n) =>
      n === 1 ? actions({ type: 'CLICK', x: 0, y: 0 }, { type: 'CLICK', x: 1023, y: 639 }, { type: 'CLICK', x: 512, y: 320, button: 'middle' }) : actions({ type: 'FINISH' }),
    );
    const a = await agent(s, { screenshotSize: { width: 1024, height: 640 } });
    expect((await a.run({ maxSteps: 5 })).status).toBe('finished');
    expect(presses(desktop.events)).toEqual([
      [0, 0, 0],
      [1279, 799, 0],
      [640, 400, 1],
    ]);
    const body = JSON.parse(s.requests[0]!.body) as PlannerRequest;
    expect(body.resolution).toEqual({ width: 1024, height: 640 });
    expect(await sharp(Buffer.from(body.screenshot, 'base64')).metadata()).toMatchObject({ width: 1024, height: 640 });
  });

  it('retries are recorded in the trace; a 401 re-authenticates once through the token endpoint', async () => {
    const dir = await t.out('vncua-planner-tokens-');
    const tokens = await startTokenServer();
    t.defer(() => tokens.close());
    const s = await planner((_req, n, seen) => {
      if (seen.headers.authorization === 'Bearer tok-1') return { status: 401 };
      if (n === 2) return { status: 503, headers: { 'retry-after': '0' } };
      return n <= 3 ? actions({ type: 'WAIT', seconds: 0 }) : actions({ type: 'FINISH' });
    });
    const a = await agent(s, { token: undefined, authUrl: `${tokens.url}token`, clientId: 'cid', clientSecret: 'cs', tokenCacheFile: join(dir, 'tokens.json') });
    const r = await a.run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(s.requests.map((q) => q.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2', 'Bearer tok-2', 'Bearer tok-2']);
    expect(tokens.fetches).toBe(2);
    const { entries } = await readTrace(a.options.outputDir);
    expect(entries[0]!.meta).toMatchObject({ reauthenticated: true, retries: [{ attempt: 1, code: 'MODEL_ERR_SERVER', status: 503, delay_ms: 0, retry_after: true }] });
    expect(entries[0]!.meta?.model_calls).toEqual([expect.objectContaining({ attempts: 2 })]);
    expect(s.connections).toBe(1);
  });

  describe('API errors end the run with a clear code and a valid trace', () => {
    const cases: Array<{ name: string; reply: Reply; code: string; calls: number; extra?: Partial<HttpPlannerAgentOptions> }> = [
      { name: '401 with a static token', reply: { status: 401 }, code: 'MODEL_ERR_AUTH', calls: 1 },
      { name: '429 on every attempt', reply: { status: 429, headers: { 'retry-after': '0' } }, code: 'MODEL_ERR_RATE_LIMITED', calls: 3 },
      { name: '500 on every attempt', reply: { status: 500, body: 'oops' }, code: 'MODEL_ERR_SERVER', calls: 3 },
      { name: 'timeout on every attempt', reply: 'hang', code: 'MODEL_ERR_TIMEOUT', calls: 2, extra: { requestTimeoutMs: 200, retry: { ...fast, maxAttempts: 2 } } },
      { name: 'a body that is not JSON', reply: { body: '<html>bad gateway</html>' }, code: 'MODEL_ERR_BAD_RESPONSE', calls: 3 },
      { name: 'JSON that is not a plan', reply: { body: { steps: [] } }, code: 'MODEL_ERR_BAD_RESPONSE', calls: 1 },
      { name: 'an action off the screenshot', reply: actions({ type: 'CLICK', x: 5000, y: 1 }), code: 'MODEL_ERR_BAD_RESPONSE', calls: 1 },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const s = await planner((_req, n) => (n === 1 ? actions({ type: 'WAIT', seconds: 0 }) : c.reply));
        const a = await agent(s, c.extra);
        const r = await a.run({ maxSteps: 5 });
        expect(r.status).toBe('error');
        expect(r.error?.code).toBe(c.code);
        expect(s.requests.length).toBe(1 + c.calls);
        expect(await readResult(a.options.outputDir)).toEqual(r);
        const trace = await readTrace(a.options.outputDir);
        expect(trace.partial).toBe(false);
        expect(trace.entries.map((e) => e.action)).toEqual(['wait']);
      });
    }

    it('a second 401 after re-authenticating', async () => {
      const dir = await t.out('vncua-planner-tokens-');
      const tokens = await startTokenServer();
      t.defer(() => tokens.close());
      const s = await planner(() => ({ status: 401 }));
      const a = await agent(s, { token: undefined, authUrl: `${tokens.url}token`, clientId: 'cid', clientSecret: 'cs', tokenCacheFile: join(dir, 'tokens.json') });
      const r = await a.run({ maxSteps: 5 });
      expect(r).toMatchObject({ status: 'error', error: { code: 'MODEL_ERR_AUTH' } });
      expect(s.requests.length).toBe(2);
      expect(tokens.fetches).toBe(2);
      expect(await readResult(a.options.outputDir)).toEqual(r);
      expect((await readTrace(a.options.outputDir)).entries).toEqual([]);
    });
  });

  describe('loop guards', () => {
    it('the same action repeated stuckRepeats times ends the run as stuck', async () => {
      const s = await planner(() => actions({ type: 'CLICK', x: 100, y: 100 }, { type: 'CLICK', x: 100, y: 100 }));
      const a = await agent(s, { stuckRepeats: 3 });
      const r = await a.run({ maxSteps: 20 });
      expect(r).toMatchObject({ status: 'stuck', error: { code: 'AGENT_ERR_STUCK' } });
      expect((await readTrace(a.options.outputDir)).entries.length).toBe(3);
      expect(s.requests.length).toBe(2);
    });

    it('identical screenshots stuckScreens times in a row end the run as stuck', async () => {
      const s = await planner((_req, n) => actions({ type: 'WAIT', seconds: n / 1000 }));
      const a = await agent(s, { stuckScreens: 3 });
      const r = await a.run({ maxSteps: 20 });
      expect(r).toMatchObject({ status: 'stuck', error: { code: 'AGENT_ERR_STUCK' } });
      expect(s.requests.length).toBe(2);
    });

    it('the wall-clock budget ends the run as timeout, also while waiting for the planner', async () => {
      const s = await planner(async (_req, n) => {
        await new Promise((r) => setTimeout(r, 150));
        return actions({ type: 'WAIT', seconds: n / 1000 });
      });
      const a = await agent(s, { budgetMs: 1000, stuckScreens: 0 });
      const r = await a.run({ maxSteps: 100 });
      expect(r).toMatchObject({ status: 'timeout', error: { code: 'AGENT_ERR_BUDGET_EXCEEDED' } });
      expect(await readResult(a.options.outputDir)).toEqual(r);
      expect((await readTrace(a.options.outputDir)).partial).toBe(false);
    });
  });

  it('rejects bad options naming the field', () => {
    const base = { outputDir: '/tmp/x', vncUrl: desktop.vncUrl };
    expect(() => new HttpPlannerAgent({ ...base, endpoint: 'ftp://x' })).toThrow(
      expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', details: expect.objectContaining({ field: 'endpoint' }) }),
    );
    expect(() => new HttpPlannerAgent({ ...base, endpoint: 'http://127.0.0.1:9/', authUrl: 'http://127.0.0.1:9/t' })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ field: 'clientId' }) }),
    );
    expect(() => new HttpPlannerAgent({ ...base, endpoint: 'http://127.0.0.1:9/', retry: { maxAttempts: 0 } })).toThrow(expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS' }));
  });
});
