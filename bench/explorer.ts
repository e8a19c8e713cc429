/**
 * The explorer's heuristic speed (issue 18: ≥ 5 steps per second on a static app, model layer excluded): the
 * ExplorerAgent on the static multi-page app (agents/explorer/test-pages/static/) beside its peer, the random agent
 * (agents/random.ts: it never looks at the screen), on the same desktop and page. Steps per second of a run: its
 * input actions (trace entries less the final finish) over the time from the first one's start to the last one's
 * end, so the desktop's start and the first CDP connection are left out; medians of the runs, and the ratio.
 *
 * Run: npx tsx bench/explorer.ts [RUNS (default 5)] [STEPS (default 60)]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExplorerAgent } from '../agents/explorer/agent.ts';
import { resetPage, startExplorerDesktop } from '../agents/explorer/test-helpers.ts';
import { RandomAgent } from '../agents/random.ts';
import type { Agent } from '../harness/agent/index.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { median, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 5);
const STEPS = Number(process.argv[3] ?? 60);

/** Input steps per second of the run in `dir` (see the file comment), and the step count. */
async function stepsPerSecond(dir: string): Promise<{ rate: number; steps: number }> {
  const entries = (await readTrace(dir)).entries.filter((e) => e.action !== 'finish');
  if (entries.length < 2) return { rate: 0, steps: entries.length };
  const span = ((entries.at(-1)!.ended_at ?? 0) - (entries[0]!.started_at ?? 0)) / 1000;
  return { rate: entries.length / span, steps: entries.length };
}

const d = await startExplorerDesktop('static/index.html');
const rows: Array<Array<string | number>> = [];
const rates: Record<'explorer' | 'random', number[]> = { explorer: [], random: [] };
const ends: string[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    for (const who of ['explorer', 'random'] as const) {
      await resetPage(d);
      const out = await mkdtemp(join(tmpdir(), 'vncua-bench-explorer-'));
      try {
        const base = { outputDir: out, vncUrl: d.desktop.vncUrl, cdpUrl: d.desktop.cdpUrl, live: false };
        const agent: Agent =
          who === 'explorer'
            ? new ExplorerAgent({ ...base, url: d.url, seed: run + 1, maxSteps: STEPS, budgetMs: 120_000 })
            : new RandomAgent({ ...base, seed: run + 1, actions: STEPS });
        const result = await agent.run({ maxSteps: STEPS + 1 });
        if (result.status !== 'finished') throw new Error(`${who} run ${run + 1}: ${result.status} ${result.error?.code ?? ''} ${result.error?.message ?? ''}`);
        const r = await stepsPerSecond(out);
        rates[who].push(r.rate);
        if (agent instanceof ExplorerAgent) ends.push(`${agent.summary().endReason} after ${r.steps}`);
        rows.push([who, run + 1, r.steps, r.rate.toFixed(2)]);
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    }
  }
} finally {
  await d.close();
}
const e = median(rates.explorer);
const r = median(rates.random);
process.stdout.write(`${table(['agent', 'run', 'input steps', 'steps/s'], rows)}\n\n`);
process.stdout.write(
  `Median steps per second on the static app (1280x800, Xvnc, recording off): explorer ${e.toFixed(2)} (bar ≥ 5: ${e >= 5 ? 'met' : 'missed'}), random agent ${r.toFixed(2)}; explorer / random = ${(e / r).toFixed(2)}. Explorer runs ended: ${ends.join(', ')}.\n`,
);
