/**
 * Agent overhead benchmark, on a real desktop (Xvnc through launchDesktop; add --x11vnc for the
 * Xvfb + x11vnc desktop too). Prints markdown tables:
 *
 * 1. The loop's own overhead per step: an agent whose act() does one mouseMove and returns
 *    false, run for --steps steps without CDP (so the success check answers null at once and
 *    costs nothing). Per step: the period between two act() starts, split into the input itself
 *    (the entry's duration_ms: RFB PointerEvent + round trip), the recording (success check +
 *    trace append, i.e. the mouseMove call minus duration_ms) and the loop (period minus the
 *    mouseMove call). Nothing is subtracted: the period is everything the agent adds to a step
 *    whose model takes zero time.
 * 2. Each primitive's cost (the whole call: input, pacing, recording; no CDP) and utilities.
 * 3. checkTaskSuccess() against the desktop's Chromium (default sentinel).
 * 4. A recorded action with the success check, against uitask's ≈ 770 ms per recorded action
 *    (a screenshot, a fixed 300 ms sleep, and a fresh Playwright connection ≈ 450 ms).
 *
 * Run: npx tsx bench/agent-overhead.ts [--steps 300] [--reps 30] [--x11vnc]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../harness/agent/index.ts';
import type { AgentOptions } from '../harness/agent/index.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import type { ExecutionEntry } from '../harness/trace/schema.ts';
import { median, ms, quantile, table } from './stats.ts';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg('--steps', 300);
const REPS = arg('--reps', 30);
const WITH_X11VNC = process.argv.includes('--x11vnc');
const WARMUP = 5;

const PAGE =
  '<!doctype html><meta charset="utf-8"><title>bench</title><body style="margin:0"><textarea id="t" style="width:600px;height:300px"></textarea><div style="height:2000px"></div>';

interface Desk {
  vncUrl: string;
  cdpUrl: string;
  close(): Promise<void>;
}

/** An agent whose act() is a given function. */
class FnAgent extends Agent {
  constructor(
    o: AgentOptions,
    private readonly fn: (a: FnAgent) => Promise<boolean>,
  ) {
    super(o);
  }
  override act(): Promise<boolean> {
    return this.fn(this);
  }
}

async function withOutputDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-agent-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function entries(dir: string): Promise<ExecutionEntry[]> {
  return JSON.parse(await readFile(join(dir, 'execution.json'), 'utf8')) as ExecutionEntry[];
}

function stat(xs: number[]): string {
  return `${ms(median(xs))} (p95 ${ms(quantile(xs, 0.95))})`;
}

/** 1. Loop overhead per step. */
async function loopOverhead(d: Desk): Promise<string> {
  return withOutputDir(async (dir) => {
    const starts: number[] = [];
    const calls: number[] = [];
    let i = 0;
    const agent = new FnAgent({ outputDir: dir, vncUrl: d.vncUrl }, async (a) => {
      starts.push(performance.now());
      const k = i++;
      const t = performance.now();
      await a.mouseMove({ x: 100 + (k % 200), y: 100 + (k % 100) });
      calls.push(performance.now() - t);
      return false;
    });
    const r = await agent.run({ maxSteps: STEPS });
    if (r.status !== 'max_steps') throw new Error(`loop run ended ${r.status}: ${r.error?.message}`);
    const es = await entries(dir);
    const period: number[] = [];
    const input: number[] = [];
    const record: number[] = [];
    const loop: number[] = [];
    for (let s = WARMUP; s < starts.length - 1; s++) {
      period.push(starts[s + 1]! - starts[s]!);
      input.push(es[s]!.duration_ms);
      record.push(calls[s]! - es[s]!.duration_ms);
      loop.push(starts[s + 1]! - starts[s]! - calls[s]!);
    }
    return [
      `### Loop overhead per step (${period.length} steps after ${WARMUP} warm-up, act() = one mouseMove, no CDP)`,
      '',
      table(
        ['Part', 'Median ms (p95)'],
        [
          ['Whole step (act() start to next act() start)', stat(period)],
          ['  input: PointerEvent + RFB round trip (entry duration_ms)', stat(input)],
          ['  recording: success check (null) + trace append to disk', stat(record)],
          ['  loop: run() between act() calls', stat(loop)],
        ],
      ),
    ].join('\n');
  });
}

interface PrimitiveCase {
  name: string;
  call: (a: Agent, k: number) => Promise<unknown>;
  /** Not recorded as an action (utilities). */
  utility?: boolean;
}

const CASES: PrimitiveCase[] = [
  { name: 'mouseMove', call: (a, k) => a.mouseMove({ x: 300 + (k % 50), y: 400 }) },
  { name: 'mouseClick single', call: (a, k) => a.mouseClick({ position: { x: 700 + (k % 2) * 40, y: 500 } }) },
  { name: 'mouseClick double', call: (a, k) => a.mouseClick({ position: { x: 700 + (k % 2) * 40, y: 550 }, clickType: 'double' }) },
  { name: 'mouseClick triple', call: (a, k) => a.mouseClick({ position: { x: 700 + (k % 2) * 40, y: 600 }, clickType: 'triple' }) },
  { name: 'mouseScroll down x1', call: (a) => a.mouseScroll({ position: { x: 900, y: 500 }, direction: 'down', repeat: 1 }) },
  { name: 'mouseScroll down x3', call: (a) => a.mouseScroll({ position: { x: 900, y: 500 }, direction: 'down', repeat: 3 }) },
  { name: 'mouseScroll right x1 (Shift + wheel)', call: (a) => a.mouseScroll({ position: { x: 900, y: 500 }, direction: 'right', repeat: 1 }) },
  { name: 'mouseDrag (300 px)', call: (a) => a.mouseDrag({ start: { x: 700, y: 650 }, end: { x: 1000, y: 650 } }) },
  { name: 'pressKeys "ctrl+shift+x"', call: (a) => a.pressKeys('ctrl+shift+x') },
  { name: 'typeText "hello world" (11 chars)', call: (a) => a.typeText('hello world') },
  { name: 'typeText "é中😀" (primed before)', call: (a) => a.typeText('é中😀') },
  { name: 'pageNavigation back', call: (a) => a.pageNavigation('back') },
  { name: 'wait(0)', call: (a) => a.wait(0) },
  { name: 'finish()', call: (a) => a.finish({ k: 1 }) },
  { name: "screenshot() of an unchanged screen (the client's cache)", call: (a) => a.screenshot(), utility: true },
  { name: 'clientResolution()', call: (a) => a.clientResolution(), utility: true },
];

/** 2. Each primitive's cost: the call (input + pacing + recording, no CDP) and the entry's duration_ms. */
async function primitiveCosts(d: Desk, label: string): Promise<string> {
  const rows: Array<Array<string>> = [];
  for (const c of CASES) {
    await withOutputDir(async (dir) => {
      const calls: number[] = [];
      const agent = new FnAgent({ outputDir: dir, vncUrl: d.vncUrl }, async (a) => {
        // Focus the textarea so keys land somewhere harmless; prime the Unicode keysyms once.
        await a.mouseClick({ position: { x: 300, y: 150 } });
        await a.typeText('é中😀');
        for (let k = 0; k < REPS + 2; k++) {
          const t = performance.now();
          await c.call(a, k);
          if (k >= 2) calls.push(performance.now() - t);
        }
        return true;
      });
      const r = await agent.run({ maxSteps: 1 });
      if (r.status !== 'finished') throw new Error(`${c.name}: run ended ${r.status}: ${r.error?.message}`);
      const es = (await entries(dir)).slice(2 + 2);
      const input = c.utility ? '' : stat(es.map((e) => e.duration_ms));
      rows.push([c.name, stat(calls), input || '(not recorded)']);
    });
  }
  return [
    `### Primitive costs on ${label} (${REPS} calls each after 2 warm-up calls; no CDP)`,
    '',
    table(['Primitive', 'Call, median ms (p95)', 'Entry duration_ms (input + pacing), median (p95)'], rows),
  ].join('\n');
}

/** 3 + 4. checkTaskSuccess() and a recorded action with the check, vs uitask. */
async function withCheck(d: Desk): Promise<string> {
  return withOutputDir(async (dir) => {
    const checks: number[] = [];
    const moves: number[] = [];
    const shots: number[] = [];
    const agent = new FnAgent({ outputDir: dir, vncUrl: d.vncUrl, cdpUrl: d.cdpUrl }, async (a) => {
      for (let k = 0; k < REPS + 2; k++) {
        let t = performance.now();
        const ok = await a.checkTaskSuccess();
        if (ok === null) throw new Error('CDP gave no answer');
        if (k >= 2) checks.push(performance.now() - t);
        t = performance.now();
        await a.screenshot();
        if (k >= 2) shots.push(performance.now() - t);
        t = performance.now();
        await a.mouseMove({ x: 200 + k, y: 200 });
        if (k >= 2) moves.push(performance.now() - t);
      }
      return true;
    });
    const r = await agent.run({ maxSteps: 1 });
    if (r.status !== 'finished') throw new Error(`check run ended ${r.status}: ${r.error?.message}`);
    // typeText with a cdpUrl: characters off the US keymap are each checked over CDP (type-text.ts), ASCII is not.
    const typedAscii: number[] = [];
    const typedChecked: number[] = [];
    const typing = new FnAgent({ outputDir: join(dir, 'typing'), vncUrl: d.vncUrl, cdpUrl: d.cdpUrl }, async (a) => {
      await a.mouseClick({ position: { x: 300, y: 150 } });
      await a.typeText('é€ÿ');
      for (let k = 0; k < REPS + 2; k++) {
        let t = performance.now();
        await a.typeText('hello world');
        if (k >= 2) typedAscii.push(performance.now() - t);
        t = performance.now();
        await a.typeText('é€ÿ');
        if (k >= 2) typedChecked.push(performance.now() - t);
      }
      return true;
    });
    const tr = await typing.run({ maxSteps: 1 });
    if (tr.status !== 'finished') throw new Error(`typing run ended ${tr.status}: ${tr.error?.message}`);
    const step = moves.map((m, i) => m + shots[i]!);
    return [
      `### Success check and a recorded action (${REPS} each, Xvnc, default sentinel)`,
      '',
      table(
        ['What', 'Median ms (p95)'],
        [
          ['checkTaskSuccess() (one Runtime.evaluate on the persistent CDP connection)', stat(checks)],
          ['screenshot() after the pointer moved (copy, cursor, PNG encode)', stat(shots)],
          ['mouseMove with its success check and trace append', stat(moves)],
          ['typeText "hello world" with its success check (no character to check)', stat(typedAscii)],
          ['typeText "é€ÿ" with its success check, each character checked over CDP (fence + 2 reads)', stat(typedChecked)],
          ['screenshot() + mouseMove with check (what uitask does per action)', stat(step)],
          ['uitask per recorded action (screenshot + fixed 300 ms sleep + fresh Playwright connection ≈ 450 ms)', '≈ 770'],
        ],
      ),
      '',
      `Ratio: uitask ≈ 770 ms vs vncua ${ms(median(step))} ms per recorded action with a screenshot (${ms(770 / median(step))}x).`,
    ].join('\n');
  });
}

async function main(): Promise<void> {
  const server = createServer((_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(PAGE);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const out: string[] = ['## Agent overhead', ''];
  try {
    const xvnc = await launchDesktop({ url });
    try {
      out.push(await loopOverhead(xvnc), '');
      out.push(await primitiveCosts(xvnc, 'Xvnc (WebSocket)'), '');
      out.push(await withCheck(xvnc), '');
    } finally {
      await xvnc.close();
    }
    if (WITH_X11VNC) {
      const x = await launchDesktop({ server: 'x11vnc', url });
      try {
        out.push(await primitiveCosts(x, 'x11vnc (ws)'), '');
      } finally {
        await x.close();
      }
    }
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
  console.log(out.join('\n'));
}

await main();
