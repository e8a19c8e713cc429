/**
 * Model API failures through the real SDK: 401, 429, 5xx, other 4xx, timeouts, refused
 * connections and malformed bodies each end the run with status `error` and a MODEL_ERR_* code,
 * with result.json, a final execution.json (earlier actions kept) and error.txt. On the fake RFB desktop
 * (no X server, no browser).
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeRuns } from '../../harness/agent/test-helpers/fake-run.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { AnthropicCuaAgent, type AnthropicCuaOptions } from './agent.ts';
import { startFakeMessages, text, toolUse, type FakeMessagesServer, type Script } from './test-helpers/fake-messages.ts';

describe('AnthropicCuaAgent: API errors end the run with a clear status and a valid trace', () => {
  const t = useFakeRuns();

  /** Run an agent against a fake API playing `script`; check the files; return the result, the server and the trace entries. */
  async function runWith(script: Script, options: Partial<AnthropicCuaOptions> = {}) {
    const server: FakeMessagesServer = await startFakeMessages(script);
    t.defer(server.close);
    const desktop = await t.desktop({ width: 1280, height: 800 });
    const dir = await t.out('vncua-anthropic-err-');
    const agent = new AnthropicCuaAgent({
      outputDir: dir,
      vncUrl: desktop.vncUrl,
      record: false,
      task: 'Click somewhere.',
      apiKey: server.apiKey,
      baseURL: server.baseURL,
      maxRetries: 0,
      requestTimeoutMs: 10_000,
      ...options,
    });
    const result = await agent.run({ maxSteps: 5 });
    expect(await readResult(dir)).toEqual(result);
    const trace = await readTrace(dir);
    expect(trace.partial).toBe(false);
    expect(existsSync(join(dir, 'error.txt'))).toBe(result.status === 'error');
    return { result, server, entries: trace.entries };
  }

  it('401: a wrong key is MODEL_ERR_AUTH', async () => {
    const { result, server } = await runWith([{ reply: [text('never')] }], { apiKey: 'sk-ant-wrong' });
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('MODEL_ERR_AUTH');
    expect(server.requests.map((q) => q.rejected?.status)).toEqual([401]);
  });

  it('429 after the retries is MODEL_ERR_RATE_LIMITED; the SDK retried once', async () => {
    const { result, server } = await runWith([{ httpError: 429 }], { maxRetries: 1 });
    expect(result.error?.code).toBe('MODEL_ERR_RATE_LIMITED');
    expect(server.requests.map((q) => q.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
  });

  it('500 and 529 (overloaded) after the retries are MODEL_ERR_SERVER; 404 is MODEL_ERR_NOT_FOUND; another 4xx is MODEL_ERR_REQUEST', async () => {
    const a = await runWith([{ httpError: 500 }], { maxRetries: 1 });
    expect(a.result.error?.code).toBe('MODEL_ERR_SERVER');
    expect(a.server.requests).toHaveLength(2);
    const b = await runWith([{ httpError: 529 }]);
    expect(b.result.error?.code).toBe('MODEL_ERR_SERVER');
    const c = await runWith([{ httpError: 400, message: 'messages: too many images' }]);
    expect(c.result.error?.code).toBe('MODEL_ERR_REQUEST');
    // An unknown model is a 404 (not_found_error): a configuration error of its own.
    const d = await runWith([{ httpError: 404, message: 'model: claude-nope' }]);
    expect(d.result.error?.code).toBe('MODEL_ERR_NOT_FOUND');
  });

  it('no answer within requestTimeoutMs is MODEL_ERR_TIMEOUT', async () => {
    const { result, server } = await runWith([{ hang: true }], { requestTimeoutMs: 400 });
    expect(result.error?.code).toBe('MODEL_ERR_TIMEOUT');
    expect(server.requests).toHaveLength(1);
  });

  it('a refused connection is MODEL_ERR_CONNECT', async () => {
    // A port that was free a moment ago: nothing listens on it.
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const { result } = await runWith([{ reply: [text('never')] }], { baseURL: `http://127.0.0.1:${port}` });
    expect(result.error?.code).toBe('MODEL_ERR_CONNECT');
  });

  it('malformed bodies are MODEL_ERR_BAD_RESPONSE: not JSON, HTML, JSON that is no message, a tool_use without id', async () => {
    const bodies: Script[] = [
      [{ raw: '{"id": "msg_1", "type": "mess', contentType: 'application/json' }],
      [{ raw: '<html><body>Bad gateway</body></html>', contentType: 'text/html' }],
      [{ raw: '{"hello": "world"}', contentType: 'application/json' }],
      [
        {
          raw: JSON.stringify({
            id: 'msg_2',
            type: 'message',
            role: 'assistant',
            content: [{ type: 'tool_use', name: 'computer', input: { action: 'screenshot' } }],
            stop_reason: 'tool_use',
          }),
          contentType: 'application/json',
        },
      ],
    ];
    for (const script of bodies) {
      const { result } = await runWith(script);
      expect(result.status, JSON.stringify(script)).toBe('error');
      expect(result.error?.code, JSON.stringify(script)).toBe('MODEL_ERR_BAD_RESPONSE');
    }
  });

  it('a failure after some actions keeps them in execution.json', async () => {
    const { result, entries } = await runWith([{ reply: [toolUse({ action: 'left_click', coordinate: [10, 10] })] }, { httpError: 500 }]);
    expect(result).toMatchObject({ status: 'error', steps: 1, error: { code: 'MODEL_ERR_SERVER' } });
    expect(entries.map((e) => [e.action, e.params])).toEqual([['mouse_click', { position: { x: 10, y: 10 }, button: 'left', click_type: 'single' }]]);
  });
});
