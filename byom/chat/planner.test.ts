/** ChatPlanner through the real `openai` SDK against a scripted chat server on 127.0.0.1:0. */
import { afterEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { startChatServer, images, type ChatServer } from './test-helpers/chat-server.ts';
import { ChatPlanner } from './planner.ts';

const input = {
  task: 'Explore.',
  screenshotPng: Buffer.from('png').toString('base64'),
  screen: { width: 1280, height: 800 },
  url: 'http://app/',
  history: [{ action: 'press_keys', params: { keys: 'Escape' } }],
};
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('ChatPlanner', () => {
  it('sends the screen and history, and turns the JSON action into a trace step with its tokens and cost', async () => {
    server = await startChatServer(() => 'Looks stuck. {"action": "click", "coordinate": [100, 200]}');
    const p = new ChatPlanner({ model: 'test-vlm', baseURL: server.baseURL, prices: { 'test-vlm': { input: 1, output: 2 } } });
    const a = await p.next(input, { signal: AbortSignal.timeout(10_000) });
    expect(a).toEqual({
      step: { action: 'mouse_click', params: { position: { x: 100, y: 200 }, button: 'left', click_type: 'single' } },
      tokens: { input: 1001, output: 21 },
      costUsd: 0.001043,
    });
    expect(images(server.bodies[0]!)).toEqual([`data:image/png;base64,${input.screenshotPng}`]);
    expect(JSON.stringify(server.bodies[0]!.messages)).toContain('press_keys');
  });

  it('rejects a garbage answer with EXPLORER_ERR_MODEL_ANSWER (its cost in details), and a failed call with EXPLORER_ERR_MODEL_CALL', async () => {
    server = await startChatServer((_b, n) =>
      n === 1 ? 'I would click the blue thing.' : n === 2 ? '{"action": "click", "coordinate": [5000, 1]}' : { status: 400, body: { error: { message: 'bad' } } },
    );
    const p = new ChatPlanner({ model: 'test-vlm', baseURL: server.baseURL, prices: { 'test-vlm': { input: 1, output: 2 } }, maxRetries: 0 });
    const e1 = await p.next(input, { signal: AbortSignal.timeout(10_000) }).catch((e: unknown) => e);
    expect(isVncuaError(e1, 'EXPLORER_ERR_MODEL_ANSWER')).toBe(true);
    expect((e1 as { details: { costUsd: number } }).details.costUsd).toBeGreaterThan(0);
    const e2 = await p.next(input, { signal: AbortSignal.timeout(10_000) }).catch((e: unknown) => e);
    expect(isVncuaError(e2, 'EXPLORER_ERR_MODEL_ANSWER')).toBe(true);
    const e3 = await p.next(input, { signal: AbortSignal.timeout(10_000) }).catch((e: unknown) => e);
    expect(isVncuaError(e3, 'EXPLORER_ERR_MODEL_CALL')).toBe(true);
  });
});
