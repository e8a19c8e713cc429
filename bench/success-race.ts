/**
 * Success-race benchmark (issue 11): can a success check miss a success that happens?
 *
 * The page is harness/agent/test-pages/success.html: like the uitask task pages, its own test writes a
 * hidden <div> (code#1 once the input holds "abc" or Submit was clicked) on a timer (200 ms or 500 ms), so
 * the marker flips with no screen change. The agent clicks the input and types "abc" (or clicks Submit),
 * then calls finish the instant its last action ends. One desktop per VNC server, the page reloaded
 * between runs. In the same run:
 *
 * - ours: the Agent's checks (immediate after each action, grace monitor, final check): a run is missed
 *   when result.json says no success, a false success when it is attributed to a step before the one that
 *   caused it, or when the control page (mode=never: the marker never appears) scores a success;
 * - "immediate only" (what our checks did before issue 11): the same runs, counting only entries that
 *   the check right after their action marked complete (success_check.phase === 'immediate');
 * - uitask's way (its computer_use/act.py): after every action, a fresh Playwright connectOverCDP,
 *   `">code#1</" in page.content()` of contexts[0].pages[0], then close; missed when no check saw it;
 * - the median cost of one check: ours (SuccessChecker.inspect on its persistent connection) and uitask's;
 * - per-step overhead on a static screen: act() = one mouseMove over a blank area with CDP on, the step
 *   period minus the input (the entry's duration_ms), with the grace monitor (successGraceMs 1000) and
 *   without it (0: the check right after each action only, as before).
 *
 * Run: npx tsx bench/success-race.ts [--runs 200] [--control 100] [--steps 300] [--servers xvnc,x11vnc]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Agent, type AgentOptions } from '../harness/agent/index.ts';
import { SuccessChecker } from '../harness/cdp/success.ts';
import { launchDesktop, type Desktop, type VncServerKind } from '../harness/desktop/index.ts';
import { serveDir } from '../harness/test-helpers/serve-dir.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import { median, ms, quantile, sample, table } from './stats.ts';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1]! : dflt;
};
const RUNS = Number(arg('--runs', '200'));
const CONTROL = Number(arg('--control', '100'));
const STEPS = Number(arg('--steps', '300'));
const SERVERS = arg('--servers', 'xvnc,x11vnc').split(',') as VncServerKind[];
const PERIODS = [200, 500];
const WARMUP = 5;
const UITASK_RULE = '>code#1</';

const INPUT = { x: 200, y: 60 };
const BUTTON = { x: 140, y: 150 };
type Scenario = 'type' | 'click';
/** The entry whose action causes the success. */
const CAUSE: Record<Scenario, number> = { type: 1, click: 0 };

/** uitask's check (act.py _get_dom_via_playwright + check_task_success): a fresh connection per check. */
async function uitaskCheck(cdpUrl: string, costs: number[]): Promise<boolean | null> {
  const t = performance.now();
  try {
    const b = await chromium.connectOverCDP(cdpUrl);
    try {
      const page = b.contexts()[0]!.pages()[0]!;
      return (await page.content()).includes(UITASK_RULE);
    } finally {
      await b.close();
    }
  } catch {
    return null;
  } finally {
    costs.push(performance.now() - t);
  }
}

/** Acts the scenario and finishes at once; with `peer`, runs uitask's check after every action instead of relying on ours. */
class RaceAgent extends Agent {
  peerChecks: Array<boolean | null> = [];
  constructor(
    options: AgentOptions,
    private readonly scenario: Scenario,
    private readonly peer: { cdpUrl: string; costs: number[] } | null,
  ) {
    super(options);
  }
  async #after(p: Promise<void>): Promise<void> {
    await p;
    if (this.peer) this.peerChecks.push(await uitaskCheck(this.peer.cdpUrl, this.peer.costs));
  }
  override async act(): Promise<boolean> {
    if (this.scenario === 'type') {
      await this.#after(this.mouseClick({ position: INPUT }));
      await this.#after(this.typeText('abc'));
    } else {
      await this.#after(this.mouseClick({ position: BUTTON }));
    }
    await this.#after(this.finish());
    return true;
  }
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

interface Tally {
  runs: number;
  missed: number;
  falseSuccess: number;
  immediateMissed: number;
  immediateFalse: number;
  phases: Record<string, number>;
  /** ms from the causing action's end to the check that saw the success (ours). */
  latency: number[];
}

const tally = (): Tally => ({ runs: 0, missed: 0, falseSuccess: 0, immediateMissed: 0, immediateFalse: 0, phases: {}, latency: [] });

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-bench-race-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function load(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
}

/** One run of ours on `url`; updates `t`. */
async function oursRun(d: Desktop, page: Page, url: string, scenario: Scenario, expectSuccess: boolean, t: Tally): Promise<void> {
  await load(page, url);
  await withDir(async (dir) => {
    const r = await new RaceAgent({ outputDir: dir, vncUrl: d.vncUrl, cdpUrl: d.cdpUrl, record: false }, scenario, null).run({ maxSteps: 1 });
    if (r.status !== 'finished') throw new Error(`run ended ${r.status}: ${r.error?.message}`);
    const result = await readResult(dir);
    const { entries } = await readTrace(dir);
    t.runs++;
    const first = entries.findIndex((e) => e.task_marked_complete === true);
    const immediate = entries.findIndex((e) => e.success_check?.phase === 'immediate');
    if (!expectSuccess) {
      if (result.success === true || first >= 0) t.falseSuccess++;
      return;
    }
    if (result.success !== true || first < 0) t.missed++;
    else if (first < CAUSE[scenario]) t.falseSuccess++;
    if (immediate < 0) t.immediateMissed++;
    else if (immediate < CAUSE[scenario]) t.immediateFalse++;
    if (result.evidence) {
      t.phases[result.evidence.phase] = (t.phases[result.evidence.phase] ?? 0) + 1;
      t.latency.push(result.evidence.at - entries[CAUSE[scenario]]!.ended_at!);
    }
  });
}

/** One run of uitask's way on `url`; updates `t`. */
async function peerRun(d: Desktop, page: Page, url: string, scenario: Scenario, expectSuccess: boolean, t: Tally, costs: number[]): Promise<void> {
  await load(page, url);
  await withDir(async (dir) => {
    const agent = new RaceAgent({ outputDir: dir, vncUrl: d.vncUrl, record: false }, scenario, { cdpUrl: d.cdpUrl, costs });
    const r = await agent.run({ maxSteps: 1 });
    if (r.status !== 'finished') throw new Error(`peer run ended ${r.status}: ${r.error?.message}`);
    t.runs++;
    const first = agent.peerChecks.indexOf(true);
    if (!expectSuccess) {
      if (first >= 0) t.falseSuccess++;
      return;
    }
    if (first < 0) t.missed++;
    else if (first < CAUSE[scenario]) t.falseSuccess++;
  });
}

/** Per-step overhead on a static screen: step period minus the input's own duration, per successGraceMs. */
async function overhead(d: Desktop, page: Page, url: string, graceMs: number): Promise<number[]> {
  await load(page, url);
  return withDir(async (dir) => {
    const starts: number[] = [];
    let i = 0;
    const agent = new FnAgent({ outputDir: dir, vncUrl: d.vncUrl, cdpUrl: d.cdpUrl, record: false, successGraceMs: graceMs }, async (a) => {
      starts.push(performance.now());
      const k = i++;
      // A blank area of the page (no hover effects): nothing on screen changes.
      await a.mouseMove({ x: 700 + (k % 100), y: 500 + (k % 50) });
      return false;
    });
    const r = await agent.run({ maxSteps: Math.ceil(STEPS / 4) + WARMUP + 1 });
    if (r.status !== 'max_steps') throw new Error(`overhead run ended ${r.status}: ${r.error?.message}`);
    const { entries } = await readTrace(dir);
    const out: number[] = [];
    for (let s = WARMUP; s < starts.length - 1; s++) out.push(starts[s + 1]! - starts[s]! - entries[s]!.duration_ms!);
    return out;
  });
}

function row(label: string, t: Tally, extra = ''): Array<string | number> {
  return [label, t.runs, t.missed, t.falseSuccess, extra];
}

const http = await serveDir(fileURLToPath(new URL('../harness/agent/test-pages/', import.meta.url)));
const pageUrl = (q: string) => `${http.url}success.html?${q}`;
const out: string[] = [];
try {
  out.push(
    `Success race, ${new Date().toISOString()}: ${RUNS} runs per server and timer for each way (half "click the input, type abc, finish", half "click Submit, finish"; finish called the instant the last action ended), ${CONTROL} control runs (the marker never appears) per server and way, page reloaded between runs.`,
    '',
  );
  const raceRows: Array<Array<string | number>> = [];
  const costRows: Array<Array<string | number>> = [];
  const overheadRows: Array<Array<string | number>> = [];
  for (const server of SERVERS) {
    const desktop = await launchDesktop({ server, url: pageUrl('mode=never'), timeoutMs: 60_000 });
    let browser: Browser | undefined;
    try {
      browser = await chromium.connectOverCDP(desktop.cdpUrl);
      let page: Page | undefined;
      for (let i = 0; i < 200 && !page; i++) {
        page = browser
          .contexts()
          .flatMap((c) => c.pages())
          .find((p) => p.url().startsWith(http.url));
        if (!page) await new Promise((r) => setTimeout(r, 50));
      }
      if (!page) throw new Error('the success page did not open');
      const peerCosts: number[] = [];
      for (const period of PERIODS) {
        const ours = tally();
        const peer = tally();
        for (let i = 0; i < RUNS; i++) {
          const scenario: Scenario = i % 2 === 0 ? 'type' : 'click';
          await oursRun(desktop, page, pageUrl(`mode=timer&period=${period}`), scenario, true, ours);
          await peerRun(desktop, page, pageUrl(`mode=timer&period=${period}`), scenario, true, peer, peerCosts);
          if ((i + 1) % 50 === 0) process.stderr.write(`success-race: ${server} ${period} ms: ${i + 1}/${RUNS}\n`);
        }
        const phases = Object.entries(ours.phases)
          .map(([p, n]) => `${p} ${n}`)
          .join(', ');
        raceRows.push(
          row(
            `${server}, ${period} ms timer: ours (immediate + grace + final)`,
            ours,
            `phase of the first success: ${phases}; seen ${ms(median(ours.latency))} ms (p95 ${ms(quantile(ours.latency, 0.95))}) after the causing action ended`,
          ),
        );
        raceRows.push([
          `${server}, ${period} ms timer: ours, immediate check only (before issue 11)`,
          ours.runs,
          ours.immediateMissed,
          ours.immediateFalse,
          'the same runs, counting only entries marked by the check right after their action',
        ]);
        raceRows.push(row(`${server}, ${period} ms timer: uitask's way (fresh connectOverCDP + page.content() after each action)`, peer));
      }
      const oursControl = tally();
      const peerControl = tally();
      for (let i = 0; i < CONTROL; i++) {
        const scenario: Scenario = i % 2 === 0 ? 'type' : 'click';
        await oursRun(desktop, page, pageUrl('mode=never&period=200'), scenario, false, oursControl);
        await peerRun(desktop, page, pageUrl('mode=never&period=200'), scenario, false, peerControl, peerCosts);
      }
      raceRows.push([`${server}, control page (never succeeds): ours`, oursControl.runs, '–', oursControl.falseSuccess, '']);
      raceRows.push([`${server}, control page (never succeeds): uitask's way`, peerControl.runs, '–', peerControl.falseSuccess, '']);

      // One check's cost on this page: ours on its persistent connection, against uitask's fresh connection.
      await load(page, pageUrl('mode=never'));
      const checker = new SuccessChecker(desktop.cdpUrl, 'default');
      try {
        const oursCost = await sample(200, () => checker.inspect(), 10);
        costRows.push([server, ms(median(oursCost)), ms(median(peerCosts)), peerCosts.length, `${(median(peerCosts) / median(oursCost)).toFixed(0)}×`]);
      } finally {
        await checker.close();
      }

      // Alternate the two modes (in 4 rounds) so that load from other processes falls on both alike.
      const withGrace: number[] = [];
      const without: number[] = [];
      for (let round = 0; round < 4; round++) {
        for (const grace of round % 2 === 0 ? [1000, 0] : [0, 1000]) (grace ? withGrace : without).push(...(await overhead(desktop, page, pageUrl('mode=never'), grace)));
      }
      overheadRows.push([
        server,
        `${ms(median(without))} (p95 ${ms(quantile(without, 0.95))})`,
        `${ms(median(withGrace))} (p95 ${ms(quantile(withGrace, 0.95))})`,
        withGrace.length,
      ]);
    } finally {
      await browser?.close().catch(() => {});
      await desktop.close();
    }
  }
  out.push('### Missed and false successes', '', table(['Way', 'Runs', 'Missed', 'False successes', 'Notes'], raceRows), '');
  out.push(
    '### One success check (median ms)',
    '',
    table(['Server', 'ours: SuccessChecker.inspect() (persistent connection)', "uitask's: connectOverCDP + page.content() + close", 'uitask checks timed', 'ratio'], costRows),
    '',
  );
  out.push(
    `### Per-step overhead on a static screen (act() = one mouseMove over a blank area, CDP on, default sentinel; 4 alternating runs per mode): step period minus the input itself, median ms`,
    '',
    table(['Server', 'check right after the action only (successGraceMs 0)', 'with the grace monitor (successGraceMs 1000)', 'steps'], overheadRows),
  );
} finally {
  await http.close();
}
process.stdout.write(`${out.join('\n')}\n`);
