/** The fake Messages API refuses what the real one refuses, so the adapter tests' "accepted" means something. */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeMessages, text, toolUse, type FakeMessagesServer } from './fake-messages.ts';

describe('fake Messages API', () => {
  let server: FakeMessagesServer;
  let png: string;
  beforeAll(async () => {
    server = await startFakeMessages(() => ({ reply: [text('ok')] }));
    png = (
      await sharp({ create: { width: 40, height: 30, channels: 3, background: '#fff' } })
        .png()
        .toBuffer()
    ).toString('base64');
  });
  afterAll(() => server.close());

  const client = (apiKey = server.apiKey) => new Anthropic({ apiKey, baseURL: server.baseURL, maxRetries: 0 });
  const tool = { type: 'computer_20251124' as const, name: 'computer' as const, display_width_px: 40, display_height_px: 30 };
  const base = (): MessageCreateParamsNonStreaming => ({
    model: 'claude-sonnet-4-6',
    max_tokens: 100,
    tools: [tool],
    betas: ['computer-use-2025-11-24'],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'hi' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        ],
      },
    ],
  });
  const status = async (body: MessageCreateParamsNonStreaming, apiKey?: string) => {
    try {
      await client(apiKey).beta.messages.create(body);
      return 200;
    } catch (e) {
      return (e as { status?: number }).status;
    }
  };

  it('answers a valid request with a typed message and usage counting the image', async () => {
    const m = await client().beta.messages.create(base());
    expect(m).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' });
    expect(m.usage.input_tokens).toBe(Math.ceil(2 / 4) + Math.ceil((40 * 30) / 750));
  });

  it('refuses a wrong key, a missing beta flag, a tool_use without its tool_result, a stray tool_result and a bad image', async () => {
    expect(await status(base(), 'sk-ant-other')).toBe(401);
    expect(await status({ ...base(), betas: [] })).toBe(400);
    const use = toolUse({ action: 'screenshot' });
    const conv = (next: MessageCreateParamsNonStreaming['messages'][number]): MessageCreateParamsNonStreaming => ({
      ...base(),
      messages: [...base().messages, { role: 'assistant', content: [use] }, next],
    });
    expect(await status(conv({ role: 'user', content: [{ type: 'text', text: 'no result' }] }))).toBe(400);
    expect(await status(conv({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_other' }] }))).toBe(400);
    expect(
      await status(
        conv({
          role: 'user',
          content: [
            { type: 'text', text: 'first' },
            { type: 'tool_result', tool_use_id: use.id },
          ],
        }),
      ),
    ).toBe(400);
    expect(await status(conv({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id }] }))).toBe(200);
    expect(await status({ ...base(), messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: png } }] }] })).toBe(400);
    expect(await status({ ...base(), messages: [{ role: 'assistant', content: 'hi' }] })).toBe(400);
    expect(server.requests.filter((q) => q.rejected).map((q) => q.rejected!.status)).toEqual([401, 400, 400, 400, 400, 400, 400]);
  });
});
