/**
 * The rate gate (harness/agent/rate-gate.ts) in the shipped adapters, through their real clients (the `openai` and
 * `@anthropic-ai/sdk` SDKs, the planner's HTTP client) against local servers speaking each wire format, on the fake
 * RFB desktop: every request passes the gate exactly once (retries included), a 429 with Retry-After makes the gate
 * back off for that long and the retry goes after it, a 429 to one agent holds another agent's calls to the same
 * model, and a limit shared by two agents holds over both (checked on the gate's own grant times).
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { beforeEach, describe, expect, it } from 'vitest';
import { useFakeRuns } from '../harness/agent/test-helpers/fake-run.ts';
import { until } from '../harness/agent/test-helpers/live.ts';
import { LocalRateGate, type AcquireOptions, type RateBackoff, type RateBackoffEvent, type RateCall, type RateGate, type RateGrant } from '../harness/agent/rate-gate.ts';
import type { Agent } from '../harness/agent/index.ts';
import type { FakeDesktop } from '../harness/rfb/test-helpers/fake-desktop.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { AnthropicCuaAgent } from './anthropic/agent.ts';
import { startFakeMessages, text } from './anthropic/test-helpers/fake-messages.ts';
import { ChatAgent, type ChatAgentOptions } from './chat/agent.ts';
import { startChatServer, type ChatReply } from './chat/test-helpers/chat-server.ts';
import { HttpPlannerAgent } from './http/agent.ts';
import { startScriptedServer } from './http/test-helpers/servers.ts';
import { OpenAICuaAgent } from './openai-cua/agent.ts';
import { message, startFakeResponses } from './openai-cua/test-helpers/fake-responses.ts';

/** A LocalRateGate that keeps what went through it: every grant and every backoff, with the call. */
class RecordingGate implements RateGate {
  readonly grants: Array<RateGrant & { call: RateCall }> = [];
  readonly backoffs: Array<RateBackoff & { call: RateCall; ms: number; reason: string }> = [];
  readonly #gate: LocalRateGate;
  constructor(rules: string | string[] = []) {
    this.#gate = new LocalRateGate(rules);
  }
  async acquire(call: RateCall, options?: AcquireOptions): Promise<RateGrant> {
    const g = await this.#gate.acquire(call, options);
    this.grants.push({ ...g, call });
    return g;
  }
  async backoff(call: RateCall, ms: number, reason: string): Promise<RateBackoff> {
    const b = await this.#gate.backoff(call, ms, reason);
    this.backoffs.push({ ...b, call, ms, reason });
    return b;
  }
  onBackoff(listener: (event: RateBackoffEvent) => void): () => void {
    return this.#gate.onBackoff(listener);
  }
}

/** The first pair (i, i + limit) of sorted grants closer than `periodMs`: a span of one period holding limit + 1. */
function windowViolation(grants: number[], limit: number, periodMs: number): [number, number] | null {
  const s = [...grants].sort((a, b) => a - b);
  for (let i = 0; i + limit < s.length; i++) if (s[i + limit]! - s[i]! < periodMs) return [s[i]!, s[i + limit]!];
  return null;
}

const t = useFakeRuns();
const json = (v: unknown) => JSON.stringify(v);
const RATE_LIMITED = { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } };

/** An agent of each adapter against its server: the first request answered 429 with Retry-After: 1, the second finishing the run. */
type Setup = (d: FakeDesktop, gate: RateGate) => Promise<{ agent: Agent; requests: () => number; model: string | undefined }>;
const ADAPTERS: Array<[string, Setup]> = [
  [
    'openai-cua',
    async (d, gate) => {
      const s = await startFakeResponses([{ httpError: 429, headers: { 'retry-after': '1' } }, { reply: [message('Done.')] }]);
      t.defer(s.close);
      const agent = new OpenAICuaAgent({ outputDir: await t.out(), vncUrl: d.vncUrl, record: false, task: 'x', apiKey: 'sk-test', baseURL: s.baseURL, rateGate: gate });
      return { agent, requests: () => s.requests.length, model: agent.modelName };
    },
  ],
  [
    'anthropic',
    async (d, gate) => {
      const s = await startFakeMessages([{ httpError: 429, headers: { 'retry-after': '1' } }, { reply: [text('Done.')] }]);
      t.defer(s.close);
      const agent = new AnthropicCuaAgent({ outputDir: await t.out(), vncUrl: d.vncUrl, record: false, task: 'x', apiKey: s.apiKey, baseURL: s.baseURL, rateGate: gate });
      return { agent, requests: () => s.requests.length, model: agent.modelName };
    },
  ],
  [
    'chat',
    async (d, gate) => {
      const s = await startChatServer((_b, n) => (n === 1 ? RATE_LIMITED : json({ action: 'finish', answer: 'ok' })));
      t.defer(s.close);
      const agent = new ChatAgent({
        outputDir: await t.out(),
        vncUrl: d.vncUrl,
        record: false,
        task: 'x',
        apiKey: 'sk-test',
        baseURL: s.baseURL,
        model: 'test-vlm',
        rateGate: gate,
      });
      return { agent, requests: () => s.server.requests.length, model: 'test-vlm' };
    },
  ],
  [
    'http',
    async (d, gate) => {
      const s = await startScriptedServer((_q, n) => (n === 1 ? RATE_LIMITED : { body: { actions: [{ type: 'FINISH', success: true, message: 'done' }] } }));
      t.defer(s.close);
      const agent = new HttpPlannerAgent({ outputDir: await t.out(), vncUrl: d.vncUrl, record: false, task: 'x', endpoint: `${s.url}v1/plan`, token: 'tok', rateGate: gate });
      return { agent, requests: () => s.requests.length, model: undefined };
    },
  ],
];

describe('the rate gate in the shipped adapters', () => {
  let desktop: FakeDesktop;
  beforeEach(async () => {
    desktop = await t.desktop({ width: 1280, height: 800 });
  });

  it.each(ADAPTERS)('%s: each request passes the gate once; a 429 with Retry-After: 1 backs the gate off 1 s and the retry goes after it', async (name, setup) => {
    const gate = new RecordingGate();
    const { agent, requests, model } = await setup(desktop, gate);
    const r = await agent.run({ maxSteps: 3 });
    expect(r.status).toBe('finished');
    expect(requests()).toBe(2);
    expect(gate.grants).toHaveLength(2);
    expect(gate.grants.map((g) => g.call)).toEqual([
      { adapter: name, model },
      { adapter: name, model },
    ]);
    expect(gate.backoffs).toHaveLength(1);
    const b = gate.backoffs[0]!;
    expect(b).toMatchObject({ call: { adapter: name, model }, ms: 1000, reason: expect.stringContaining('HTTP 429') });
    expect(b.until - b.from).toBeCloseTo(1000, 6);
    expect(gate.grants[1]!.at).toBeGreaterThanOrEqual(b.until);
  });
});

describe('one gate shared by two agents', () => {
  /** A chat agent on its own desktop and server: `script` answers call n. */
  async function chatAgent(
    gate: RateGate,
    script: (b: ChatCompletionCreateParamsNonStreaming, n: number) => ChatReply | Promise<ChatReply>,
    extra: Partial<ChatAgentOptions> = {},
  ) {
    const d = await t.desktop({ width: 640, height: 480 });
    const s = await startChatServer(script);
    t.defer(s.close);
    const agent = new ChatAgent({
      outputDir: await t.out(),
      vncUrl: d.vncUrl,
      record: false,
      stuckScreens: 0,
      stuckRepeats: 0,
      task: 'x',
      apiKey: 'k',
      baseURL: s.baseURL,
      model: 'test-vlm',
      rateGate: gate,
      ...extra,
    });
    return { agent, requests: () => s.server.requests.length };
  }
  const waits = (steps: number) => (_b: unknown, n: number) => (n <= steps ? json({ action: 'wait', seconds: 0.01 }) : json({ action: 'finish', answer: 'ok' }));

  it('2/s over a chat agent and an HTTP planner agent: 10 requests, never 3 within any 1 s span, the waits noted as rate_wait_ms', async () => {
    const gate = new RecordingGate('2/s');
    const chat = await chatAgent(gate, waits(4));
    const d = await t.desktop({ width: 640, height: 480 });
    let plans = 0;
    const s = await startScriptedServer(() => ({ body: { actions: [++plans <= 4 ? { type: 'WAIT', seconds: 0.01 } : { type: 'FINISH', success: true }] } }));
    t.defer(s.close);
    const http = new HttpPlannerAgent({
      outputDir: await t.out(),
      vncUrl: d.vncUrl,
      record: false,
      stuckScreens: 0,
      stuckRepeats: 0,
      task: 'x',
      endpoint: `${s.url}plan`,
      token: 'tok',
      rateGate: gate,
    });
    const results = await Promise.all([chat.agent.run({ maxSteps: 10 }), http.run({ maxSteps: 10 })]);
    expect(results.map((r) => r.status)).toEqual(['finished', 'finished']);
    expect(chat.requests() + s.requests.length).toBe(10);
    expect(gate.grants).toHaveLength(10);
    expect(new Set(gate.grants.map((g) => g.call.adapter))).toEqual(new Set(['chat', 'http']));
    expect(
      windowViolation(
        gate.grants.map((g) => g.at),
        2,
        1000,
      ),
    ).toBeNull();
    // Ten requests at 2/s: the later ones waited, and their trace entries say how long.
    const noted = [];
    for (const a of [chat.agent, http]) {
      for (const e of (await readTrace(a.options.outputDir)).entries) {
        for (const c of (e.meta?.model_calls as Array<{ rate_wait_ms?: number }> | undefined) ?? []) if (c.rate_wait_ms !== undefined) noted.push(c.rate_wait_ms);
      }
    }
    expect(noted.length).toBeGreaterThan(0);
    expect(Math.max(...noted)).toBeGreaterThan(100);
  });

  it("a 429 to one agent holds another agent's calls to the same model (another adapter) until its Retry-After has passed", async () => {
    const gate = new RecordingGate();
    // a's first call is answered 429 once b has made two calls.
    const a = await chatAgent(gate, async (_b, n) => {
      if (n > 1) return json({ action: 'finish', answer: 'ok' });
      await until(() => s.requests.length >= 2, "the planner agent's first two calls");
      return RATE_LIMITED;
    });
    // b, an HTTP planner agent naming the same model, keeps calling (wait actions) until a has finished.
    let aDone = false;
    const d = await t.desktop({ width: 640, height: 480 });
    const s = await startScriptedServer((_q, n) => ({ body: { actions: [aDone || n > 200 ? { type: 'FINISH', success: true } : { type: 'WAIT', seconds: 0.05 }] } }));
    t.defer(s.close);
    const b = new HttpPlannerAgent({
      outputDir: await t.out(),
      vncUrl: d.vncUrl,
      record: false,
      stuckScreens: 0,
      stuckRepeats: 0,
      task: 'x',
      endpoint: `${s.url}plan`,
      token: 'tok',
      model: 'test-vlm',
      rateGate: gate,
    });
    const runA = a.agent.run({ maxSteps: 3 }).finally(() => (aDone = true));
    const [ra, rb] = await Promise.all([runA, b.run({ maxSteps: 300 })]);
    expect([ra.status, rb.status]).toEqual(['finished', 'finished']);
    const [off] = gate.backoffs;
    expect(off).toMatchObject({ ms: 1000, call: { adapter: 'chat', model: 'test-vlm' } });
    expect(gate.grants.map((g) => g.at).filter((at) => at >= off!.from && at < off!.until)).toEqual([]);
    // b made calls before the 429 and after the backoff: it was held, not stopped.
    const bGrants = gate.grants.filter((g) => g.call.adapter === 'http').map((g) => g.at);
    expect(bGrants.some((at) => at < off!.from)).toBe(true);
    expect(bGrants.some((at) => at >= off!.until)).toBe(true);
    expect(a.requests() + s.requests.length).toBe(gate.grants.length);
  });

  it('time waiting at the gate does not count against budgetMs', async () => {
    const gate = new RecordingGate();
    await gate.backoff({ adapter: 'chat', model: 'test-vlm' }, 3000, 'an earlier 429');
    const { agent } = await chatAgent(gate, () => json({ action: 'finish', answer: 'ok' }), { budgetMs: 500 });
    const r = await agent.run({ maxSteps: 3 });
    expect(r.status).toBe('finished');
    const calls = (await readTrace(agent.options.outputDir)).entries.flatMap((e) => (e.meta?.model_calls as Array<{ rate_wait_ms?: number }>) ?? []);
    expect(calls[0]!.rate_wait_ms).toBeGreaterThan(500);
  });
});
