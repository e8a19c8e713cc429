/**
 * The warm pool (`vncua eval --pool N`, eval/desktop-pool.ts) against no pool: the desktop overhead
 * each task sees, from "the task starts" (the runner asks its provider for a desktop, right after
 * writing task.json) to "the agent can act" (its first act() call: the desktop is up, the task page
 * is loaded and settled, the agent's VNC connection and recording are up), median of many tasks.
 *
 * Same trivial task for both (a page that shows its text at once, served on this machine), one
 * worker, an agent whose one step holds the desktop for --task-ms (default 2000: a short agent task;
 * the pool starts the next desktops meanwhile), then finishes. The pooled spares wait at the page
 * server's SPARE_PAGE_PATH, as under `vncua eval` (a third native row: at their empty data: page).
 * Native (the local provider) always;
 * Docker (the vncua-desktop image) when an engine answers and the image is there, else a skip line
 * saying why.
 *
 * Run: npx tsx bench/desktop-pool.ts [tasks=20] [--pool 2] [--task-ms 2000] [--docker-tasks 10]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { desktopPool } from '../eval/desktop-pool.ts';
import { dockerProvider } from '../eval/providers/docker.ts';
import { localProvider } from '../eval/providers/local.ts';
import type { DesktopProvider } from '../eval/providers/types.ts';
import { runSuite } from '../eval/runner.ts';
import { SPARE_PAGE_PATH } from '../eval/static-server.ts';
import type { EvalTask } from '../eval/tasks.ts';
import { HoldAgent, newMarks, servePage, timed } from './lib/hold-suite.ts';
import { median, ms, quantile, table } from './stats.ts';

const argv = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = argv.indexOf(name);
  return i === -1 ? dflt : Number(argv[i + 1]);
};
const TASKS = Number(argv.find((a, i) => /^\d+$/.test(a) && !argv[i - 1]?.startsWith('--')) ?? 20);
const POOL = flag('--pool', 2);
const TASK_MS = flag('--task-ms', 2000);
const DOCKER_TASKS = flag('--docker-tasks', 10);
const WARMUP = 2;
const LIMITS = { local: 150, docker: 300 };

interface Figures {
  label: string;
  overhead: number[];
  act: number[];
  pooled: number;
  runs: number;
  infra: number;
  wallS: number;
}

/** Run `n` + WARMUP tasks on `provider` (pooled with `pool` spares when > 0); the figures of the last n. */
async function measure(label: string, make: () => DesktopProvider, pageUrl: string, n: number, pool: number, standAt = true): Promise<Figures> {
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-pool-'));
  const marks = newMarks();
  const tasks: EvalTask[] = Array.from({ length: WARMUP + n }, (_, i) => ({
    id: `t-${String(i).padStart(3, '0')}`,
    goal: 'hold the desktop',
    url: `${pageUrl}?task=${i}`,
    success: { sentinel: '>code#1<' },
    group: 't',
  }));
  const inner = make();
  const provider = timed(pool > 0 ? desktopPool(inner, { spares: pool, workers: 1, ...(standAt ? { standAt: new URL(SPARE_PAGE_PATH, pageUrl).href } : {}) }) : inner, marks);
  const t0 = performance.now();
  try {
    const summary = await runSuite({
      tasks,
      agent: { name: 'hold', build: (ctx) => new HoldAgent(ctx, marks, TASK_MS) },
      out,
      workers: 1,
      provider,
      maxSteps: 1,
    });
    const kept = summary.outcomes.slice(WARMUP);
    const url = (o: (typeof kept)[number]) => tasks.find((t) => t.id === o.taskId)!.url;
    return {
      label,
      overhead: kept.flatMap((o) => (typeof o.desktopOverheadMs === 'number' ? [o.desktopOverheadMs] : [])),
      act: kept.flatMap((o) => {
        const a = marks.acted.get(url(o));
        const s = marks.asked.get(url(o));
        return a !== undefined && s !== undefined ? [a - s] : [];
      }),
      pooled: kept.filter((o) => o.pooled).length,
      runs: kept.length,
      infra: summary.infraErrors,
      wallS: (performance.now() - t0) / 1000,
    };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

const row = (f: Figures) => [
  f.label,
  `${f.runs} (${f.pooled} from the pool, ${f.infra} infra errors)`,
  ms(median(f.overhead)),
  ms(quantile(f.overhead, 0.9)),
  ms(median(f.act)),
  ms(quantile(f.act, 0.9)),
  f.wallS.toFixed(1),
];
const HEADER = ['Desktops', 'tasks', 'overhead median', 'p90', 'agent can act median', 'p90', 'wall s'];

/** Why docker cannot be measured here, or null when it can. */
async function dockerSkipReason(): Promise<string | null> {
  const run = promisify(execFile);
  const image = process.env.VNCUA_DOCKER_IMAGE ?? 'vncua-desktop';
  try {
    await run('docker', ['version', '--format', '{{.Server.Version}}'], { timeout: 15_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    return err.code === 'ENOENT' ? 'no docker CLI on this machine' : `the Docker daemon does not answer (${(err.stderr || err.message).trim().split('\n')[0]})`;
  }
  try {
    await run('docker', ['image', 'inspect', '--format', '{{.Id}}', image], { timeout: 15_000 });
  } catch {
    return `the image ${image} is not there (build it: docker build -t ${image} docker/)`;
  }
  return null;
}

function verdict(kind: 'local' | 'docker', without: Figures, withPool: Figures): string {
  const m = median(withPool.act);
  const o = median(withPool.overhead);
  return (
    `${kind === 'local' ? 'Native' : 'Docker'}: median desktop overhead ${ms(median(without.overhead))} → ${ms(o)} ms with --pool ${POOL} (${(median(without.overhead) / o).toFixed(1)}× less); ` +
    `task start → agent can act ${ms(median(without.act))} → ${ms(m)} ms (${(median(without.act) / m).toFixed(1)}× less). ` +
    `Bar: ≤ ${LIMITS[kind]} ms with the pool: overhead ${o <= LIMITS[kind] ? 'PASS' : 'FAIL'}, agent can act ${m <= LIMITS[kind] ? 'PASS' : 'FAIL'}.\n`
  );
}

async function main(): Promise<void> {
  const load = () =>
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`;
  let text = `\nPer-task desktop overhead, ${TASKS} tasks (after ${WARMUP} warm-up) per row, 1 worker, each task holding its desktop ${TASK_MS} ms, ${new Date().toISOString().slice(0, 10)}, ms\n\n`;
  text +=
    '"overhead": task.json desktop_overhead_ms, from the runner asking for a desktop (after writing task.json) until its `ready` (desktop up, task page loaded and settled: harness/cdp/page-ready.ts, which waits for 100 ms without a DOM mutation). "agent can act": from the same moment until the agent\'s first act() (also after its VNC connection and recording proxy are up).\n\n';
  const page = await servePage('127.0.0.1');
  let local: Figures[];
  try {
    const before = load();
    local = [await measure('native, no pool', () => localProvider(), page.url, TASKS, 0), await measure(`native, --pool ${POOL}`, () => localProvider(), page.url, TASKS, POOL)];
    const empty = await measure(`native, --pool ${POOL}, spares at their empty data: page`, () => localProvider(), page.url, TASKS, POOL, false);
    text += `${table(HEADER, [...local, empty].map(row))}\n\n(native: ${before} before, ${load()} after)\n\n${verdict('local', local[0]!, local[1]!)}`;
  } finally {
    await page.close();
  }
  const skip = await dockerSkipReason();
  if (skip) {
    text += `\nDocker: skipped: ${skip}.\n`;
  } else {
    const served = await servePage('0.0.0.0');
    try {
      const before = load();
      const docker = [
        await measure('docker, no pool', () => dockerProvider(), served.url, DOCKER_TASKS, 0),
        await measure(`docker, --pool ${POOL}`, () => dockerProvider(), served.url, DOCKER_TASKS, POOL),
      ];
      text += `\n${table(HEADER, docker.map(row))}\n\n(docker: ${DOCKER_TASKS} tasks per row; ${before} before, ${load()} after)\n\n${verdict('docker', docker[0]!, docker[1]!)}`;
    } finally {
      await served.close();
    }
  }
  process.stdout.write(text);
}

await main();
