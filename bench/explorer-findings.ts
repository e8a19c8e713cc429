/**
 * Time for the explorer to find every problem planted in its test app (issue 18's bar: ≤ 60 s): the explorer as
 * `vncua run --agent explorer` runs it (QaExplorerAgent: the loop with the findings monitor) on the test app
 * (agents/explorer/test-pages/app, its planted list in planted.ts), one desktop for all runs, the page reset between
 * them, seeds 1..RUNS. A run's time to find all is the latest of the planted problems' first findings, measured
 * from the run's start to the end of the step after which it was seen (the step's atMs), so the desktop's start is
 * left out; the run's wall time (agent.run() resolving) is shown too. Medians over the runs; a run that misses a
 * planted problem counts as not found (∞).
 *
 * Run: npx tsx bench/explorer-findings.ts [RUNS (default 5)] [STEPS (default 80)]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QaExplorerAgent } from '../agents/explorer/report/qa-agent.ts';
import { findingFor, PLANTED } from '../agents/explorer/test-pages/planted.ts';
import { serveTestApp } from '../agents/explorer/test-pages/server.ts';
import { waitForPageReady } from '../harness/cdp/page-ready.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { median, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 5);
const STEPS = Number(process.argv[3] ?? 80);

const app = await serveTestApp();
const desktop = await launchDesktop({ url: app.url, timeoutMs: 45_000 });
const rows: Array<Array<string | number>> = [];
const allFound: number[] = [];
const walls: number[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    await waitForPageReady(desktop.cdpUrl, { url: app.url, navigate: true, resetHistory: true, signal: AbortSignal.timeout(30_000) });
    const out = await mkdtemp(join(tmpdir(), 'vncua-bench-explorer-findings-'));
    try {
      const agent = new QaExplorerAgent({
        outputDir: out,
        vncUrl: desktop.vncUrl,
        cdpUrl: desktop.cdpUrl,
        live: false,
        url: app.url,
        seed: run + 1,
        maxSteps: STEPS,
        budgetMs: 120_000,
        log: () => {},
      });
      const t0 = performance.now();
      const result = await agent.run({ maxSteps: STEPS + 1 });
      const wall = performance.now() - t0;
      if (result.status !== 'finished') throw new Error(`run ${run + 1}: ${result.status} ${result.error?.code ?? ''} ${result.error?.message ?? ''}`);
      const summary = agent.summary();
      const atMs = new Map(summary.steps.map((s) => [s.step, s.atMs]));
      const times = PLANTED.map((p) => {
        const f = findingFor(p, agent.findings());
        return f ? (atMs.get(f.step) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
      });
      const all = Math.max(...times);
      allFound.push(all);
      walls.push(wall);
      rows.push([
        run + 1,
        ...times.map((t) => (Number.isFinite(t) ? (t / 1000).toFixed(1) : 'missed')),
        Number.isFinite(all) ? (all / 1000).toFixed(1) : 'missed',
        summary.steps.length,
        (wall / 1000).toFixed(1),
      ]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }
} finally {
  await desktop.close();
  await app.close();
}
const m = median(allFound);
process.stdout.write(`${table(['run', ...PLANTED.map((p) => `${p.id} (s)`), 'all found (s)', 'steps', 'run wall (s)'], rows)}\n\n`);
process.stdout.write(
  `Median time to find all ${PLANTED.length} planted problems of the test app (1280x800 desktop, seeds 1-${RUNS}): ${Number.isFinite(m) ? `${(m / 1000).toFixed(1)} s` : 'not all found'} (bar ≤ 60 s: ${m <= 60_000 ? 'met' : 'missed'}); runs that found all: ${allFound.filter(Number.isFinite).length}/${RUNS}; median run wall time ${(median(walls) / 1000).toFixed(1)} s.\n`,
);
