/**
 * The LLM judge through the real `openai` SDK against a local HTTP server speaking the chat completions
 * wire format (byom/chat/test-helpers: eval/ cannot import byom/, so this test sits in cli/, which uses
 * both): what it is shown, the verdict, the cost at byom/pricing.ts's prices, and the bad answers:
 * garbage, a timeout, 5xx, no key, each a code and an unknown verdict. Then judgeRun's `when` policies and
 * the hybrid on a run directory written with the real TraceWriter.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { images, startChatServer, texts, usageFor, type ChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { costUsd, findPrice, usageTokens } from '../byom/pricing.ts';
import { judgeRun } from '../eval/judges/judge.ts';
import { askLlmJudge, type LlmJudgeInput } from '../eval/judges/llm.ts';
import { JUDGES_FILE } from '../eval/judges/record.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { judgePrice } from './judges.ts';

const KEY = 'sk-judge-test-3f9c1e';
const env = { JUDGE_KEY: KEY };
let png: Buffer;
let server: ChatServer | undefined;

beforeAll(async () => {
  png = await sharp({ create: { width: 64, height: 40, channels: 3, background: { r: 10, g: 200, b: 30 } } })
    .png()
    .toBuffer();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const input = (): LlmJudgeInput => ({
  goal: 'Subscribe to the newsletter',
  url: 'http://127.0.0.1/pages/click-button.html',
  steps: ['0. mouse_click {"position":{"x":270,"y":182}}', '1. finish {}'],
  screenshot: png,
  status: 'finished',
});
const spec = (over: Record<string, unknown> = {}) => ({ model: 'gpt-4.1-mini', baseUrl: server!.baseURL, apiKeyEnv: 'JUDGE_KEY', ...over });

describe('LLM judge (openai SDK, local chat completions server)', () => {
  it('shows the task, the steps and the screenshot; parses the verdict; prices the call', async () => {
    server = await startChatServer(() => '```json\n{"verdict":"pass","reason":"The page says thanks for subscribing."}\n```');
    const a = await askLlmJudge(spec(), input(), { env, price: judgePrice });
    expect(a).toMatchObject({ verdict: 'pass', reason: 'The page says thanks for subscribing.', error: null, model: 'gpt-4.1-mini' });
    expect(a.raw).toContain('"verdict":"pass"');
    const expected = costUsd(usageTokens(usageFor(1))!, findPrice('gpt-4.1-mini')!.price);
    expect(a.cost_usd).toBeCloseTo(expected, 10);
    expect(a.cost_usd).toBeGreaterThan(0);
    const body = server.bodies[0]!;
    expect(body.model).toBe('gpt-4.1-mini');
    const text = body.messages.flatMap((m) => texts(m.content)).join('\n');
    expect(text).toContain('Task: Subscribe to the newsletter');
    expect(text).toContain('1. finish {}');
    expect(images(body)).toEqual([`data:image/png;base64,${png.toString('base64')}`]);
    // The spec's own rates win over the table; a model the table does not know costs null without them.
    const own = await askLlmJudge(spec({ model: 'my-local-vlm', price: { input: 1, output: 2 } }), input(), { env, price: judgePrice });
    expect(own.cost_usd).toBeCloseTo(((1000 + 2) * 1 + (20 + 2) * 2) / 1e6, 12);
    expect((await askLlmJudge(spec({ model: 'my-local-vlm' }), input(), { env, price: judgePrice })).cost_usd).toBeNull();
    // The key goes in the Authorization header only.
    expect(server.server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.server.requests[0]!.body).not.toContain(KEY);
  });

  it('garbage: JUDGE_ERR_BAD_ANSWER, verdict unknown, the raw answer kept', async () => {
    server = await startChatServer(() => 'The agent probably did fine, I guess!');
    const a = await askLlmJudge(spec(), input(), { env });
    expect(a.verdict).toBe('unknown');
    expect(a.error?.code).toBe('JUDGE_ERR_BAD_ANSWER');
    expect(a.error?.message.split('\n')).toHaveLength(1);
    expect(a.raw).toBe('The agent probably did fine, I guess!');
    // A JSON with the wrong verdict is garbage too.
    await server.close();
    server = await startChatServer(() => '{"verdict":"probably","reason":"x"}');
    expect((await askLlmJudge(spec(), input(), { env })).error?.code).toBe('JUDGE_ERR_BAD_ANSWER');
  });

  it('5xx after the retries: JUDGE_ERR_MODEL; a hang: JUDGE_ERR_TIMEOUT; no key: JUDGE_ERR_NO_KEY with no call', async () => {
    server = await startChatServer(() => ({ status: 503, body: { error: { message: 'overloaded' } } }));
    const a = await askLlmJudge(spec({ maxRetries: 1 }), input(), { env });
    expect(a).toMatchObject({ verdict: 'unknown', error: { code: 'JUDGE_ERR_MODEL' } });
    expect(a.error!.message).toContain('HTTP 503');
    expect(server.bodies).toHaveLength(2);
    await server.close();
    server = await startChatServer(() => ({ hang: true }));
    const t = await askLlmJudge(spec({ maxRetries: 0, timeoutMs: 300 }), input(), { env });
    expect(t).toMatchObject({ verdict: 'unknown', error: { code: 'JUDGE_ERR_TIMEOUT' } });
    const n = await askLlmJudge(spec(), input(), { env: {} });
    expect(n).toMatchObject({ verdict: 'unknown', error: { code: 'JUDGE_ERR_NO_KEY' } });
    expect(n.error!.message).toContain('$JUDGE_KEY');
    expect(server.bodies).toHaveLength(1);
  });
});

describe('judgeRun: the sentinel first, LLM policies, the hybrid', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-judge-run-'));
    const w = new TraceWriter(dir);
    await w.open();
    const t = Date.now();
    await w.append({
      action: 'mouse_click',
      params: { position: { x: 5, y: 5 }, button: 'left', click_type: 'single' },
      task_marked_complete: false,
      started_at: t,
      ended_at: t + 5,
    });
    await w.append({ action: 'finish', params: {}, task_marked_complete: false, started_at: t + 10, ended_at: t + 11 });
    await w.finalize();
    await w.writeResult({ status: 'finished', steps: 2, durationMs: 11 });
    await writeFile(join(dir, 'task.json'), JSON.stringify({ id: 'click-button', goal: 'Subscribe', url: 'http://x/', resolution: '1280x800', repeat: 1 }));
    await writeFile(join(dir, 'final_page.png'), png);
    await writeFile(
      join(dir, 'final_page.json'),
      JSON.stringify({ captured_at: t, url: 'http://x/pages/done.html', title: 't', text: 'Thanks for subscribing', html: '<p>Thanks</p>', checks: {} }),
    );
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('when: "unsure" asks only when the others disagree; the hybrid asks when its cheap judges disagree', async () => {
    server = await startChatServer(() => '{"verdict":"pass","reason":"thanks shown"}');
    // The sentinel says fail, the URL judge pass: they disagree, so the unsure LLM is asked.
    const f = await judgeRun(
      dir,
      [
        { type: 'url', glob: '*/done.html' },
        { type: 'llm', ...spec(), when: 'unsure' },
      ],
      { source: 'rejudge', env, price: judgePrice },
    );
    expect(f.verdicts.map((v) => [v.judge, v.verdict, v.skipped])).toEqual([
      ['sentinel', 'fail', false],
      ['url', 'pass', false],
      ['llm', 'pass', false],
    ]);
    expect(f.verdicts[2]!.evidence).toMatchObject({ screenshot: 'final_page.png', raw_answer: '{"verdict":"pass","reason":"thanks shown"}' });
    expect(f.verdicts[2]!.cost_usd).toBeGreaterThan(0);
    expect(JSON.parse(await readFile(join(dir, JUDGES_FILE), 'utf8'))).toEqual(JSON.parse(JSON.stringify(f)));
    // They agree (fail, fail): not asked.
    const g = await judgeRun(
      dir,
      [
        { type: 'url', glob: '*/other.html' },
        { type: 'llm', ...spec(), when: 'unsure' },
      ],
      { source: 'rejudge', env },
    );
    expect(g.verdicts[2]).toMatchObject({ verdict: 'unknown', skipped: true });
    expect(server.bodies).toHaveLength(1);
    // The hybrid: sentinel fail + text pass disagree -> the LLM decides.
    const h = await judgeRun(dir, [{ type: 'hybrid', judges: [{ type: 'sentinel' }, { type: 'dom', text: 'Thanks for subscribing' }], llm: spec() }], { source: 'rejudge', env });
    expect(h.verdicts[1]).toMatchObject({ judge: 'hybrid', verdict: 'pass' });
    expect(h.verdicts[1]!.reason).toMatch(/^the cheap judges disagree; the LLM: /);
    expect(server.bodies).toHaveLength(2);
    // Hybrid whose cheap judges agree: no call.
    const k = await judgeRun(dir, [{ type: 'hybrid', judges: [{ type: 'sentinel' }, { type: 'heuristic' }], llm: spec() }], { source: 'rejudge', env });
    expect(k.verdicts[1]).toMatchObject({ verdict: 'fail', evidence: { llm: null } });
    expect(server.bodies).toHaveLength(2);
  });

  it('when: "sample" asks the seeded fraction: 0 never, 1 always', async () => {
    server = await startChatServer(() => '{"verdict":"fail","reason":"no"}');
    const none = await judgeRun(dir, [{ type: 'llm', ...spec(), when: 'sample', sample: 0, seed: 1 }], { source: 'rejudge', env });
    expect(none.verdicts[1]).toMatchObject({ skipped: true });
    const all = await judgeRun(dir, [{ type: 'llm', ...spec(), when: 'sample', sample: 1, seed: 1 }], { source: 'rejudge', env });
    expect(all.verdicts[1]).toMatchObject({ verdict: 'fail', skipped: false });
    expect(server.bodies).toHaveLength(1);
  });
});
