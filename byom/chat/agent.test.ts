/**
 * ChatAgent on the fake RFB desktop (1280x800, no X server, no browser), talking through the REAL
 * `openai` SDK to a local Chat Completions server that plays a scripted model: the prompt and the
 * last-K screenshots in each request, the three coordinate spaces mapped back exactly (edge pixels:
 * the presses the desktop receives), the re-ask flow and parse_error, API errors, the loop guards, and
 * option checks. (One task solved end to end on a real page: agent.desktop.test.ts.)
 */
import sharp from 'sharp';
import { getEventListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { beforeEach, describe, expect, it } from 'vitest';
import { presses, useFakeRuns } from '../../harness/agent/test-helpers/fake-run.ts';
import type { FakeDesktop } from '../../harness/rfb/test-helpers/fake-desktop.ts';
import { roundUsd } from '../../harness/trace/model-calls.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { CHAT_ACTIONS } from './actions.ts';
import { ChatAgent, reaskText, type ChatAgentOptions } from './agent.ts';
import { omittedScreenshot } from './history.ts';
import { images, refusalCompletion, startChatServer, texts, usageFor, type ChatReply, type ChatServer } from './test-helpers/chat-server.ts';

const t = useFakeRuns();
async function chatServer(script: (body: ChatCompletionCreateParamsNonStreaming, n: number) => ChatReply | Promise<ChatReply>): Promise<ChatServer> {
  const s = await startChatServer(script);
  t.defer(() => s.close());
  return s;
}
const json = (v: unknown) => JSON.stringify(v);

describe('ChatAgent on the fake desktop', () => {
  let desktop: FakeDesktop;
  beforeEach(async () => {
    desktop = await t.desktop({ width: 1280, height: 800 });
  });
  // The fake desktop's screen stays the same: the identical-screens guard is off unless a test sets it.
  const agent = async (s: ChatServer, extra: Partial<ChatAgentOptions> = {}) =>
    new ChatAgent({
      outputDir: await t.out('vncua-chat-'),
      vncUrl: desktop.vncUrl,
      record: false,
      stuckScreens: 0,
      baseURL: s.baseURL,
      model: 'test-vlm',
      apiKey: 'sk-test',
      task: 'Press the buttons.',
      ...extra,
    });

  it('sends the system prompt with the action schema, the task, and only the last K screenshots; accounts every call', async () => {
    const listeners: number[] = [];
    const s = await chatServer((_b, n) => {
      listeners.push(getEventListeners(a.signal, 'abort').length);
      return n <= 4 ? `Step ${n}.\n\`\`\`json\n${json({ action: 'wait', seconds: n / 100, thought: `t${n}` })}\n\`\`\`` : json({ action: 'finish', answer: 'ok' });
    });
    const a = await agent(s, { historyScreens: 2, stuckScreens: 0, maxTokens: 300, temperature: 0 });
    const r = await a.run({ maxSteps: 10 });
    expect(r.status).toBe('finished');
    expect(s.bodies.length).toBe(5);
    // Each call's abort listener on the run's signal is removed after the call (the SDK leaves its own behind).
    expect(new Set(listeners).size).toBe(1);

    const first = s.bodies[0]!;
    expect(first.model).toBe('test-vlm');
    expect(first.max_tokens).toBe(300);
    expect(first.temperature).toBe(0);
    expect(s.server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    const system = first.messages[0]!;
    expect(system.role).toBe('system');
    const prompt = texts(system.content).join('\n');
    for (const action of CHAT_ACTIONS) expect(prompt).toContain(`"action": "${action}"`);
    expect(prompt).toContain('1280x800');
    expect(prompt).toMatch(/screen pixels/);
    expect(texts(first.messages[1]!.content)[0]).toContain('Task: Press the buttons.');

    // Call k holds min(k, 2) screenshots; older ones are placeholders.
    expect(s.bodies.map((b) => images(b).length)).toEqual([1, 2, 2, 2, 2]);
    const last = s.bodies[4]!;
    const allText = last.messages.flatMap((m) => texts(m.content)).join('\n');
    expect(allText).toContain(omittedScreenshot(1));
    expect(allText).toContain(omittedScreenshot(3));
    expect(allText).not.toContain(omittedScreenshot(4));
    // The model's own replies are in the history, and each new turn says what was done.
    expect(last.messages.filter((m) => m.role === 'assistant').length).toBe(4);
    expect(allText).toContain(`Done: ${json({ action: 'wait', seconds: 0.04 })}`);
    // Screenshots are full-size PNGs in 'absolute' space.
    const png = Buffer.from(images(last)[1]!.replace(/^data:image\/png;base64,/, ''), 'base64');
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 1280, height: 800 });

    const { entries } = await readTrace(a.options.outputDir);
    expect(entries.map((e) => e.action)).toEqual(['wait', 'wait', 'wait', 'wait', 'finish']);
    expect(entries[4]!.params).toEqual({ answer: 'ok' });
    for (const [i, e] of entries.entries()) {
      const u = usageFor(i + 1);
      expect(e.meta?.model_calls).toEqual([
        {
          latency_ms: expect.any(Number),
          usage: u,
          response_id: `chatcmpl-${i + 1}`,
          model: 'test-vlm',
          attempts: 1,
          tokens: { input: u.prompt_tokens, output: u.completion_tokens },
        },
      ]);
    }
    expect(entries[0]!.meta?.thought).toBe('t1');
    // test-vlm has no price: no cost anywhere, and the first entry says how to give one.
    expect(entries.map((e) => e.meta?.price_notes)).toEqual([[expect.stringContaining('No price known for model "test-vlm"')], undefined, undefined, undefined, undefined]);
    const sum = (f: (u: ReturnType<typeof usageFor>) => number) => [1, 2, 3, 4, 5].reduce((s, n) => s + f(usageFor(n)), 0);
    expect(r).toMatchObject({ model_calls: 5, input_tokens: sum((u) => u.prompt_tokens), output_tokens: sum((u) => u.completion_tokens) });
    expect(r).not.toHaveProperty('cost_usd');
  });

  it('with a price for the served model (the prices option), each call and the run carry cost_usd', async () => {
    const s = await chatServer((_b, n) => (n === 1 ? json({ action: 'wait', seconds: 0 }) : json({ action: 'finish', answer: 'ok' })));
    const a = await agent(s, { prices: { 'test-vlm': { input: 0.2, output: 0.8 } } });
    const r = await a.run({ maxSteps: 5 });
    const cost = (n: number) => roundUsd((usageFor(n).prompt_tokens * 0.2 + usageFor(n).completion_tokens * 0.8) / 1e6);
    expect(r).toMatchObject({ status: 'finished', model_calls: 2 });
    expect(r.cost_usd).toBeCloseTo(cost(1) + cost(2), 12);
    const { entries } = await readTrace(a.options.outputDir);
    expect(entries.map((e) => (e.meta!.model_calls as Array<{ cost_usd: number }>)[0]!.cost_usd)).toEqual([cost(1), cost(2)]);
    expect(entries.some((e) => e.meta!.price_notes !== undefined)).toBe(false);
    expect(await readResult(a.options.outputDir)).toEqual(r);
  });

  describe('coordinate spaces map back exactly, edges included', () => {
    const cases: Array<{ name: string; options: Partial<ChatAgentOptions>; clicks: Array<[[number, number], [number, number]]>; image: [number, number] }> = [
      {
        name: 'absolute',
        options: { coordinates: 'absolute' },
        image: [1280, 800],
        clicks: [
          [
            [0, 0],
            [0, 0],
          ],
          [
            [1279, 799],
            [1279, 799],
          ],
          [
            [640, 400],
            [640, 400],
          ],
        ],
      },
      {
        name: 'normalized1000',
        options: { coordinates: 'normalized1000' },
        image: [1280, 800],
        clicks: [
          [
            [0, 0],
            [0, 0],
          ],
          [
            [1000, 1000],
            [1279, 799],
          ],
          [
            [500, 500],
            [640, 400],
          ],
          [
            [999.3, 0.5],
            [1279, 0],
          ],
        ],
      },
      {
        name: 'resized 1024x640',
        options: { coordinates: 'resized', screenshotSize: { width: 1024, height: 640 } },
        image: [1024, 640],
        clicks: [
          [
            [0, 0],
            [0, 0],
          ],
          [
            [1023, 639],
            [1279, 799],
          ],
          [
            [512, 320],
            [640, 400],
          ],
          [
            [1, 1],
            [1, 1],
          ],
        ],
      },
      {
        name: 'resized 1000x700',
        options: { coordinates: 'resized', screenshotSize: { width: 1000, height: 700 } },
        image: [1000, 700],
        clicks: [
          [
            [999, 699],
            [1279, 799],
          ],
          [
            [0, 0],
            [0, 0],
          ],
        ],
      },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const s = await chatServer((_b, n) => (n <= c.clicks.length ? json({ action: 'click', coordinate: c.clicks[n - 1]![0] }) : json({ action: 'finish' })));
        const r = await (await agent(s, c.options)).run({ maxSteps: 10 });
        expect(r.status).toBe('finished');
        expect(presses(desktop.events)).toEqual(c.clicks.map(([, screen]) => [...screen, 0]));
        const png = Buffer.from(images(s.bodies[0]!)[0]!.replace(/^data:image\/png;base64,/, ''), 'base64');
        expect(await sharp(png).metadata()).toMatchObject({ width: c.image[0], height: c.image[1] });
        expect(texts(s.bodies[0]!.messages[0]!.content).join('')).toContain(`${c.image[0]}x${c.image[1]}`);
      });
    }
  });

  it('re-asks with the validation error, and goes on once a reply is valid', async () => {
    const replies = [
      'I think I should click the button.',
      json({ action: 'click', coordinate: [5000, 1] }),
      json({ action: 'move', coordinate: [10, 10] }),
      json({ action: 'finish' }),
    ];
    const s = await chatServer((_b, n) => replies[n - 1] ?? json({ action: 'finish' }));
    const a = await agent(s);
    const r = await a.run({ maxSteps: 10 });
    expect(r.status).toBe('finished');
    expect(s.bodies.length).toBe(4);
    const lastUser = (b: ChatCompletionCreateParamsNonStreaming) => texts(b.messages.at(-1)!.content).join('');
    expect(lastUser(s.bodies[1]!)).toBe(reaskText('the reply holds no JSON object; answer with one JSON object such as {"action": "click", "coordinate": [100, 200]}'));
    expect(lastUser(s.bodies[2]!)).toMatch(/^Your reply could not be used: click: coordinate \[5000, 1\] is outside the coordinate space/);
    // The bad replies stay in the conversation, before the re-asks.
    expect(s.bodies[2]!.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(replies.slice(0, 2));
    // A re-ask sends no new screenshot.
    expect(s.bodies.map((b) => images(b).length)).toEqual([1, 1, 1, 2]);
    const { entries } = await readTrace(a.options.outputDir);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 10, y: 10 } }],
      ['finish', {}],
    ]);
    expect(entries[0]!.meta?.model_calls as unknown[]).toHaveLength(3);
    expect(entries[0]!.meta?.reasks).toBe(2);
  });

  it('ends with parse_error after 2 re-asks, leaving a valid trace and result', async () => {
    const s = await chatServer((_b, n) =>
      n === 1 ? json({ action: 'wait', seconds: 0 }) : n === 2 ? '{"action": "click", "coordinate": [1, 2], }' : n === 3 ? json({ action: 'hover', coordinate: [1, 2] }) : 'sorry',
    );
    const a = await agent(s);
    const r = await a.run({ maxSteps: 10 });
    expect(r.status).toBe('parse_error');
    expect(r.error?.code).toBe('AGENT_ERR_PARSE');
    expect(s.bodies.length).toBe(4);
    expect(await readResult(a.options.outputDir)).toEqual(r);
    const trace = await readTrace(a.options.outputDir);
    expect(trace.partial).toBe(false);
    expect(trace.entries.map((e) => e.action)).toEqual(['wait']);
  });

  it('message.refusal ends the run with status sensitive_action, the refusal its reason; finish with a status ends with that status', async () => {
    const s = await chatServer((b, n) => (n === 1 ? json({ action: 'wait', seconds: 0 }) : { body: refusalCompletion('I cannot help with that request.', n, b.model) }));
    const a = await agent(s);
    const r = await a.run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'sensitive_action', reason: 'I cannot help with that request.', steps: 2, model_calls: 2 });
    expect(await readResult(a.options.outputDir)).toEqual(r);
    expect((await readTrace(a.options.outputDir)).entries.map((e) => [e.action, e.params])).toEqual([
      ['wait', { seconds: 0 }],
      ['finish', { status: 'sensitive_action', reason: 'I cannot help with that request.' }],
    ]);

    const s2 = await chatServer(() => json({ thought: 'A login form.', action: 'finish', status: 'needs_human', reason: 'The site asks for a password I do not have.' }));
    const a2 = await agent(s2);
    const r2 = await a2.run({ maxSteps: 10 });
    expect(r2).toMatchObject({ status: 'needs_human', reason: 'The site asks for a password I do not have.', steps: 1 });
    // The prompt tells the model about the stop statuses.
    expect(texts(s2.bodies[0]!.messages[0]!.content).join('\n')).toContain('"status": "needs_human"');
    // An unknown status is a validation error sent back to the model (a re-ask), not a stop.
    const s3 = await chatServer((_b, n) => (n === 1 ? json({ action: 'finish', status: 'gave_up' }) : json({ action: 'finish', status: 'ambiguity', reason: 'Which item?' })));
    const a3 = await agent(s3);
    expect(await a3.run({ maxSteps: 10 })).toMatchObject({ status: 'ambiguity', reason: 'Which item?' });
    expect(s3.bodies).toHaveLength(2);
  });

  describe('API errors end the run with a clear code and a valid trace', () => {
    const cases: Array<{ name: string; reply: ChatReply; code: string; options?: Partial<ChatAgentOptions>; calls: number }> = [
      {
        name: '401',
        reply: { status: 401, body: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } },
        code: 'MODEL_ERR_AUTH',
        calls: 1,
      },
      {
        name: '404: an unknown model',
        reply: { status: 404, body: { error: { message: 'The model `nope` does not exist', type: 'invalid_request_error', code: 'model_not_found' } } },
        code: 'MODEL_ERR_NOT_FOUND',
        calls: 1,
      },
      {
        name: '429 (after the SDK retries)',
        reply: { status: 429, headers: { 'retry-after-ms': '1' }, body: { error: { message: 'Rate limit reached' } } },
        code: 'MODEL_ERR_RATE_LIMITED',
        options: { maxRetries: 2 },
        calls: 3,
      },
      {
        name: '500 (after the SDK retries)',
        reply: { status: 500, headers: { 'retry-after-ms': '1' }, body: { error: { message: 'boom' } } },
        code: 'MODEL_ERR_SERVER',
        options: { maxRetries: 1 },
        calls: 2,
      },
      { name: 'timeout', reply: { hang: true }, code: 'MODEL_ERR_TIMEOUT', options: { requestTimeoutMs: 300, maxRetries: 0 }, calls: 1 },
      { name: 'a body that is not JSON', reply: { body: '{"id": "chatcmpl-x", "choices": [' }, code: 'MODEL_ERR_BAD_RESPONSE', calls: 1 },
      { name: 'JSON without choices', reply: { body: { id: 'x', object: 'chat.completion' } }, code: 'MODEL_ERR_BAD_RESPONSE', calls: 1 },
    ];
    for (const c of cases) {
      it(c.name, async () => {
        const s = await chatServer((_b, n) => (n === 1 ? json({ action: 'wait', seconds: 0 }) : c.reply));
        const a = await agent(s, { maxRetries: 0, ...c.options });
        const r = await a.run({ maxSteps: 5 });
        expect(r.status).toBe('error');
        expect(r.error?.code).toBe(c.code);
        expect(s.bodies.length).toBe(1 + c.calls);
        expect(await readResult(a.options.outputDir)).toEqual(r);
        const trace = await readTrace(a.options.outputDir);
        expect(trace.partial).toBe(false);
        expect(trace.entries.map((e) => e.action)).toEqual(['wait']);
        expect(existsSync(join(a.options.outputDir, 'error.txt'))).toBe(true);
      });
    }
  });

  describe('loop guards', () => {
    it('the same action repeated stuckRepeats times ends the run as stuck', async () => {
      const s = await chatServer(() => json({ action: 'click', coordinate: [100, 100] }));
      const a = await agent(s, { stuckRepeats: 3 });
      const r = await a.run({ maxSteps: 20 });
      expect(r.status).toBe('stuck');
      expect(r.error?.code).toBe('AGENT_ERR_STUCK');
      expect((await readTrace(a.options.outputDir)).entries.length).toBe(3);
      expect(s.bodies.length).toBe(3);
    });

    it('identical screenshots stuckScreens times in a row end the run as stuck', async () => {
      const s = await chatServer((_b, n) => json({ action: 'wait', seconds: n / 1000 }));
      const a = await agent(s, { stuckScreens: 3 });
      const r = await a.run({ maxSteps: 20 });
      expect(r.status).toBe('stuck');
      expect(r.error?.code).toBe('AGENT_ERR_STUCK');
      // Screens 1, 2, 3 are the same with a wait between each: the third observation trips the guard before the model is asked.
      expect((await readTrace(a.options.outputDir)).entries.length).toBe(2);
      expect(s.bodies.length).toBe(2);
    });

    it('the wall-clock budget ends the run as timeout, also in the middle of a model call', async () => {
      const s = await chatServer(async (_b, n) => {
        await new Promise((r) => setTimeout(r, 150));
        return json({ action: 'wait', seconds: n / 1000 });
      });
      const a = await agent(s, { budgetMs: 1000, stuckScreens: 0 });
      const r = await a.run({ maxSteps: 100 });
      expect(r.status).toBe('timeout');
      expect(r.error?.code).toBe('AGENT_ERR_BUDGET_EXCEEDED');
      expect(await readResult(a.options.outputDir)).toEqual(r);
      expect((await readTrace(a.options.outputDir)).partial).toBe(false);
    });
  });

  it('rejects bad options naming the field', () => {
    const base = { outputDir: '/tmp/x', vncUrl: desktop.vncUrl, model: 'm' };
    expect(() => new ChatAgent({ ...base, coordinates: 'resized' })).toThrow(
      expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', details: expect.objectContaining({ field: 'screenshotSize' }) }),
    );
    expect(() => new ChatAgent({ ...base, coordinates: 'absolute', screenshotSize: { width: 10, height: 10 } })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ field: 'screenshotSize' }) }),
    );
    expect(() => new ChatAgent({ ...base, coordinates: 'pixels' as never })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'coordinates' }) }));
    expect(() => new ChatAgent({ ...base, historyScreens: 0 })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'historyScreens' }) }));
    expect(() => new ChatAgent({ ...base, model: '' })).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: 'model' }) }));
    expect(() => new ChatAgent({ ...base, modle: 'x' } as never)).toThrow(
      expect.objectContaining({ code: 'AGENT_ERR_BAD_OPTIONS', details: expect.objectContaining({ field: 'modle' }) }),
    );
  });
});
