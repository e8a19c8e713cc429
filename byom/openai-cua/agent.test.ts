/**
 * OpenAICuaAgent on the fake RFB desktop (1280x800, no X server, no browser) against a local Responses
 * API server (test-helpers/fake-responses.ts) through the real `openai` SDK: the requests on the wire,
 * the actions mapped to what the desktop receives, safety checks, and API errors ending in a clear
 * status with a valid trace. (The actions' effects on a real page and current_url over CDP:
 * agent.desktop.test.ts.)
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ComputerAction, ResponseInputItem } from 'openai/resources/responses/responses';
import sharp from 'sharp';
import { beforeEach, describe, expect, it } from 'vitest';
import { keyDowns, presses, useFakeRuns } from '../../harness/agent/test-helpers/fake-run.ts';
import type { FakeDesktop } from '../../harness/rfb/test-helpers/fake-desktop.ts';
import { roundUsd } from '../../harness/trace/model-calls.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { OpenAICuaAgent, type OpenAICuaOptions, type SafetyCheck } from './agent.ts';
import {
  EVENTS_PAGE_ACTIONS,
  computerCall,
  imageSize,
  imagesIn,
  message,
  reasoning,
  refusalMessage,
  safetyCheck,
  startFakeResponses,
  type FakeResponsesServer,
  type Script,
} from './test-helpers/fake-responses.ts';

const TASK = 'Type hi into the text box.';

describe('OpenAICuaAgent on the fake desktop with a scripted Responses API', () => {
  const t = useFakeRuns();
  let desktop: FakeDesktop;
  beforeEach(async () => {
    desktop = await t.desktop({ width: 1280, height: 800 });
  });
  const out = () => t.out('vncua-openai-');
  const serve = async (script: Script) => {
    const s = await startFakeResponses(script);
    t.defer(s.close);
    return s;
  };
  // The fake desktop's screen stays the same: the identical-screens guard is off.
  const agent = (server: Pick<FakeResponsesServer, 'baseURL'>, dir: string, extra: Partial<OpenAICuaOptions> = {}) =>
    new OpenAICuaAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false, stuckScreens: 0, task: TASK, apiKey: 'sk-test', baseURL: server.baseURL, ...extra });

  it('preview tool with screenshotSize: tool config, truncation, task + screenshot, then computer_call_output chained by previous_response_id; clicks land at the mapped pixel; the final message finishes', async () => {
    const click = computerCall({ action: { type: 'click', button: 'left', x: 800, y: 100 } });
    const type = computerCall({ action: { type: 'type', text: 'hi' } });
    const server = await serve([{ reply: [reasoning('The text box is on the right.'), click] }, { reply: [type] }, { reply: [message('I typed hi.')] }]);
    const dir = await out();
    const r = await agent(server, dir, { screenshotSize: { width: 1024, height: 640 } }).run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 3 });

    const [q0, q1, q2] = server.requests.map((q) => q.body);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(q0).toMatchObject({
      model: 'computer-use-preview',
      tools: [{ type: 'computer_use_preview', display_width: 1024, display_height: 640, environment: 'browser' }],
      truncation: 'auto',
    });
    expect(q0!.previous_response_id).toBeUndefined();
    const first = (q0!.input as ResponseInputItem[])[0] as { role: string; content: Array<{ type: string; text?: string; image_url?: string; detail?: string }> };
    expect(first.role).toBe('user');
    expect(first.content[0]).toEqual({ type: 'input_text', text: TASK });
    expect(first.content[1]).toMatchObject({ type: 'input_image', detail: 'auto' });
    expect(imageSize(first.content[1]!.image_url!)).toEqual({ width: 1024, height: 640, mimeType: 'image/png' });

    const ids = [...server.responses.keys()];
    expect(q1!.previous_response_id).toBe(ids[0]);
    expect(q2!.previous_response_id).toBe(ids[1]);
    expect(q1!.tools).toEqual(q0!.tools);
    expect(q1!.truncation).toBe('auto');
    const out1 = (q1!.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput & { output: { current_url?: string } };
    expect(q1!.input).toHaveLength(1);
    // No cdpUrl here: no current_url to send (the page's URL over CDP: agent.desktop.test.ts).
    expect(out1).toMatchObject({ type: 'computer_call_output', call_id: click.call_id, output: { type: 'computer_screenshot' } });
    expect(out1.acknowledged_safety_checks).toBeUndefined();
    const png = Buffer.from(out1.output.image_url!.split(',')[1]!, 'base64');
    expect(await sharp(png).metadata()).toMatchObject({ format: 'png', width: 1024, height: 640 });
    expect(((q2!.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput).call_id).toBe(type.call_id);

    // 800,100 in the 1024x640 image is 1000,125 on the 1280x800 screen (x·1279/1023, y·799/639, rounded).
    expect(presses(desktop.events)).toEqual([[1000, 125, 0]]);
    expect(keyDowns(desktop.events)).toEqual([0x68, 0x69]);

    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text', 'finish']);
    expect(entries[0]!.params).toEqual({ position: { x: 1000, y: 125 }, button: 'left', click_type: 'single' });
    expect(entries[2]!.params).toEqual({ message: 'I typed hi.' });
    const resp = [...server.responses.values()];
    entries.forEach((e, i) => {
      const call = (e.meta!.model_calls as Array<Record<string, unknown>>)[0]!;
      expect(call).toMatchObject({ usage: resp[i]!.usage, response_id: resp[i]!.id, model: 'computer-use-preview-2025-03-11', attempts: 1 });
      expect(call.latency_ms).toBeGreaterThan(0);
      expect(e.meta!.request_bytes).toEqual([server.requests[i]!.bytes]);
    });
    expect((resp[0]!.usage!.input_tokens as number) > 85).toBe(true);
    expect(entries[0]!.meta!.reasoning).toEqual(['The text box is on the right.']);
    expect(await readResult(dir)).toEqual(r);

    // Cost: computer-use-preview-2025-03-11 is priced as computer-use-preview ($3 in, $12 out per 1M tokens), from the usage on the wire.
    const usage = resp.map((x) => x.usage!);
    const cost = usage.map((u) => roundUsd((u.input_tokens * 3 + u.output_tokens * 12) / 1e6));
    entries.forEach((e, i) => {
      expect((e.meta!.model_calls as Array<Record<string, unknown>>)[0]).toMatchObject({
        tokens: { input: usage[i]!.input_tokens, output: usage[i]!.output_tokens, reasoning: 0 },
        cost_usd: cost[i],
      });
      expect(e.meta!.price_notes).toBeUndefined();
    });
    expect(cost.every((c) => c > 0)).toBe(true);
    expect(r).toMatchObject({
      model_calls: 3,
      input_tokens: usage.reduce((s, u) => s + u.input_tokens, 0),
      output_tokens: usage.reduce((s, u) => s + u.output_tokens, 0),
    });
    expect(r.cost_usd).toBeCloseTo(
      cost.reduce((s, c) => s + c, 0),
      12,
    );
  });

  it('batched computer tool: every action of one call is performed in order, screenshots at the real size, no display size or current_url sent', async () => {
    // A short wait (the default 1 s of a bare wait is mapped in actions.test.ts).
    const actions: ComputerAction[] = [...EVENTS_PAGE_ACTIONS, { type: 'wait', ms: 20 } as ComputerAction, { type: 'screenshot' }];
    const call = computerCall({ actions });
    const server = await serve([{ reply: [call] }, { reply: [message('Done.')] }]);
    const dir = await out();
    const r = await agent(server, dir, { model: 'gpt-5.4' }).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });

    const [q0, q1] = server.requests.map((q) => q.body);
    expect(q0!.tools).toEqual([{ type: 'computer' }]);
    expect(q0!.model).toBe('gpt-5.4');
    expect(imagesIn(q0!).map(imageSize)).toEqual([{ width: 1280, height: 800, mimeType: 'image/png' }]);
    expect((q0!.input as Array<{ content: Array<{ detail?: string }> }>)[0]!.content[1]!.detail).toBe('original');
    const out1 = (q1!.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput & { output: { current_url?: string } };
    expect(out1.call_id).toBe(call.call_id);
    expect(out1.output.current_url).toBeUndefined();
    expect(imageSize(out1.output.image_url!)).toMatchObject({ width: 1280, height: 800 });

    const { entries } = await readTrace(dir);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 100, y: 100 } }],
      ['mouse_click', { position: { x: 700, y: 100 }, button: 'left', click_type: 'single' }],
      ['type_text', { text: 'ab' }],
      ['press_keys', { keys: 'ctrl+a' }],
      ['press_keys', { keys: 'BackSpace' }],
      ['type_text', { text: 'cd' }],
      ['mouse_click', { position: { x: 300, y: 150 }, button: 'left', click_type: 'double' }],
      ['mouse_click', { position: { x: 310, y: 160 }, button: 'right', click_type: 'single' }],
      ['mouse_scroll', { position: { x: 150, y: 420 }, direction: 'down', repeat: 2 }],
      ['mouse_drag', { start: { x: 380, y: 380 }, end: { x: 630, y: 410 }, button: 'left' }],
      ['wait', { seconds: 0.02 }],
      ['finish', { message: 'Done.' }],
    ]);
    // The call is accounted once, on the first entry of its turn.
    expect(entries.filter((e) => e.meta?.model_calls)).toHaveLength(2);

    // On the desktop, in order: the click, a double click (two presses), a right click, two wheel-down notches (240 px),
    // the drag's press at its start and release at its end; the keys ab, Ctrl+A, BackSpace, cd.
    expect(presses(desktop.events)).toEqual([
      [700, 100, 0],
      [300, 150, 0],
      [300, 150, 0],
      [310, 160, 2],
      [150, 420, 4],
      [150, 420, 4],
      [380, 380, 0],
    ]);
    expect(desktop.events.at(-1)).toEqual({ kind: 'pointer', x: 630, y: 410, mask: 0 });
    expect(keyDowns(desktop.events)).toEqual([0x61, 0x62, 0xffe3, 0x61, 0xff08, 0x63, 0x64]);
  });

  it('a pending safety check the policy does not acknowledge ends the run with status sensitive_action before acting; result.json and execution.json are valid', async () => {
    const check = safetyCheck('malicious_instructions', 'The page may contain instructions.');
    const server = await serve([{ reply: [computerCall({ action: { type: 'click', button: 'left', x: 100, y: 100 }, checks: [check] })] }]);
    const dir = await out();
    const r = await agent(server, dir, { acknowledgeSafetyChecks: ['irrelevant_domain'] }).run({ maxSteps: 5 });
    expect(r.status).toBe('sensitive_action');
    expect(r.error?.code).toBe('AGENT_ERR_SAFETY_CHECK');
    expect(r.error?.message).toContain(check.id);
    expect(r.reason).toContain('malicious_instructions');
    expect(await readResult(dir)).toEqual(r);
    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries).toEqual([]);
    expect(server.requests).toHaveLength(1);
    expect(presses(desktop.events)).toEqual([]);
  });

  it('safety checks acknowledged by the policy (codes or a function) are performed past and sent back as acknowledged_safety_checks', async () => {
    const c1 = safetyCheck('irrelevant_domain');
    const c2 = safetyCheck('sensitive_domain');
    const server = await serve([
      { reply: [computerCall({ action: { type: 'move', x: 50, y: 60 }, checks: [c1] })] },
      { reply: [computerCall({ action: { type: 'move', x: 70, y: 80 }, checks: [c2] })] },
      { reply: [message('ok')] },
    ]);
    const dir = await out();
    const seen: SafetyCheck[] = [];
    const policy = (c: SafetyCheck) => {
      seen.push(c);
      return c.code === 'irrelevant_domain' || c.code === 'sensitive_domain';
    };
    const r = await agent(server, dir, { acknowledgeSafetyChecks: policy }).run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(seen).toEqual([c1, c2]);
    const acks = server.requests.map((q) => ((q.body.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput).acknowledged_safety_checks);
    expect(acks).toEqual([undefined, [c1], [c2]]);
    const { entries } = await readTrace(dir);
    expect(entries.map((e) => e.action)).toEqual(['mouse_move', 'mouse_move', 'finish']);
    expect(entries[0]!.meta!.safety_checks_acknowledged).toEqual([c1]);

    // A list of codes acknowledges only those codes: a second check in the same call stops the run.
    const server2 = await serve([
      { reply: [computerCall({ action: { type: 'move', x: 5, y: 5 }, checks: [safetyCheck('sensitive_domain'), safetyCheck('malicious_instructions')] })] },
    ]);
    const dir2 = await out();
    const r2 = await agent(server2, dir2, { acknowledgeSafetyChecks: ['sensitive_domain'] }).run({ maxSteps: 5 });
    expect(r2.status).toBe('sensitive_action');
    expect((await readTrace(dir2)).entries).toEqual([]);
  });

  it('maxCostUsd reached by the first call: the run ends cost_cap before the second call (one request on the wire), trace valid', async () => {
    const server = await serve([
      { reply: [computerCall({ action: { type: 'move', x: 20, y: 30 } })] },
      { reply: [computerCall({ action: { type: 'move', x: 40, y: 50 } })] },
      { reply: [message('done')] },
    ]);
    const dir = await out();
    // $1 per 1M tokens both ways: the first call's usage (a screenshot: >85 input tokens) costs more than $0.00001.
    const r = await agent(server, dir, { model: 'priced-model', prices: { 'priced-model': { input: 1, output: 1 } }, maxCostUsd: 0.00001 }).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'cost_cap', steps: 1, model_calls: 1, error: { code: 'AGENT_ERR_COST_CAP' } });
    expect(r.cost_usd).toBeGreaterThanOrEqual(0.00001);
    expect(server.requests).toHaveLength(1);
    expect(await readResult(dir)).toEqual(r);
    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => e.action)).toEqual(['mouse_move']);
    expect(entries[0]!.meta!.model_calls).toHaveLength(1);
  });

  it('a message with a refusal content part ends the run with status sensitive_action, the refusal as its reason, the call accounted', async () => {
    const server = await serve([{ reply: [computerCall({ action: { type: 'move', x: 20, y: 30 } })] }, { reply: [refusalMessage("I can't help with purchasing that.")] }]);
    const dir = await out();
    const r = await agent(server, dir).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'sensitive_action', reason: "I can't help with purchasing that.", steps: 2, model_calls: 2 });
    expect(r.error).toBeUndefined();
    expect(await readResult(dir)).toEqual(r);
    const { entries } = await readTrace(dir);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 20, y: 30 } }],
      ['finish', { message: "I can't help with purchasing that.", status: 'sensitive_action', reason: "I can't help with purchasing that." }],
    ]);
  });

  const errorCases: Array<{ name: string; script: Script; options?: Partial<OpenAICuaOptions>; code: string; requests: number }> = [
    { name: '401', script: [{ httpError: 401, message: 'Incorrect API key provided.' }], code: 'MODEL_ERR_AUTH', requests: 1 },
    { name: '429 after the SDK retries', script: () => ({ httpError: 429 }), options: { maxRetries: 1 }, code: 'MODEL_ERR_RATE_LIMITED', requests: 2 },
    { name: '500 after the SDK retries', script: () => ({ httpError: 500 }), options: { maxRetries: 2 }, code: 'MODEL_ERR_SERVER', requests: 3 },
    { name: 'no answer (timeout)', script: () => ({ hang: true }), options: { maxRetries: 1, requestTimeoutMs: 400 }, code: 'MODEL_ERR_TIMEOUT', requests: 2 },
    { name: 'a JSON body cut short', script: [{ raw: '{"id": "resp_1", "output": [', contentType: 'application/json' }], code: 'MODEL_ERR_BAD_RESPONSE', requests: 1 },
    { name: 'an HTML body', script: [{ raw: '<html>Bad gateway</html>', contentType: 'text/html' }], code: 'MODEL_ERR_BAD_RESPONSE', requests: 1 },
    { name: 'JSON without output', script: [{ raw: '{"id": "resp_1", "object": "response"}', contentType: 'application/json' }], code: 'MODEL_ERR_BAD_RESPONSE', requests: 1 },
    {
      name: 'a computer_call without call_id',
      script: [{ raw: JSON.stringify({ id: 'resp_1', object: 'response', output: [{ type: 'computer_call', action: { type: 'screenshot' } }] }), contentType: 'application/json' }],
      code: 'MODEL_ERR_BAD_RESPONSE',
      requests: 1,
    },
    {
      name: 'a response with status failed',
      script: [{ reply: [], status: 'failed', error: { code: 'server_error', message: 'The model failed.' } }],
      code: 'MODEL_ERR_SERVER',
      requests: 1,
    },
    {
      name: 'an action of unknown type',
      script: [{ reply: [computerCall({ action: { type: 'zoom', x: 1, y: 1 } as unknown as ComputerAction })] }],
      code: 'MODEL_ERR_UNKNOWN_ACTION',
      requests: 1,
    },
  ];
  it.each(errorCases)('$name → status error with $code; result.json, execution.json and error.txt are written', async ({ script, options, code, requests }) => {
    const server = await serve(script);
    const dir = await out();
    const r = await agent(server, dir, options).run({ maxSteps: 5 });
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe(code);
    expect(server.requests).toHaveLength(requests);
    expect(await readResult(dir)).toEqual(r);
    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries).toEqual([]);
    expect(existsSync(join(dir, 'error.txt'))).toBe(true);
  });

  it('an API that cannot be reached → MODEL_ERR_CONNECT', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const dir = await out();
    const r = await agent({ baseURL: `http://127.0.0.1:${port}/v1` }, dir, { maxRetries: 0 }).run({ maxSteps: 5 });
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('MODEL_ERR_CONNECT');
    expect(await readResult(dir)).toEqual(r);
  });

  it('an error mid-run keeps the entries before it; an unknown action after a good one in the same batch keeps the good one; a retried call reports its attempts', async () => {
    let n = 0;
    const server = await serve((_req, i) => {
      if (i === 0) return { reply: [computerCall({ action: { type: 'move', x: 20, y: 30 } })] };
      // The next call fails once with 500, then succeeds with a batch whose second action is unknown.
      if (n++ === 0) return { httpError: 503 };
      return { reply: [computerCall({ actions: [{ type: 'move', x: 40, y: 50 }, { type: 'teleport' } as unknown as ComputerAction] })] };
    });
    const dir = await out();
    const r = await agent(server, dir, { maxRetries: 2 }).run({ maxSteps: 5 });
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('MODEL_ERR_UNKNOWN_ACTION');
    const { entries } = await readTrace(dir);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 20, y: 30 } }],
      ['mouse_move', { position: { x: 40, y: 50 } }],
    ]);
    expect((entries[1]!.meta!.model_calls as Array<{ attempts: number }>)[0]!.attempts).toBe(2);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]!.body.previous_response_id).toBe([...server.responses.keys()][0]);
  });
});
