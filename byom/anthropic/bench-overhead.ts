/**
 * AnthropicCuaAgent's own overhead per step, with a Messages API that answers at once, on a real
 * desktop (Xvnc through launchDesktop) at 1280x800 (no downscale) and 1920x1080 (→ 1280x720).
 *
 * The model asks for `screenshot` every step, so nothing is performed and a step is: observe (the
 * capture, scaled and PNG-encoded, plus the stuck check), building the request (the tool result
 * with the screenshot, history trimming), the SDK call (JSON body, loopback HTTP, response parse)
 * and mapping the reply. The page redraws a counter on every frame, so no capture is served from
 * the client's cache. The local server reads the whole body and answers a canned message at once
 * (no parsing), so the call's time is the SDK's and the loopback's, not a model's.
 *
 * Printed per size (medians over the steps after a warm-up):
 * - step: act() from start to end (everything the adapter adds to a step whose model takes 0 ms);
 * - capture: observe() alone;
 * - SDK call: time inside `client.beta.messages.create` (body serialization + HTTP + parse);
 * - adapter excl. SDK call: step − SDK call (capture + request building + reply handling);
 * - request bytes: the body size per step (with historyScreens = 3 screenshots once full).
 *
 * Run: npx tsx byom/anthropic/bench-overhead.ts [--steps 60]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaptureScreenOptions, ScreenCapture } from '../../harness/agent/index.ts';
import { launchDesktop } from '../../harness/desktop/index.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import { AnthropicCuaAgent } from './agent.ts';

const argIndex = process.argv.indexOf('--steps');
const STEPS = argIndex >= 0 ? Number(process.argv[argIndex + 1]) : 60;
const WARMUP = 5;

const PAGE = `<!doctype html><meta charset="utf-8"><title>bench</title>
<body style="margin:0;font:16px sans-serif">
<h1 style="margin:24px">Checkout</h1><div id="tick" style="margin:24px;font-size:28px"></div>
${Array.from({ length: 12 }, (_, i) => `<p style="margin:8px 24px">Paragraph ${i}: the quick brown fox jumps over the lazy dog, again and again, to fill the screen with text.</p>`).join('')}
<form style="margin:24px"><input placeholder="Name" style="width:300px;height:32px"> <input placeholder="Email" style="width:300px;height:32px"> <button style="height:36px">Save</button></form>
<script>const t = document.getElementById('tick'); (function f() { t.textContent = 'frame ' + performance.now().toFixed(1); requestAnimationFrame(f); })();</script>`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = (s.length - 1) / 2;
  return (s[Math.floor(m)]! + s[Math.ceil(m)]!) / 2;
};
const fmt = (v: number) => v.toFixed(1);

/** The adapter, timing each act() and each observe(). */
class TimedAgent extends AnthropicCuaAgent {
  acts: number[] = [];
  observes: number[] = [];
  override async act(): Promise<boolean> {
    const t = performance.now();
    try {
      return await super.act();
    } finally {
      this.acts.push(performance.now() - t);
    }
  }
  protected override async observe(options?: CaptureScreenOptions): Promise<ScreenCapture> {
    const t = performance.now();
    try {
      return await super.observe(options);
    } finally {
      this.observes.push(performance.now() - t);
    }
  }
}

/** A Messages API that answers every request at once with a screenshot tool_use (and "done" after `steps`). */
async function instantApi(steps: number): Promise<{ baseURL: string; close(): Promise<void> }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      const content = n > steps ? [{ type: 'text', text: 'done', citations: null }] : [{ type: 'tool_use', id: `toolu_${n}`, name: 'computer', input: { action: 'screenshot' } }];
      const body = JSON.stringify({
        id: `msg_${n}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content,
        stop_reason: n > steps ? 'end_turn' : 'tool_use',
        stop_sequence: null,
        stop_details: null,
        container: null,
        context_management: null,
        diagnostics: null,
        usage: { input_tokens: 1500, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function measure(size: string): Promise<string> {
  const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE));
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  const api = await instantApi(STEPS);
  const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-anthropic-'));
  const desktop = await launchDesktop({ url: pageUrl, size, timeoutMs: 45_000 });
  try {
    await new Promise((r) => setTimeout(r, 1500));
    const agent = new TimedAgent({
      outputDir: dir,
      vncUrl: desktop.vncUrl,
      record: false,
      task: 'Look at the screen.',
      apiKey: 'sk-bench',
      baseURL: api.baseURL,
      maxRetries: 0,
      stuckRepeats: 0,
      stuckScreens: 0,
    });
    const r = await agent.run({ maxSteps: STEPS + 5 });
    if (r.status !== 'finished') throw new Error(`bench run ended ${r.status}: ${r.error?.message}`);
    const { entries } = await readTrace(dir);
    const meta = entries.at(-1)!.meta as { model_calls: Array<{ latency_ms: number }>; request_bytes: number[] };
    const calls = meta.model_calls.map((c) => c.latency_ms);
    // Steps that performed the screenshot round (not the last, which finished).
    const acts = agent.acts.slice(WARMUP, STEPS);
    const obs = agent.observes.slice(WARMUP, STEPS);
    const sdk = calls.slice(WARMUP, STEPS);
    const own = acts.map((a, i) => a - sdk[i]!);
    const bytes = meta.request_bytes.slice(WARMUP, STEPS);
    return `| ${size} | ${acts.length} | ${fmt(median(acts))} | ${fmt(median(obs))} | ${fmt(median(sdk))} | ${fmt(median(own))} | ${Math.round(median(bytes) / 1024)} KiB |`;
  } finally {
    await desktop.close().catch(() => {});
    await api.close();
    await new Promise<void>((r) => page.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  }
}

const rows: string[] = [];
for (const size of ['1280x800', '1920x1080']) rows.push(await measure(size));
console.log('Per step, medians in ms; the API answers at once (model latency 0). Screenshots: PNG; 1920x1080 is sent as 1280x720.\n');
console.log('| screen | steps | step (act) | capture (observe) | SDK call | adapter excl. SDK call | request bytes |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(r);
