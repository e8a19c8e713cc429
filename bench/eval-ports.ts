/**
 * Port allocation under load: `vncua eval`'s runner with 8 workers on this machine, 200 runs of a
 * trivial task (an agent whose one step is a 0 s wait), every desktop from the local provider with
 * OS-allocated ports. Records every desktop's ports (Xvnc RFB, WebSocket, CDP) and its lifetime, and
 * checks that no two desktops alive at the same time shared a port, and that no run failed to start
 * (no infra failure, no retry).
 *
 * Run: npx tsx bench/eval-ports.ts [runs=200] [workers=8]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localProvider } from '../eval/providers/local.ts';
import { runSuite } from '../eval/runner.ts';
import { doneAgent, measured, serveTrivialPage, trivialTasks, type DesktopLife } from './eval-common.ts';
import { median, ms, quantile, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 200);
const WORKERS = Number(process.argv[3] ?? 8);

async function main(): Promise<void> {
  const page = await serveTrivialPage();
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-ports-'));
  const lives: DesktopLife[] = [];
  let retries = 0;
  const t0 = performance.now();
  try {
    const summary = await runSuite({
      tasks: trivialTasks(RUNS, page.url),
      agent: doneAgent,
      out,
      workers: WORKERS,
      provider: measured(localProvider(), lives),
      onProgress: (e, s) => {
        if (e.type === 'retry') {
          retries++;
          process.stderr.write(`retry ${e.job}: ${e.error.code}: ${e.error.message.split('\n')[0]}\n`);
        }
        if (e.type === 'done' && (s.done % 20 === 0 || s.done === s.total)) process.stderr.write(`${s.done}/${s.total} runs\n`);
      },
    });
    const wall = performance.now() - t0;
    // Pairs of desktops alive at the same time (between acquire() resolving and release() starting) sharing a port.
    const ok = lives.filter((l) => !l.failed);
    let overlapping = 0;
    const collisions: string[] = [];
    for (let i = 0; i < ok.length; i++) {
      for (let j = i + 1; j < ok.length; j++) {
        const a = ok[i]!;
        const b = ok[j]!;
        if (!(a.acquireStart < b.released && b.acquireStart < a.released)) continue;
        overlapping++;
        const shared = a.ports.filter((p) => b.ports.includes(p));
        if (shared.length > 0) collisions.push(`desktops ${i} and ${j} share ${shared.join(', ')}`);
      }
    }
    // Most desktops alive at once: sweep over start (+1) and end (-1) events.
    const events = ok
      .flatMap(
        (l) =>
          [
            [l.acquireStart, 1],
            [l.released, -1],
          ] as Array<[number, number]>,
      )
      .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
    let live = 0;
    let maxLive = 0;
    for (const [, d] of events) maxLive = Math.max(maxLive, (live += d));
    const distinct = new Set(ok.flatMap((l) => l.ports)).size;
    // Why a run of this always-successful page did not show success: the check's answer after the wait.
    const answers: Record<string, number> = {};
    for (const o of summary.outcomes.filter((x) => x.success !== true)) {
      const trace = JSON.parse(await readFile(join(o.dir, 'execution.json'), 'utf8').catch(() => '[]')) as Array<{ task_marked_complete: boolean | null }>;
      const k = String(trace[0]?.task_marked_complete ?? 'no entry');
      answers[k] = (answers[k] ?? 0) + 1;
    }
    const starts = ok.map((l) => l.acquired - l.acquireStart);
    const verdict = collisions.length === 0 && summary.infraErrors === 0 && retries === 0 && lives.every((l) => !l.failed) && summary.ran === RUNS ? 'PASS' : 'FAIL';
    process.stdout.write(
      `\n${RUNS} runs of a trivial task, ${WORKERS} workers, local provider, ${new Date().toISOString().slice(0, 10)}\n\n` +
        table(
          ['What', 'Value'],
          [
            [
              'runs finished',
              `${summary.ran} of ${RUNS} (${summary.successes} with the success check true${
                Object.keys(answers).length
                  ? `; the others answered ${Object.entries(answers)
                      .map(([k, n]) => `${k} x${n}`)
                      .join(', ')}`
                  : ''
              })`,
            ],
            ['desktops started', `${ok.length} (${lives.length - ok.length} failed to start)`],
            ['infra errors / retries', `${summary.infraErrors} / ${retries}`],
            ['most desktops alive at once', maxLive],
            ['pairs of desktops alive at the same time', overlapping],
            ['distinct host ports used (3 per desktop)', distinct],
            ['port collisions between live desktops', collisions.length],
            ['desktop start (launch + page load), median / p90', `${ms(median(starts))} / ${ms(quantile(starts, 0.9))} ms`],
            ['wall time', `${(wall / 1000).toFixed(1)} s (${((RUNS / wall) * 60_000).toFixed(0)} runs/min)`],
            ['verdict (no collision, no failed start)', verdict],
          ],
        ) +
        '\n',
    );
    for (const c of collisions.slice(0, 10)) process.stdout.write(`- ${c}\n`);
    if (verdict !== 'PASS') process.exitCode = 1;
  } finally {
    await page.close();
    await rm(out, { recursive: true, force: true });
  }
}

await main();
