/**
 * ChatAgent on a real desktop (Chromium showing a basic-suite page), talking through the REAL `openai`
 * SDK to a local Chat Completions server that plays a scripted model: one task solved end to end
 * through the env builder (the page's success check over CDP). The prompt, history, coordinate
 * spaces, re-asks, API errors, loop guards and option checks run on the fake desktop: agent.test.ts.
 */
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../../harness/agent/test-helpers/desktops.ts';
import type { ActionStep } from '../../harness/agent/index.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import { buildChatAgent } from './index.ts';
import { startChatServer, texts, type ChatReply, type ChatServer } from './test-helpers/chat-server.ts';
import { useSuiteTaskDesktop, type StepParams } from './test-helpers/suite-task.ts';

const dirs: Array<{ remove(): Promise<void> }> = [];
const servers: ChatServer[] = [];
async function outDir(): Promise<string> {
  const d = await tempOutputDir('vncua-chat-');
  dirs.push(d);
  return d.dir;
}
async function chatServer(script: (body: ChatCompletionCreateParamsNonStreaming, n: number) => ChatReply | Promise<ChatReply>): Promise<ChatServer> {
  const s = await startChatServer(script);
  servers.push(s);
  return s;
}
const json = (v: unknown) => JSON.stringify(v);

afterAll(async () => {
  for (const s of servers) await s.close().catch(() => {});
  for (const d of dirs) await d.remove().catch(() => {});
});

describe('ChatAgent end to end', () => {
  const e2e = useSuiteTaskDesktop('type-search');

  it("solves the basic suite's type-search task through buildChatAgent (normalized1000 from the environment)", async () => {
    const { task, reference } = e2e;
    // The scripted model replays the task's reference trace in the chat action schema, in normalized 0..1000 coordinates.
    const norm = (p: { x: number; y: number }) => [((p.x + 0.5) * 1000) / 1280, ((p.y + 0.5) * 1000) / 800];
    const script = reference.map((step, i) => `Step ${i + 1}.\n${json(toChatAction(step, norm))}`);
    const s = await chatServer((_b, i) => script[i - 1] ?? json({ action: 'finish' }));
    const outputDir = await outDir();
    const ctx = e2e.context(outputDir);
    const a = buildChatAgent(ctx, { VNCUA_CHAT_BASE_URL: s.baseURL, VNCUA_CHAT_MODEL: 'local-vlm', OPENAI_API_KEY: 'sk-env', VNCUA_CHAT_COORDINATES: 'normalized1000' });
    const r = await a.run({ maxSteps: ctx.maxSteps });
    expect(r.status).toBe('finished');
    const { entries } = await readTrace(outputDir);
    expect(entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(reference.map((st) => ({ action: st.action, params: st.params })));
    expect(entries[0]!.task_marked_complete).toBe(false);
    expect(entries.at(-1)!.task_marked_complete).toBe(true);
    expect(s.bodies[0]!.model).toBe('local-vlm');
    expect(s.server.requests[0]!.headers.authorization).toBe('Bearer sk-env');
    expect(texts(s.bodies[0]!.messages[1]!.content)[0]).toContain(task.goal);
  });
});

/** A trace step as a reply of the chat action schema (`at` maps screen pixels to the model's space). */
function toChatAction(step: ActionStep, at: (p: { x: number; y: number }) => number[]): Record<string, unknown> {
  const p = (step.params ?? {}) as unknown as StepParams;
  switch (step.action) {
    case 'mouse_click': {
      const coordinate = at(p.position);
      if (p.click_type === 'double') return { action: 'double_click', coordinate };
      if (p.click_type === 'triple') return { action: 'triple_click', coordinate };
      return p.button === 'left' ? { action: 'click', coordinate } : { action: 'click', coordinate, button: p.button };
    }
    case 'mouse_move':
      return { action: 'move', coordinate: at(p.position) };
    case 'mouse_drag':
      return { action: 'drag', start: at(p.start), end: at(p.end) };
    case 'mouse_scroll':
      return { action: 'scroll', coordinate: at(p.position), direction: p.direction, amount: p.repeat };
    case 'type_text':
      return { action: 'type', text: p.text };
    case 'press_keys':
      return { action: 'keys', keys: p.keys };
    case 'page_navigation':
      return { action: 'navigate', direction: p.direction };
    case 'wait':
      return { action: 'wait', seconds: p.seconds };
    default:
      return { action: 'finish' };
  }
}
