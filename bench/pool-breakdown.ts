/**
 * Where a pooled task's desktop overhead goes (`vncua eval --pool N`, native): each phase from the
 * runner's task start (task.json desktop_overhead_ms counts from there) until its agent can act,
 * median over many tasks, read from the steps eval/desktop-pool.ts (POOL_STEPS) and
 * harness/cdp/page-ready.ts (PAGE_READY_STEPS) publish, plus the settle wait's own account of the
 * page (how long ago its DOM last changed, frames run since).
 *
 * Same set-up as bench/desktop-pool.ts: one worker, a trivial page served on this machine, spares
 * waiting at SPARE_PAGE_PATH, an agent that holds each desktop --task-ms (default 2000).
 *
 * Run: npx tsx bench/pool-breakdown.ts [tasks=30] [--pool 2] [--task-ms 2000] [--json FILE (every task's phases, to pool runs)]
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { POOL_STEPS, desktopPool } from '../eval/desktop-pool.ts';
import { localProvider } from '../eval/providers/local.ts';
import { runSuite } from '../eval/runner.ts';
import { SPARE_PAGE_PATH } from '../eval/static-server.ts';
import type { EvalTask } from '../eval/tasks.ts';
import { PAGE_READY_STEPS, type PageReadyStep } from '../harness/cdp/page-ready.ts';
import { HoldAgent, newMarks, servePage, timed } from './lib/hold-suite.ts';
import { median, ms, quantile, table } from './stats.ts';

const argv = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i === -1 ? dflt : Number(argv[i + 1]);
};
const TASKS = Number(argv.find((a, i) => /^\d+$/.test(a) && !argv[i - 1]?.startsWith('--')) ?? 30);
const POOL = flag('--pool', 2);
const TASK_MS = flag('--task-ms', 2000);
const WARMUP = 2;
const JSON_OUT = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;

type Step = { step: string; t: number; detail?: Record<string, unknown> };

async function main(): Promise<void> {
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  const before = load();
  const served = new Map<string, number>();
  const page = await servePage('127.0.0.1', (path, t) => void served.set(path, t));
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-breakdown-'));
  const steps = new Map<string, Step[]>();
  const note = (m: unknown) => {
    const s = m as PageReadyStep;
    const list = steps.get(s.url) ?? [];
    list.push({ step: s.step, t: s.t, ...(s.detail ? { detail: s.detail } : {}) });
    steps.set(s.url, list);
  };
  subscribe(PAGE_READY_STEPS.name, note);
  subscribe(POOL_STEPS.name, note);
  const marks = newMarks();
  const tasks: EvalTask[] = Array.from({ length: WARMUP + TASKS }, (_, i) => ({
    id: `t-${String(i).padStart(3, '0')}`,
    goal: 'hold the desktop',
    url: `${page.url}?task=${i}`,
    success: { sentinel: '>code#1<' },
    group: 't',
  }));
  const provider = timed(desktopPool(localProvider(), { spares: POOL, workers: 1, standAt: new URL(SPARE_PAGE_PATH, page.url).href }), marks);
  const phases = new Map<string, number[]>();
  const add = (name: string, v: number | undefined) => {
    if (v === undefined || !Number.isFinite(v)) return;
    phases.set(name, [...(phases.get(name) ?? []), v]);
  };
  let overheads: number[] = [];
  try {
    const summary = await runSuite({ tasks, agent: { name: 'hold', build: (ctx) => new HoldAgent(ctx, marks, TASK_MS) }, out, workers: 1, provider, maxSteps: 1 });
    const kept = summary.outcomes.slice(WARMUP).filter((o) => o.pooled && typeof o.desktopOverheadMs === 'number');
    overheads = kept.map((o) => o.desktopOverheadMs!);
    for (const o of kept) {
      const url = tasks.find((t) => t.id === o.taskId)!.url;
      const task = JSON.parse(await readFile(join(o.dir, 'task.json'), 'utf8')) as { desktop_overhead_ms: number };
      const ready = marks.ready.get(url)!;
      const tStart = ready - task.desktop_overhead_ms;
      const s = steps.get(url) ?? [];
      const at = (name: string) => s.find((x) => x.step === name)?.t;
      const lastAt = (name: string) => s.findLast((x) => x.step === name)?.t;
      const arrived = served.get(new URL(url).pathname + new URL(url).search);
      const loaded = s.find((x) => x.step === 'probe' && x.detail?.verdict === 'loaded')?.t;
      const settled = s.find((x) => x.step === 'settled');
      const d = (settled?.detail ?? {}) as { age?: number; initial?: number; frames0?: number; quietAt?: number; paintedAt?: number };
      // The critical path, in order (each phase: from the step before).
      const seq: Array<[string, number | undefined]> = [
        ['task start', tStart],
        ['runner: task.json write, plan(), until acquire()', marks.asked.get(url)],
        ['pool: take the spare', at('take')],
        ['pool: until open() runs', at('open') ?? at('checked')],
        ['page-ready: page socket', at('socket')],
        ['page-ready: Page.enable (unless prepared)', at('page-enable')],
        ['page-ready: bringToFront + clock script (unless prepared)', at('clock')],
        ['page-ready: (Network.enable +) Page.navigate answered', at('navigate')],
        ['page-ready: until a probe says loaded', loaded],
        ['page-ready: Page.resetNavigationHistory', at('history') ?? loaded],
        ['page-ready: until the settle evaluation is sent', lastAt('settle-sent')],
        ['page-ready: settle evaluation', settled?.t],
        ['runner sees ready', ready],
        ['agent can act', marks.acted.get(url)],
      ];
      if (at('take') !== undefined && at('checked') !== undefined) add('(beside) pool: hand-out check, from take', at('checked')! - at('take')!);
      for (let i = 1; i < seq.length; i++) {
        const [name, t] = seq[i]!;
        const prev = seq[i - 1]![1];
        if (t !== undefined && prev !== undefined) add(name, t - prev);
      }
      const navAt = at('clock');
      if (arrived !== undefined && navAt !== undefined) add('(beside) Page.navigate sent → the task page request reaches the server', arrived - navAt);
      const sent = lastAt('settle-sent');
      if (navAt !== undefined && sent !== undefined && d.age !== undefined) add('(beside) Page.navigate sent → last DOM mutation (≈)', sent - d.age - navAt);
      if (marks.acted.has(url)) add('(beside) acquire() resolved → agent can act', marks.acted.get(url)! - (marks.acquired.get(url) ?? Number.NaN));
      add('(beside) probes until loaded', s.filter((x) => x.step === 'probe').findIndex((x) => x.detail?.verdict === 'loaded') + 1);
      add('(beside) in page: DOM quiet for, when the settle wait began', d.age);
      add('(beside) in page: quiet window left to wait', d.initial);
      add('(beside) in page: frames since the last mutation, at the start', d.frames0);
      add('(beside) in page: settle wait until quiet', d.quietAt);
      add('(beside) in page: settle wait until painted', d.paintedAt);
      if (settled) add('(beside) settle evaluation beyond its in-page time', settled.t - (lastAt('settle-sent') ?? settled.t) - (d.paintedAt ?? 0));
      if (marks.acted.has(url)) add('total: task start → agent can act', marks.acted.get(url)! - tStart);
    }
  } finally {
    unsubscribe(PAGE_READY_STEPS.name, note);
    unsubscribe(POOL_STEPS.name, note);
    await page.close();
    await rm(out, { recursive: true, force: true });
  }
  if (JSON_OUT) await writeFile(JSON_OUT, `${JSON.stringify({ load: [before, load()], overheads, phases: Object.fromEntries(phases) })}\n`);
  const rows = [...phases].map(([name, v]) => [name, ms(median(v)), ms(quantile(v, 0.9)), v.length]);
  process.stdout.write(
    `\nWhere a pooled task's desktop overhead goes: ${overheads.length} pooled tasks (after ${WARMUP} warm-up), --pool ${POOL}, 1 worker, each task holding its desktop ${TASK_MS} ms, ms (phases are medians of their own: they need not add up to the total's median)\n\n` +
      `${table(['Phase', 'median', 'p90', 'n'], rows)}\n\n` +
      `desktop_overhead_ms: median ${ms(median(overheads))}, p90 ${ms(quantile(overheads, 0.9))} (load average ${before} before, ${load()} after)\n`,
  );
}

await main();
