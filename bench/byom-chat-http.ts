/**
 * Per-step overhead of the ChatAgent and HttpPlannerAgent adapters, on a real desktop (Xvnc +
 * Chromium showing bench/pages/dashboard.html at 1280x800), against local fake servers that answer
 * at once (the chat one through the real `openai` SDK).
 *
 * Each step the "model" moves the pointer to another place, so every screenshot is a fresh
 * capture and encode (the cursor is drawn in). Per step:
 * - act(): the whole step;
 * - perform: the action itself (input + trace entry), excluded from the overhead;
 * - observe: screenshot capture + PNG encode + hash (+ base64);
 * - network: for ChatAgent, the time spent inside fetch (loopback transfer of the request and
 *   the fake server's own parsing), measured through the `fetch` option and excluded;
 * - request build + client + parse: act − observe − perform − network: the history with its data
 *   URLs, JSON serialization, the SDK or http client, reply extraction and validation;
 * - overhead = act − perform − network (target ≤ 10 ms median). For HttpPlannerAgent the network
 *   part cannot be separated (no fetch hook), so its figure includes it.
 * The request payload per step is printed too. No success check (no CDP), no recording.
 *
 * Run: npx tsx bench/byom-chat-http.ts [--steps 60]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ActionStep, CaptureScreenOptions, ScreenCapture } from '../harness/agent/index.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { ChatAgent, type ChatAgentOptions } from '../byom/chat/agent.ts';
import { startChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { HttpPlannerAgent, type HttpPlannerAgentOptions } from '../byom/http/agent.ts';
import { startScriptedServer } from '../byom/http/test-helpers/servers.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('--steps', 60);
const WARMUP = 5;

interface Times {
  act: number[];
  observe: number[];
  perform: number[];
  /** Time inside fetch (loopback transfer + the fake server), per call; chat only. */
  fetch: number[];
}

/** Pointer positions the model alternates between (the cursor moves, so each screenshot is new). */
const spot = (i: number) => ({ x: 400 + (i % 7) * 60, y: 300 + (i % 5) * 40 });

/** ChatAgent with each step's act/observe/perform timed. */
class TimedChat extends ChatAgent {
  times: Times = { act: [], observe: [], perform: [], fetch: [] };
  override async act(): Promise<boolean> {
    const t = performance.now();
    const r = await super.act();
    this.times.act.push(performance.now() - t);
    return r;
  }
  protected override async observe(o?: CaptureScreenOptions): Promise<ScreenCapture> {
    const t = performance.now();
    const r = await super.observe(o);
    this.times.observe.push(performance.now() - t);
    return r;
  }
  protected override async perform(step: ActionStep, index?: number): Promise<void> {
    const t = performance.now();
    await super.perform(step, index);
    this.times.perform.push(performance.now() - t);
  }
}

/** HttpPlannerAgent with each step's act/observe/perform timed. */
class TimedPlanner extends HttpPlannerAgent {
  times: Times = { act: [], observe: [], perform: [], fetch: [] };
  override async act(): Promise<boolean> {
    const t = performance.now();
    const r = await super.act();
    this.times.act.push(performance.now() - t);
    return r;
  }
  protected override async observe(o?: CaptureScreenOptions): Promise<ScreenCapture> {
    const t = performance.now();
    const r = await super.observe(o);
    this.times.observe.push(performance.now() - t);
    return r;
  }
  protected override async perform(step: ActionStep, index?: number): Promise<void> {
    const t = performance.now();
    await super.perform(step, index);
    this.times.perform.push(performance.now() - t);
  }
}

function row(name: string, t: Times, payloads: number[]): Array<string | number> {
  const drop = <X>(xs: X[]) => xs.slice(WARMUP);
  const act = drop(t.act);
  const obs = drop(t.observe);
  const perf = drop(t.perform);
  const net = drop(t.fetch);
  const overhead = act.map((a, i) => a - (perf[i] ?? 0) - (net[i] ?? 0));
  const call = act.map((a, i) => a - (perf[i] ?? 0) - (obs[i] ?? 0) - (net[i] ?? 0));
  const kb = drop(payloads).map((b) => b / 1024);
  return [
    name,
    act.length,
    ms(median(overhead)),
    ms(quantile(overhead, 0.95)),
    ms(median(obs)),
    ms(median(call)),
    net.length ? ms(median(net)) : 'included',
    ms(median(perf)),
    `${Math.round(median(kb))} KiB`,
  ];
}

async function main(): Promise<void> {
  const pages = await servePages();
  const desktop = await launchDesktop({ url: pages.url('dashboard.html'), timeoutMs: 45_000 });
  const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-byom-'));
  const rows: Array<Array<string | number>> = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const base = { vncUrl: desktop.vncUrl, record: false, stuckRepeats: 0, stuckScreens: 0, task: 'Look around the dashboard.' };

    const chatCases: Array<[string, Partial<ChatAgentOptions>]> = [
      ['ChatAgent, absolute, PNG 1280x800, K=3', {}],
      ['ChatAgent, resized 1024x640, K=3', { coordinates: 'resized', imageSize: { width: 1024, height: 640 } }],
    ];
    for (const [name, extra] of chatCases) {
      const server = await startChatServer((_b, n) => {
        const p = spot(n);
        const scale = extra.imageSize ? extra.imageSize.width / 1280 : 1;
        return JSON.stringify({ action: 'move', coordinate: [Math.floor(p.x * scale), Math.floor(p.y * scale)] });
      });
      try {
        const fetchTimes: number[] = [];
        const timedFetch: typeof fetch = async (input, init) => {
          const t = performance.now();
          const res = await fetch(input, init);
          const body = await res.arrayBuffer();
          fetchTimes.push(performance.now() - t);
          return new Response(body, { status: res.status, headers: res.headers });
        };
        const a = new TimedChat({ ...base, ...extra, outputDir: join(dir, name.replace(/\W+/g, '-')), baseURL: server.baseURL, model: 'bench-vlm', apiKey: 'x', fetch: timedFetch } as ChatAgentOptions);
        a.times.fetch = fetchTimes;
        const r = await a.run({ maxSteps: STEPS + WARMUP });
        if (r.status !== 'max_steps') throw new Error(`${name}: run ended ${r.status} ${JSON.stringify(r.error)}`);
        rows.push(row(name, a.times, server.server.requests.map((q) => Buffer.byteLength(q.body))));
      } finally {
        await server.close();
      }
    }

    const planner = await startScriptedServer((_req, n) => ({ body: { actions: [{ type: 'MOUSE_MOVE', ...spot(n) }] } }));
    try {
      const a = new TimedPlanner({ ...base, outputDir: join(dir, 'planner'), endpoint: `${planner.url}plan`, token: 't' } as HttpPlannerAgentOptions);
      const r = await a.run({ maxSteps: STEPS + WARMUP });
      if (r.status !== 'max_steps') throw new Error(`planner: run ended ${r.status} ${JSON.stringify(r.error)}`);
      rows.push(row('HttpPlannerAgent, PNG 1280x800', a.times, planner.requests.map((q) => Buffer.byteLength(q.body))));
      if (planner.connections !== 1) throw new Error(`planner used ${planner.connections} connections`);
    } finally {
      await planner.close();
    }
  } finally {
    await desktop.close();
    await pages.close();
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`Adapter overhead per step (${STEPS} steps after ${WARMUP} warm-up, medians; fake server answers at once):\n`);
  console.log(
    table(['adapter', 'steps', 'overhead (act − action − network)', 'p95', 'observe (capture+encode+hash)', 'request build + SDK/client + reply parse', 'network + fake server (excluded)', 'action (excluded)', 'request payload'], rows),
  );
  console.log('\nHttpPlannerAgent: its client has no fetch hook, so its overhead includes the loopback round trip and the fake server (an upper bound).');
}

await main();
