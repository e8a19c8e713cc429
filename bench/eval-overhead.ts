/**
 * The runner's desktop overhead per task: a fresh local desktop at the task's size and URL (launch
 * until VNC and CDP answer, plus the page load), then its teardown until no process is left, measured
 * around the provider for each of N runs of a trivial task (an agent whose one step is a 0 s wait),
 * one worker. The bar: median start + teardown <= 3 s.
 *
 * Run: npx tsx bench/eval-overhead.ts [runs=20]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localProvider } from '../eval/providers/local.ts';
import { runSuite } from '../eval/runner.ts';
import { doneAgent, measured, serveTrivialPage, trivialTasks, type DesktopLife } from './eval-common.ts';
import { median, ms, quantile, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 20);
const WARMUP = 2;
const LIMIT_MS = 3000;

async function main(): Promise<void> {
  const page = await serveTrivialPage();
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-overhead-'));
  const lives: DesktopLife[] = [];
  const runMs: number[] = [];
  try {
    const summary = await runSuite({
      tasks: trivialTasks(WARMUP + RUNS, page.url),
      agent: doneAgent,
      out,
      workers: 1,
      provider: measured(localProvider(), lives),
      onProgress: (e) => {
        if (e.type === 'done') runMs.push(e.durationMs);
      },
    });
    if (summary.ran !== WARMUP + RUNS || summary.infraErrors > 0) throw new Error(`only ${summary.ran} runs finished (${summary.infraErrors} infra errors)`);
    const kept = lives.slice(WARMUP);
    const start = kept.map((l) => l.acquired - l.acquireStart);
    const teardown = kept.map((l) => l.released - l.releaseStart);
    const both = kept.map((_l, i) => start[i]! + teardown[i]!);
    const whole = runMs.slice(WARMUP);
    const row = (name: string, xs: number[]) => [name, ms(median(xs)), ms(quantile(xs, 0.9)), ms(Math.max(...xs))];
    const verdict = median(both) <= LIMIT_MS ? 'PASS' : 'FAIL';
    process.stdout.write(
      `\nDesktop overhead per task, ${RUNS} runs (after ${WARMUP} warm-up), 1 worker, ${new Date().toISOString().slice(0, 10)}, ms\n\n` +
        table(
          ['What', 'median', 'p90', 'max'],
          [
            row('desktop start: launchDesktop at the task URL until VNC + CDP answer, plus page load', start),
            row('desktop teardown: until no process of it is left', teardown),
            row('start + teardown', both),
            row('whole run as the runner sees it (task.json, desktop, agent, check, teardown)', whole),
          ],
        ) +
        `\n\nMedian start + teardown ${ms(median(both))} ms, limit ${LIMIT_MS} ms: ${verdict}\n`,
    );
    if (verdict !== 'PASS') process.exitCode = 1;
  } finally {
    await page.close();
    await rm(out, { recursive: true, force: true });
  }
}

await main();
