/**
 * Every model adapter puts the navigation guard's notices ("domain not allowed: URL (rule)") into the request after
 * the guard blocked something, and into no other. The guard itself is replaced here by takeDomainNotices() answering
 * one notice on the second observation (the real guard and a real browser: byom/guard.desktop.test.ts); the requests
 * go through the real SDKs to local servers speaking each wire format, on the fake RFB desktop.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { useFakeRuns } from '../harness/agent/test-helpers/fake-run.ts';
import type { FakeDesktop } from '../harness/rfb/test-helpers/fake-desktop.ts';
import { AnthropicCuaAgent } from './anthropic/agent.ts';
import { startFakeMessages, text, toolUse } from './anthropic/test-helpers/fake-messages.ts';
import { ChatAgent } from './chat/agent.ts';
import { startChatServer, texts } from './chat/test-helpers/chat-server.ts';
import { HttpPlannerAgent } from './http/agent.ts';
import { startScriptedServer } from './http/test-helpers/servers.ts';
import { OpenAICuaAgent } from './openai-cua/agent.ts';
import { computerCall, message, startFakeResponses } from './openai-cua/test-helpers/fake-responses.ts';

const NOTICE = 'domain not allowed: https://evil.test/login (blockedDomains: evil.test)';
const TASK = 'Click twice.';

/** takeDomainNotices() as the guard would answer it when it blocked a request between the first and second observation. */
function noticeOnSecond(): () => string[] {
  let calls = 0;
  return () => (++calls === 2 ? [NOTICE] : []);
}

class ChatWithNotice extends ChatAgent {
  readonly #take = noticeOnSecond();
  protected override takeDomainNotices(): string[] {
    return this.#take();
  }
}
class AnthropicWithNotice extends AnthropicCuaAgent {
  readonly #take = noticeOnSecond();
  protected override takeDomainNotices(): string[] {
    return this.#take();
  }
}
class OpenAIWithNotice extends OpenAICuaAgent {
  readonly #take = noticeOnSecond();
  protected override takeDomainNotices(): string[] {
    return this.#take();
  }
}
class HttpWithNotice extends HttpPlannerAgent {
  readonly #take = noticeOnSecond();
  protected override takeDomainNotices(): string[] {
    return this.#take();
  }
}

/** Which of the requests (their bodies as JSON text) mention the notice. */
const mentioning = (bodies: string[]) => bodies.map((b, i) => (b.includes('domain not allowed') ? i : -1)).filter((i) => i >= 0);

describe('model adapters tell the model what the navigation guard blocked', () => {
  const t = useFakeRuns();
  let desktop: FakeDesktop;
  beforeEach(async () => {
    desktop = await t.desktop({ width: 1280, height: 800 });
  });
  const base = async () => ({ outputDir: await t.out('vncua-notice-'), vncUrl: desktop.vncUrl, record: false, stuckScreens: 0, stuckRepeats: 0, task: TASK });

  it('chat: a text line before the screenshot of the next user turn', async () => {
    const s = await startChatServer((_b, n) => JSON.stringify(n < 3 ? { action: 'click', coordinate: [10, 10] } : { action: 'finish' }));
    t.defer(() => s.close());
    const r = await new ChatWithNotice({ ...(await base()), baseURL: s.baseURL, model: 'm', apiKey: 'k' }).run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(mentioning(s.bodies.map((b) => JSON.stringify(b.messages.at(-1))))).toEqual([1]); // (the conversation keeps it afterwards)
    expect(texts(s.bodies[1]!.messages.at(-1)!.content)[0]).toContain(NOTICE);
  });

  it('anthropic: a text block after the tool_result', async () => {
    const click = { action: 'left_click', coordinate: [10, 10] };
    const s = await startFakeMessages([{ reply: [toolUse(click)] }, { reply: [toolUse(click)] }, { reply: [text('Done.')] }]);
    t.defer(s.close);
    const r = await new AnthropicWithNotice({ ...(await base()), apiKey: s.apiKey, baseURL: s.baseURL, maxRetries: 0 }).run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(s.requests.every((q) => !q.rejected)).toBe(true);
    const bodies = s.requests.map((q) => JSON.stringify(q.body.messages.at(-1)));
    expect(mentioning(bodies)).toEqual([1]);
    const last = s.requests[1]!.body.messages.at(-1)!;
    const blocks = last.content as Array<{ type: string; text?: string }>;
    expect(blocks[0]!.type).toBe('tool_result');
    expect(blocks.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining(NOTICE) });
  });

  it('openai-cua: an input_text user item after the computer_call_output', async () => {
    const click = computerCall({ action: { type: 'click', button: 'left', x: 10, y: 10 } });
    const s = await startFakeResponses([{ reply: [click] }, { reply: [computerCall({ action: { type: 'click', button: 'left', x: 20, y: 20 } })] }, { reply: [message('Done.')] }]);
    t.defer(s.close);
    const r = await new OpenAIWithNotice({ ...(await base()), apiKey: 'sk-test', baseURL: s.baseURL }).run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    expect(mentioning(s.requests.map((q) => JSON.stringify(q.body.input)))).toEqual([1]);
    const input = s.requests[1]!.body.input as unknown as Array<Record<string, unknown>>;
    expect(input[0]).toMatchObject({ type: 'computer_call_output' });
    expect(input.at(-1)).toEqual({ role: 'user', content: [{ type: 'input_text', text: expect.stringContaining(NOTICE) }] });
  });

  it('http: "observations" in the request body', async () => {
    const s = await startScriptedServer((_seen, n) => ({ body: { actions: [n < 3 ? { type: 'CLICK', x: 10, y: 10 } : { type: 'FINISH' }] } }));
    t.defer(() => s.close());
    const r = await new HttpWithNotice({ ...(await base()), endpoint: `${s.url}v1/plan`, token: 't' }).run({ maxSteps: 5 });
    expect(r.status).toBe('finished');
    const bodies = s.requests.map((q) => q.body);
    expect(mentioning(bodies)).toEqual([1]);
    expect(JSON.parse(bodies[1]!).observations).toEqual([NOTICE, expect.stringContaining('choose another way')]);
    expect(JSON.parse(bodies[0]!)).not.toHaveProperty('observations');
  });
});
