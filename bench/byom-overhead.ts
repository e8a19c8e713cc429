/**
 * The model adapters' own overhead per step (openai-cua, anthropic, chat, http), measured the same
 * way for all four on one real desktop: Xvnc + Chromium at 1280x800 showing
 * bench/pages/dashboard.html, each adapter against a local fake server that answers at once in its
 * exact wire format (the test helpers: byom/openai-cua/test-helpers/fake-responses.ts,
 * byom/anthropic/test-helpers/fake-messages.ts, byom/chat/test-helpers/chat-server.ts,
 * byom/http/test-helpers/servers.ts), through the real SDK (`openai`, `@anthropic-ai/sdk`) or the
 * planner's own HTTP client. Each adapter runs with its defaults (what `vncua eval --agent NAME`
 * builds), with the desktop's CDP endpoint (so success checks and, for openai-cua's preview tool,
 * `current_url` happen as in an eval) and without recording.
 *
 * Every step the "model" asks for a pointer move to another place, so every screenshot is a fresh
 * capture + PNG encode (the cursor is drawn in; the script checks that no two steps in a row saw
 * the same image). Per step (one act()):
 * - step: act() from start to end;
 * - action: perform() — the input and its trace entry, success check included (excluded);
 * - model call wait: time inside fetch (the SDKs) or node:http's request (the planner client),
 *   from the call until the last response byte: the request's socket writes, the in-process fake
 *   server's parsing and answer, the response's transfer (excluded: with a real model this is the
 *   model's latency plus the network);
 * - overhead = step − action − model call wait: screenshot capture + PNG encode + hash + base64
 *   (observe), building the request (history, data URLs), the SDK's or client's own work
 *   (JSON.stringify of the body, JSON.parse of the reply, headers, retries bookkeeping), reply
 *   validation and mapping, and the trace meta. Target: ≤ 10 ms median.
 * The request payload per step (bytes the server received) is printed too. Each adapter also runs
 * with screenshots scaled to 1024x640 (its flag for that is printed), and a full GC runs between
 * runs so none pays for collecting the previous run's fake server.
 *
 * Run: npx tsx bench/byom-overhead.ts [--steps 60]
 *      (--only chat,http runs just those adapters)
 */
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ActionStep, CaptureScreenOptions, ScreenCapture } from '../harness/agent/index.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import type { ModelAgent } from '../byom/model-agent.ts';
import { OpenAICuaAgent } from '../byom/openai-cua/agent.ts';
import { computerCall, startFakeResponses } from '../byom/openai-cua/test-helpers/fake-responses.ts';
import { AnthropicCuaAgent } from '../byom/anthropic/agent.ts';
import { startFakeMessages, toolUse } from '../byom/anthropic/test-helpers/fake-messages.ts';
import { ChatAgent } from '../byom/chat/agent.ts';
import { startChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { HttpPlannerAgent } from '../byom/http/agent.ts';
import { startScriptedServer } from '../byom/http/test-helpers/servers.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const stepsArg = process.argv.indexOf('--steps');
const STEPS = stepsArg >= 0 ? Number(process.argv[stepsArg + 1]) : 60;
if (!Number.isInteger(STEPS) || STEPS < 1) throw new Error(`--steps must be a whole number >= 1, got ${process.argv[stepsArg + 1]}`);
const onlyArg = process.argv.indexOf('--only');
/** `--only chat,http`: run just these adapters (for profiling). */
const ONLY = onlyArg >= 0 ? (process.argv[onlyArg + 1] ?? '').split(',') : null;
const WARMUP = 5;
const TARGET_MS = 10;

/** Where the pointer goes at step n (consecutive steps always differ, so each screenshot is new). */
const spot = (n: number) => ({ x: 400 + (n % 7) * 60, y: 300 + (n % 5) * 40 });

/**
 * A full garbage collection, run between adapters so that none pays for collecting the previous
 * one's fake server (which keeps every request it got). Exposed at run time, so `npx tsx` works as is.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

// ---------------------------------------------------------------- model call wait (transport)

/** Origins of the fake servers whose calls count as the model call wait (not CDP or the page server). */
const modelOrigins = new Set<string>();
/** Time spent waiting for the model during the current step, in ms. */
let waitMs = 0;

const realFetch = globalThis.fetch;
globalThis.fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (![...modelOrigins].some((o) => url.startsWith(o))) return realFetch(input, init);
  const t = performance.now();
  const res = await realFetch(input, init);
  const body = await res.arrayBuffer();
  waitMs += performance.now() - t;
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
};

const realRequest = http.request;
http.request = function (this: unknown, ...args: unknown[]): http.ClientRequest {
  const req = (realRequest as (...a: unknown[]) => http.ClientRequest).apply(http, args);
  const target = args[0] instanceof URL ? args[0].href : typeof args[0] === 'string' ? args[0] : '';
  if ([...modelOrigins].some((o) => target.startsWith(o))) {
    const t = performance.now();
    req.once('response', (res) => res.once('end', () => (waitMs += performance.now() - t)));
  }
  return req;
} as typeof http.request;

// ---------------------------------------------------------------- timed agents

interface Step {
  act: number;
  observe: number;
  perform: number;
  wait: number;
  currentUrl: number;
  hash: string;
}

type AgentClass = new (...args: any[]) => ModelAgent; // eslint-disable-line @typescript-eslint/no-explicit-any

/** `Base` with each act() timed and split into observe, perform, current URL and model call wait. */
function timed<C extends AgentClass>(Base: C) {
  return class Timed extends Base {
    steps: Step[] = [];
    #cur: Step | null = null;
    override async act(): Promise<boolean> {
      const cur: Step = { act: 0, observe: 0, perform: 0, wait: 0, currentUrl: 0, hash: '' };
      this.#cur = cur;
      waitMs = 0;
      const t = performance.now();
      try {
        // super.act() does not type-check here (act is abstract in Agent): call the adapter's own.
        const adapterAct = (Object.getPrototypeOf(Timed.prototype) as { act(this: ModelAgent): Promise<boolean> }).act;
        return await adapterAct.call(this);
      } finally {
        cur.act = performance.now() - t;
        cur.wait = waitMs;
        this.steps.push(cur);
        this.#cur = null;
      }
    }
    protected override async observe(o?: CaptureScreenOptions): Promise<ScreenCapture> {
      const t = performance.now();
      const shot = await super.observe(o);
      if (this.#cur) {
        this.#cur.observe += performance.now() - t;
        this.#cur.hash = shot.hash;
      }
      return shot;
    }
    protected override async perform(step: ActionStep, index?: number): Promise<void> {
      const t = performance.now();
      try {
        await super.perform(step, index);
      } finally {
        if (this.#cur) this.#cur.perform += performance.now() - t;
      }
    }
    override async currentUrl(): Promise<string | null> {
      const t = performance.now();
      try {
        return await super.currentUrl();
      } finally {
        if (this.#cur) this.#cur.currentUrl += performance.now() - t;
      }
    }
  };
}

// ---------------------------------------------------------------- the adapters

/** The size screenshots are scaled to in the second configuration of each adapter. */
const SCALED = { width: 1024, height: 640 };

interface Case {
  name: string;
  about: string;
  /** The option that scales screenshots to SCALED, as the CLI flag that sets it. */
  scaledFlag: string;
  /** Start the fake server; returns the agent to run, the payload sizes it received, and its teardown. */
  start(
    base: { outputDir: string; vncUrl: string; cdpUrl: string; task: string },
    scaled: boolean,
  ): Promise<{ agent: InstanceType<ReturnType<typeof timed>>; payloads(): number[]; close(): Promise<void> }>;
}

const common = { record: false, stuckRepeats: 0, stuckScreens: 0 } as const;

const CASES: Case[] = [
  {
    name: 'openai-cua',
    about:
      'OpenAICuaAgent: Responses API through the `openai` SDK, `computer-use-preview` (preview tool, `previous_response_id` chaining: one screenshot per request, `current_url` over CDP)',
    scaledFlag: '--display 1024x640',
    async start(base, scaled) {
      const server = await startFakeResponses((_req, i) => ({ reply: [computerCall({ action: { type: 'move', ...spot(i) } })] }));
      modelOrigins.add(new URL(server.baseURL).origin);
      const agent = new (timed(OpenAICuaAgent))({ ...base, ...common, apiKey: 'sk-bench', baseURL: server.baseURL, screenshotSize: scaled ? SCALED : undefined });
      return { agent, payloads: () => server.requests.map((r) => r.bytes), close: () => server.close() };
    },
  },
  {
    name: 'anthropic',
    about: 'AnthropicCuaAgent: Messages API (beta) through `@anthropic-ai/sdk`, `claude-sonnet-4-6`, `computer_20251124`, the last 3 screenshots resent each request',
    scaledFlag: '--display 1024x640',
    async start(base, scaled) {
      const server = await startFakeMessages((_req, i) => ({ reply: [toolUse({ action: 'mouse_move', coordinate: [spot(i).x, spot(i).y] })] }));
      modelOrigins.add(new URL(server.baseURL).origin);
      const agent = new (timed(AnthropicCuaAgent))({ ...base, ...common, apiKey: server.apiKey, baseURL: server.baseURL, screenshotSize: scaled ? SCALED : undefined });
      return { agent, payloads: () => server.requests.map((r) => r.bytes), close: () => server.close() };
    },
  },
  {
    name: 'chat',
    about: 'ChatAgent: Chat Completions through the `openai` SDK, absolute coordinates, PNG, the last 3 screenshots resent each request',
    scaledFlag: '--coordinates resized --image-size 1024x640',
    async start(base, scaled) {
      const server = await startChatServer((_body, n) => JSON.stringify({ action: 'move', coordinate: [spot(n - 1).x, spot(n - 1).y] }));
      modelOrigins.add(new URL(server.baseURL).origin);
      const agent = new (timed(ChatAgent))({
        ...base,
        ...common,
        model: 'bench-vlm',
        apiKey: 'sk-bench',
        baseURL: server.baseURL,
        coordinates: scaled ? 'resized' : undefined,
        screenshotSize: scaled ? SCALED : undefined,
      });
      return { agent, payloads: () => server.server.requests.map((r) => Buffer.byteLength(r.body)), close: () => server.close() };
    },
  },
  {
    name: 'http',
    about: 'HttpPlannerAgent: the planner wire format over its own keep-alive HTTP client (one connection), PNG, `previous_steps` growing with the run',
    scaledFlag: '--screenshot-size 1024x640',
    async start(base, scaled) {
      const server = await startScriptedServer((_req, n) => ({ body: { actions: [{ type: 'MOUSE_MOVE', ...spot(n - 1) }] } }));
      modelOrigins.add(new URL(server.url).origin);
      const agent = new (timed(HttpPlannerAgent))({ ...base, ...common, endpoint: `${server.url}plan`, token: 'bench-token', screenshotSize: scaled ? SCALED : undefined });
      return {
        agent,
        payloads: () => server.requests.map((r) => Buffer.byteLength(r.body)),
        close: async () => {
          if (server.connections !== 1) throw new Error(`the planner client used ${server.connections} connections, not 1`);
          await server.close();
        },
      };
    },
  },
];

// ---------------------------------------------------------------- measure

/** One run of one adapter in one configuration: the steps after the warm-up. */
interface Run {
  steps: Step[];
  /** Steps whose screenshot differs from the step before. */
  fresh: number;
  /** Request bytes per step. */
  payloads: number[];
}

async function measure(c: Case, scaled: boolean, env: { dir: string; vncUrl: string; cdpUrl: string }): Promise<Run> {
  gc();
  const label = `${c.name}${scaled ? ' (scaled)' : ''}`;
  process.stderr.write(`byom-overhead: ${label}...\n`);
  const { agent, payloads, close } = await c.start(
    { outputDir: join(env.dir, label.replace(/\W+/g, '-')), vncUrl: env.vncUrl, cdpUrl: env.cdpUrl, task: 'Look around the dashboard.' },
    scaled,
  );
  try {
    const r = await agent.run({ maxSteps: STEPS + WARMUP });
    if (r.status !== 'max_steps') throw new Error(`${label}: the run ended ${r.status}: ${JSON.stringify(r.error)}`);
    if (agent.steps.length !== STEPS + WARMUP) throw new Error(`${label}: ${agent.steps.length} steps timed, expected ${STEPS + WARMUP}`);
    const all = agent.steps;
    const steps = all.slice(WARMUP);
    const fresh = steps.filter((s, i) => s.hash !== '' && s.hash !== all[WARMUP + i - 1]!.hash).length;
    return { steps, fresh, payloads: payloads().slice(WARMUP) };
  } finally {
    await close();
  }
}

// ---------------------------------------------------------------- report

const kib = (b: number) => `${(b / 1024).toFixed(0)} KiB`;
const overheadOf = (s: Step) => s.act - s.perform - s.wait;
const verdict = (r: Run) => (median(r.steps.map(overheadOf)) <= TARGET_MS ? 'met' : '**NOT met**');

/** The per-step figures of a run, each as [median, p90]. */
function figures(r: Run): Array<[string, number[]]> {
  const s = r.steps;
  const col = (f: (x: Step) => number) => s.map(f);
  const rows: Array<[string, number[]]> = [
    ['step: act()', col((x) => x.act)],
    ['action performed: input + trace entry + success check (excluded)', col((x) => x.perform)],
    ['model call wait: request out, fake server, reply in, until its last byte (excluded)', col((x) => x.wait)],
    ['**overhead = step − action − model call wait**', col(overheadOf)],
    ['· of which screenshot: capture, PNG encode (and scaling), hash, base64', col((x) => x.observe)],
  ];
  if (s.some((x) => x.currentUrl > 0)) rows.push(['· of which `current_url` over CDP', col((x) => x.currentUrl)]);
  rows.push(['· of which request building, SDK/client JSON and headers, reply checks and mapping, trace meta', col((x) => overheadOf(x) - x.observe - x.currentUrl)]);
  rows.push(['overhead including the loopback round trip (step − action)', col((x) => x.act - x.perform)]);
  return rows;
}

function section(c: Case, full: Run, scaled: Run): string {
  const a = figures(full);
  const b = figures(scaled);
  const rows = a.map(([name, xs], i) => {
    const ys = b[i]![1];
    const cell = (v: number) => (name.startsWith('**') ? `**${ms(v)}**` : ms(v));
    return [name, cell(median(xs)), cell(quantile(xs, 0.9)), cell(median(ys)), cell(quantile(ys, 0.9))];
  });
  return [
    `### ${c.name}: ${c.about}`,
    '',
    table(['per step, ms', '1280x800 median', 'p90', `scaled to 1024x640 (${c.scaledFlag}) median`, 'p90'], rows),
    '',
    `Request payload per step: ${kib(median(full.payloads))} at 1280x800 (${kib(Math.min(...full.payloads))}–${kib(Math.max(...full.payloads))}), ${kib(median(scaled.payloads))} scaled to 1024x640. ` +
      `Fresh screenshots (differing from the step before): ${full.fresh}/${full.steps.length} and ${scaled.fresh}/${scaled.steps.length}. ` +
      `Target overhead ≤ ${TARGET_MS} ms median at 1280x800: ${verdict(full)} (${ms(median(full.steps.map(overheadOf)))} ms).`,
  ].join('\n');
}

async function main(): Promise<void> {
  const pages = await servePages();
  const desktop = await launchDesktop({ url: pages.url('dashboard.html'), size: '1280x800', timeoutMs: 45_000 });
  const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-byom-'));
  const results: Array<{ c: Case; full: Run; scaled: Run }> = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const env = { dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl };
    for (const c of CASES.filter((x) => !ONLY || ONLY.includes(x.name))) {
      const full = await measure(c, false, env);
      const scaled = await measure(c, true, env);
      results.push({ c, full, scaled });
    }
  } finally {
    await desktop.close();
    await pages.close();
    await rm(dir, { recursive: true, force: true });
  }

  const summary = results.map(({ c, full, scaled }) => {
    const o = full.steps.map(overheadOf);
    return [
      c.name,
      ms(median(o)),
      ms(quantile(o, 0.9)),
      ms(median(full.steps.map((x) => x.act - x.perform))),
      kib(median(full.payloads)),
      verdict(full),
      ms(median(scaled.steps.map(overheadOf))),
      kib(median(scaled.payloads)),
    ];
  });
  console.log(
    `### Adapter overhead per step, excluding model latency (desktop 1280x800; ${STEPS} steps after ${WARMUP} warm-up per adapter and size; fake servers answer at once)\n`,
  );
  console.log(
    table(
      [
        'adapter',
        'overhead median ms',
        'p90 ms',
        'incl. loopback round trip, median ms',
        'request payload / step',
        `≤ ${TARGET_MS} ms median`,
        'scaled to 1024x640: overhead median ms',
        'payload / step',
      ],
      summary,
    ),
  );
  console.log(
    '\nOverhead = step − action performed − model call wait. It includes the screenshot (capture, PNG encode, hash, base64), building the request, ' +
      "the SDK's or client's own work (JSON.stringify of the request body, JSON.parse of the reply, headers) and the reply's checks and mapping. " +
      'It excludes the action (input, trace entry, success check over CDP) and the model call wait: the time inside fetch (SDKs) or http.request (planner client) ' +
      "until the reply's last byte — the body's socket writes, the loopback transfer and the in-process fake server's parsing and answer — which a real model " +
      'replaces with its own latency and the network. The "incl. loopback" column keeps that wait in: an upper bound, with a server answering at once on the same machine. ' +
      'Payloads: openai-cua sends one screenshot per request (the rest of the conversation stays on the server through previous_response_id), anthropic and chat the last 3, ' +
      'http one; a scaled PNG is larger than the full-size one here (probably because resampling turns flat colours and sharp text into more distinct values, which PNG compresses worse). ' +
      'Xvnc, Chromium, the fake servers and the adapter share one 2-core machine: compare the figures rather than reading them as absolute.\n',
  );
  console.log(results.map(({ c, full, scaled }) => section(c, full, scaled)).join('\n\n'));
}

await main();
