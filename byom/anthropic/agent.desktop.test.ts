/**
 * AnthropicCuaAgent against a scripted model behind a local Messages API, through the real
 * `@anthropic-ai/sdk`, on a real 1920x1080 desktop (so screenshots go out as 1280x720 and every
 * coordinate comes back scaled): the requests (headers, tool, screenshots, tool_result ids,
 * history trimming), every action as the page sees it, the accounting in the trace, stop reasons,
 * and the loop guards.
 */
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { useEventsDesktop } from '../../harness/agent/test-helpers/desktops.ts';
import { roundUsd } from '../../harness/trace/model-calls.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { AnthropicCuaAgent, DEFAULT_ANTHROPIC_MODEL, DEFAULT_SYSTEM_PROMPT, type AnthropicCuaOptions } from './agent.ts';
import { TRIMMED_IMAGE_TEXT } from './conversation.ts';
import { DisplayMap } from './display.ts';
import { lastToolResults, requestImages, resultText, startFakeMessages, text, toolUse, type FakeMessagesServer, type Script } from './test-helpers/fake-messages.ts';

/** Width and height of a base64 or raw image, decoded by sharp. */
async function size(bytes: Buffer): Promise<{ width: number; height: number; format: string }> {
  const m = await sharp(bytes).metadata();
  return { width: m.width!, height: m.height!, format: m.format! };
}

describe('AnthropicCuaAgent on a 1920x1080 desktop', () => {
  const env = useEventsDesktop('xvnc', { size: '1920x1080' });
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  /** Start a fake API playing `script` and an agent pointed at it; returns both and the output dir. */
  async function setup(script: Script, options: Partial<AnthropicCuaOptions> = {}): Promise<{ server: FakeMessagesServer; agent: AnthropicCuaAgent; dir: string }> {
    const server = await startFakeMessages(script);
    cleanups.push(server.close);
    const dir = await env.out('vncua-anthropic-');
    const agent = new AnthropicCuaAgent({
      outputDir: dir,
      vncUrl: env.desktop.vncUrl,
      cdpUrl: env.desktop.cdpUrl,
      record: false,
      task: 'Click the two corners of the screen.',
      apiKey: server.apiKey,
      baseURL: server.baseURL,
      maxRetries: 0,
      ...options,
    });
    return { server, agent, dir };
  }

  it('sends the tool, the headers and 1280x720 screenshots; maps clicks on the edge pixels exactly; answers every tool_use by id; accounts each call', async () => {
    const first = [text('I will click both corners.'), toolUse({ action: 'left_click', coordinate: [0, 0] }), toolUse({ action: 'left_click', coordinate: [1279, 719] })];
    const { server, agent, dir } = await setup([
      { reply: first, usage: { cache_creation_input_tokens: 56, cache_read_input_tokens: 1234 } },
      { reply: [text('Both corners are clicked.')] },
    ]);
    const r = await agent.run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    expect(await readResult(dir)).toEqual(r);
    expect(server.requests.every((q) => !q.rejected)).toBe(true);
    expect(server.requests).toHaveLength(2);

    const [q0, q1] = server.requests;
    expect(q0!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(String(q0!.headers['anthropic-beta']).split(',')).toContain('computer-use-2025-11-24');
    expect(q0!.body.tools).toEqual([{ type: 'computer_20251124', name: 'computer', display_width_px: 1280, display_height_px: 720, enable_zoom: true }]);
    expect(q0!.body).toMatchObject({ model: DEFAULT_ANTHROPIC_MODEL, max_tokens: 4096, system: DEFAULT_SYSTEM_PROMPT });
    expect(q0!.body.messages).toHaveLength(1);
    const c0 = q0!.body.messages[0]!.content as Array<{ type: string; text?: string }>;
    expect(c0[0]).toEqual({ type: 'text', text: 'Click the two corners of the screen.' });
    const imgs0 = requestImages(q0!.body);
    expect(imgs0).toHaveLength(1);
    expect(await size(imgs0[0]!.bytes)).toEqual({ width: 1280, height: 720, format: 'png' });

    // The second request: the reply went back as sent, then one tool_result per tool_use, same ids, same order; the screenshot in the last.
    expect(q1!.body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    const results = lastToolResults(q1!.body);
    expect(results.map((x) => x.tool_use_id)).toEqual([first[1]!, first[2]!].map((b) => (b as { id: string }).id));
    expect(results.map((x) => x.is_error ?? false)).toEqual([false, false]);
    const imgs1 = requestImages(q1!.body);
    expect(imgs1.map((i) => i.toolUseId)).toEqual([null, (first[2] as { id: string }).id]);
    expect(await size(imgs1[1]!.bytes)).toEqual({ width: 1280, height: 720, format: 'png' });

    // The page saw the presses on the screen's corner pixels.
    const downs = (await env.desktop.state()).events.filter((e) => e.type === 'mousedown').map((e) => [e.x, e.y]);
    expect(downs).toEqual([
      [0, 0],
      [1919, 1079],
    ]);

    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_click', { position: { x: 0, y: 0 }, button: 'left', click_type: 'single' }],
      ['mouse_click', { position: { x: 1919, y: 1079 }, button: 'left', click_type: 'single' }],
      ['finish', { message: 'Both corners are clicked.' }],
    ]);
    const meta0 = entries[0]!.meta as { model_calls: Array<Record<string, unknown>>; request_bytes: number[]; model_text: string[] };
    expect(meta0.model_calls).toHaveLength(1);
    expect(meta0.model_calls[0]).toMatchObject({ response_id: server.messages[0]!.id, model: DEFAULT_ANTHROPIC_MODEL, attempts: 1 });
    expect(meta0.model_calls[0]!.latency_ms).toBeGreaterThan(0);
    expect(meta0.model_calls[0]!.usage).toMatchObject({
      input_tokens: server.messages[0]!.usage.input_tokens,
      output_tokens: server.messages[0]!.usage.output_tokens,
      cache_creation_input_tokens: 56,
      cache_read_input_tokens: 1234,
    });
    // Cost at claude-sonnet-4-6's rates: uncached input $3, cache writes $3.75, cache hits $0.30, output $15 per 1M tokens.
    const [u0, u1] = server.messages.map((m) => m.usage);
    const cost0 = roundUsd((u0!.input_tokens * 3 + 56 * 3.75 + 1234 * 0.3 + u0!.output_tokens * 15) / 1e6);
    const cost1 = roundUsd((u1!.input_tokens * 3 + u1!.output_tokens * 15) / 1e6);
    expect(meta0.model_calls[0]).toMatchObject({
      tokens: { input: u0!.input_tokens + 56 + 1234, output: u0!.output_tokens, cached_input: 1234, cache_write: 56 },
      cost_usd: cost0,
    });
    expect((entries[2]!.meta as { model_calls: Array<Record<string, unknown>> }).model_calls[0]).toMatchObject({ cost_usd: cost1 });
    expect(r).toMatchObject({ model_calls: 2, input_tokens: u0!.input_tokens + 56 + 1234 + u1!.input_tokens, output_tokens: u0!.output_tokens + u1!.output_tokens });
    expect(r.cost_usd).toBeCloseTo(cost0 + cost1, 12);
    expect(meta0.request_bytes).toEqual([q0!.bytes]);
    expect(meta0.model_text).toEqual(['I will click both corners.']);
    expect(entries[1]!.meta).toBeUndefined();
    expect((entries[2]!.meta as { model_calls: Array<{ response_id: string }> }).model_calls[0]!.response_id).toBe(server.messages[1]!.id);
  });

  it('performs every action of the tool on the page, and answers cursor_position, zoom, screenshot and unknown actions', async () => {
    const map = new DisplayMap({ width: 1280, height: 720 }, { width: 1920, height: 1080 });
    /** The display coordinate the model would give for a screen point, and the screen point it comes back as. */
    const at = (x: number, y: number): [number, number] => {
      const p = map.toDisplay({ x, y });
      return [p.x, p.y];
    };
    const back = (x: number, y: number) => map.toScreen(map.toDisplay({ x, y }));
    const turn5 = [
      toolUse({ action: 'mouse_move', coordinate: [300, 200] }),
      toolUse({ action: 'cursor_position' }),
      toolUse({ action: 'zoom', region: [0, 0, 400, 200] }),
      toolUse({ action: 'screenshot' }),
      toolUse({ action: 'teleport', coordinate: [1, 1] }),
    ];
    const { server, agent, dir } = await setup([
      {
        reply: [
          toolUse({ action: 'double_click', coordinate: at(150, 150) }),
          toolUse({ action: 'right_click', coordinate: at(210, 150) }),
          toolUse({ action: 'middle_click', coordinate: at(270, 150) }),
          toolUse({ action: 'triple_click', coordinate: at(330, 150) }),
        ],
      },
      {
        reply: [
          toolUse({ action: 'left_click', coordinate: at(900, 150) }),
          toolUse({ action: 'type', text: 'Hello' }),
          toolUse({ action: 'key', text: 'ctrl+a BackSpace' }),
          toolUse({ action: 'type', text: 'Zoë' }),
          toolUse({ action: 'key', text: 'Return' }),
          toolUse({ action: 'hold_key', text: 'shift', duration: 0.2 }),
          toolUse({ action: 'wait', duration: 0.1 }),
        ],
      },
      {
        reply: [
          toolUse({ action: 'scroll', coordinate: at(150, 420), scroll_direction: 'down', scroll_amount: 3 }),
          toolUse({ action: 'scroll', coordinate: at(150, 420), scroll_direction: 'down', scroll_amount: 2, text: 'shift' }),
        ],
      },
      { reply: [toolUse({ action: 'left_click_drag', start_coordinate: at(380, 380), coordinate: at(630, 410) })] },
      {
        reply: [
          toolUse({ action: 'left_mouse_down', coordinate: at(768, 392) }),
          toolUse({ action: 'mouse_move', coordinate: at(900, 392) }),
          toolUse({ action: 'mouse_move', coordinate: at(960, 392) }),
          toolUse({ action: 'left_mouse_up' }),
        ],
      },
      { reply: turn5 },
      { reply: [text('All done.')] },
    ]);
    const r = await agent.run({ maxSteps: 20 });
    expect(r).toMatchObject({ status: 'finished', steps: 7 });
    expect(server.requests.every((q) => !q.rejected)).toBe(true);

    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_click', { position: back(150, 150), button: 'left', click_type: 'double' }],
      ['mouse_click', { position: back(210, 150), button: 'right', click_type: 'single' }],
      ['mouse_click', { position: back(270, 150), button: 'middle', click_type: 'single' }],
      ['mouse_click', { position: back(330, 150), button: 'left', click_type: 'triple' }],
      ['mouse_click', { position: back(900, 150), button: 'left', click_type: 'single' }],
      ['type_text', { text: 'Hello' }],
      ['press_keys', { keys: 'ctrl+a' }],
      ['press_keys', { keys: 'BackSpace' }],
      ['type_text', { text: 'Zoë' }],
      ['press_keys', { keys: 'Return' }],
      ['press_keys', { keys: 'shift' }],
      ['wait', { seconds: 0.2 }],
      ['wait', { seconds: 0.1 }],
      ['mouse_scroll', { position: back(150, 420), direction: 'down', repeat: 3 }],
      ['mouse_scroll', { position: back(150, 420), direction: 'right', repeat: 2 }],
      ['mouse_drag', { start: back(380, 380), end: back(630, 410), button: 'left' }],
      ['mouse_drag', { start: back(768, 392), end: back(960, 392), button: 'left' }],
      ['mouse_move', { position: map.toScreen({ x: 300, y: 200 }) }],
      ['finish', { message: 'All done.' }],
    ]);
    expect(entries.every((e) => !('error' in e))).toBe(true);
    expect((entries[10]!.meta as { anthropic_notes: string[] }).anthropic_notes[0]).toMatch(/cannot hold keys/);

    // What the page saw.
    const s = await env.desktop.state();
    const ev = (type: string) => s.events.filter((e) => e.type === type);
    // The triple click's second press makes a dblclick too.
    expect(ev('dblclick').map((e) => [e.x, e.y])).toEqual([
      [back(150, 150).x, back(150, 150).y],
      [back(330, 150).x, back(330, 150).y],
    ]);
    expect(ev('contextmenu').map((e) => [e.x, e.y])).toEqual([[back(210, 150).x, back(210, 150).y]]);
    expect(
      ev('mousedown')
        .filter((e) => e.button === 1)
        .map((e) => [e.x, e.y]),
    ).toEqual([[back(270, 150).x, back(270, 150).y]]);
    expect(ev('mousedown').some((e) => e.detail === 3 && e.x === back(330, 150).x)).toBe(true);
    // ctrl+a reached the page (it cancels Ctrl shortcuts), then BackSpace deleted one character.
    expect(ev('keydown').some((e) => e.key === 'a' && e.ctrl)).toBe(true);
    expect(s.text).toBe('HellZoë\n');
    expect(ev('keydown').some((e) => e.key === 'Shift')).toBe(true);
    expect(s.scroll.top).toBeGreaterThan(0);
    expect(s.scroll.left).toBeGreaterThan(0);
    expect(ev('drop').map((e) => e.data)).toEqual(['src']);
    expect(s.slider).toBeGreaterThan(35);
    expect(s.slider).toBeLessThan(65);

    // The answers of the last tool round: nothing for the move, the pointer, the zoomed region, a screenshot, an error; then the screenshot.
    const last = server.requests[6]!.body;
    const results = lastToolResults(last);
    expect(results.map((x) => x.tool_use_id)).toEqual(turn5.map((b) => b.id));
    expect(results.map((x) => x.is_error ?? false)).toEqual([false, false, false, false, true]);
    expect(resultText(results[1]!)).toBe('X=300,Y=200');
    expect(resultText(results[4]!)).toMatch(/Unknown computer action "teleport"/);
    const imgs = requestImages(last).filter((i) => i.message === last.messages.length - 1);
    expect(imgs.map((i) => i.toolUseId)).toEqual([turn5[2]!.id, turn5[3]!.id, null]);
    expect(await size(imgs[0]!.bytes)).toEqual({ width: 600, height: 300, format: 'png' });
    expect(await size(imgs[1]!.bytes)).toEqual({ width: 1280, height: 720, format: 'png' });
    expect(await size(imgs[2]!.bytes)).toEqual({ width: 1280, height: 720, format: 'png' });
    // The zoom is the top-left 600x300 of the screen at full resolution: the page's pad (#eef) fills it.
    const { data } = await sharp(imgs[0]!.bytes).raw().toBuffer({ resolveWithObject: true });
    expect([data[3 * (100 * 600 + 500)], data[3 * (100 * 600 + 500) + 1], data[3 * (100 * 600 + 500) + 2]]).toEqual([0xee, 0xee, 0xff]);
  });

  it('keeps only the last historyScreens screenshots in the conversation; older ones become text', async () => {
    const moves = [0, 1, 2, 3].map((k) => ({ reply: [toolUse({ action: 'mouse_move', coordinate: [100 + 50 * k, 100] })] }));
    const { server, agent } = await setup([...moves, { reply: [text('done')] }], { historyScreens: 2 });
    const r = await agent.run({ maxSteps: 10 });
    expect(r.status).toBe('finished');
    expect(server.requests.every((q) => !q.rejected)).toBe(true);
    expect(server.requests.map((q) => requestImages(q.body).length)).toEqual([1, 2, 2, 2, 2]);
    const last = server.requests[4]!.body;
    // The two kept are the newest: in the last two user turns.
    expect(requestImages(last).map((i) => i.message)).toEqual([6, 8]);
    const flat = JSON.stringify(last.messages);
    expect(flat.split(TRIMMED_IMAGE_TEXT).length - 1).toBe(3);
    expect(last.messages[0]!.content).toEqual([
      { type: 'text', text: 'Click the two corners of the screen.' },
      { type: 'text', text: TRIMMED_IMAGE_TEXT },
    ]);
  });

  it('a model repeating the same click ends the run as stuck', async () => {
    const { server, agent, dir } = await setup(() => ({ reply: [toolUse({ action: 'left_click', coordinate: [100, 100] })] }), { stuckRepeats: 4, stuckScreens: 0 });
    const r = await agent.run({ maxSteps: 30 });
    expect(r.status).toBe('stuck');
    expect(r.error?.code).toBe('AGENT_ERR_STUCK');
    expect(await readResult(dir)).toEqual(r);
    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries).toHaveLength(4);
    expect(server.requests).toHaveLength(4);
  });

  it('stop_reason refusal ends the run with status sensitive_action (the explanation its reason); max_tokens with an error; pause_turn goes on', async () => {
    {
      const { agent, dir } = await setup([
        { reply: [toolUse({ action: 'left_click', coordinate: [10, 10] })] },
        {
          reply: [text('I cannot help with that.')],
          stopReason: 'refusal',
          stopDetails: {
            type: 'refusal',
            category: 'general_harms',
            explanation: 'policy',
            fallback_credit_token: null,
            fallback_has_prefill_claim: null,
            recommended_model: null,
          },
        },
      ]);
      const r = await agent.run({ maxSteps: 10 });
      expect(r.status).toBe('sensitive_action');
      expect(r.reason).toBe('policy');
      expect(r.error?.code).toBe('MODEL_ERR_REFUSAL');
      expect(await readResult(dir)).toEqual(r);
      const { entries, partial } = await readTrace(dir);
      expect(partial).toBe(false);
      expect(entries.map((e) => e.action)).toEqual(['mouse_click']);
    }
    {
      const { agent, dir } = await setup([{ reply: [text('Let me think about this at great length')], stopReason: 'max_tokens' }]);
      const r = await agent.run({ maxSteps: 10 });
      expect(r.status).toBe('error');
      expect(r.error?.code).toBe('MODEL_ERR_MAX_TOKENS');
      expect(await readResult(dir)).toEqual(r);
      expect((await readTrace(dir)).entries).toEqual([]);
    }
    {
      const { server, agent } = await setup([{ reply: [text('Searching...')], stopReason: 'pause_turn' }, { reply: [text('Nothing to do.')] }]);
      const r = await agent.run({ maxSteps: 10 });
      expect(r).toMatchObject({ status: 'finished', steps: 2 });
      expect(server.requests.every((q) => !q.rejected)).toBe(true);
      // The paused reply went back as the last turn, with no new screenshot.
      expect(server.requests[1]!.body.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(requestImages(server.requests[1]!.body)).toHaveLength(1);
    }
  });

  it('tool calls that all fail maxFailedTurns replies in a row end the run with status parse_error; each failure is an is_error result', async () => {
    const { server, agent, dir } = await setup(() => ({ reply: [toolUse({ action: 'left_click', coordinate: [5000, 1] }), toolUse({ action: 'type', text: 'never typed' })] }), {
      maxFailedTurns: 3,
    });
    const r = await agent.run({ maxSteps: 30 });
    expect(r.status).toBe('parse_error');
    expect(r.error?.code).toBe('AGENT_ERR_PARSE');
    expect(await readResult(dir)).toEqual(r);
    expect((await readTrace(dir)).entries).toEqual([]);
    expect(server.requests).toHaveLength(3);
    const results = lastToolResults(server.requests[2]!.body);
    expect(results.map((x) => x.is_error)).toEqual([true, true]);
    expect(resultText(results[0]!)).toMatch(/outside the 1280x720 display/);
    expect(resultText(results[1]!)).toMatch(/^Skipped/);
    // The screenshot follows the error results.
    expect(requestImages(server.requests[2]!.body).at(-1)!.toolUseId).toBeNull();
  });

  it('an unknown key, or text a primitive refuses, is an is_error result with the message, and the run goes on', async () => {
    const { server, agent, dir } = await setup([
      { reply: [toolUse({ action: 'key', text: 'ctrl+Retrun' })] },
      { reply: [toolUse({ action: 'type', text: 'bell\u0007' })] },
      { reply: [toolUse({ action: 'key', text: 'Return' })] },
      { reply: [text('ok')] },
    ]);
    const r = await agent.run({ maxSteps: 10 });
    expect(r.status).toBe('finished');
    expect(server.requests.every((q) => !q.rejected)).toBe(true);
    // Refused before anything is pressed (no trace entry).
    const key = lastToolResults(server.requests[1]!.body);
    expect(key[0]!.is_error).toBe(true);
    expect(resultText(key[0]!)).toMatch(/Unknown key "Retrun".*Did you mean "Return"/s);
    // Refused by the primitive: recorded as a failed attempt, answered with its message.
    const typed = lastToolResults(server.requests[2]!.body);
    expect(typed[0]!.is_error).toBe(true);
    expect(resultText(typed[0]!)).toMatch(/U\+0007/);
    const { entries } = await readTrace(dir);
    expect(entries.map((e) => [e.action, 'error' in e ? e.error.code : null])).toEqual([
      ['type_text', 'ACTION_ERR_BAD_ARGUMENT'],
      ['press_keys', null],
      ['finish', null],
    ]);
  });

  it('with computer_20250124 (picked for Haiku 4.5) it sends that tool and beta flag, without zoom', async () => {
    const { server, agent } = await setup([{ reply: [toolUse({ action: 'zoom', region: [0, 0, 10, 10] })] }, { reply: [text('ok')] }], { model: 'claude-haiku-4-5' });
    expect(agent.toolVersion).toBe('computer_20250124');
    const r = await agent.run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(server.requests.every((q) => !q.rejected)).toBe(true);
    expect(String(server.requests[0]!.headers['anthropic-beta']).split(',')).toEqual(['computer-use-2025-01-24']);
    expect(server.requests[0]!.body.tools).toEqual([{ type: 'computer_20250124', name: 'computer', display_width_px: 1280, display_height_px: 720 }]);
    expect(lastToolResults(server.requests[1]!.body)[0]!.is_error).toBe(true);
  });
});
