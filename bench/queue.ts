/**
 * The Redis job queue (`vncua eval --queue` + `vncua worker`) against the local runner (`vncua eval`),
 * issue 16's figures, all through the real commands in child processes and Debian's redis-server:
 *
 * 1. Throughput with W = 1, 2, 4 worker processes (concurrency 1 each, started and idle before the
 *    suite) against `vncua eval --workers W` on the same tasks: wall time of the `vncua eval` command
 *    from spawn to exit in both cases (process start, the runs, the scores); ratio local / queue (≥ 0.95).
 * 2. Queue overhead per run, from the same queued runs: (a) enqueue to the start of the run on an idle
 *    worker: task.json's `started_at` (the attempt's start, written by the worker) minus the later of
 *    the job's enqueue time and the moment that worker finished its previous job (so time spent
 *    waiting for a busy worker is not counted); plus (b) completion to scored: the coordinator's
 *    progress line for the run, received here, minus the job's `finishedOn`. Median of (a)+(b) (≤ 30 ms).
 * 3. Time to detect a dead worker and restart its job elsewhere: two workers, a one-run suite, the
 *    worker that takes the job is killed with SIGKILL as soon as it is active; time until the same job is
 *    active again on the other (≤ 30 s with the default --stall-timeout; also with --stall-timeout 10).
 *
 * Each throughput comparison runs `--rounds` times (default 3), the order of the two sides alternating between
 * rounds and between rows; the table gives each round's ratio and their median, since one sample of a ~20 s
 * suite on a shared 2-core machine moves by more than the 5 % the bar allows.
 *
 * A further row runs W desktops in one worker process (`--concurrency W`, `--one-process W`, default 4), the way to
 * use one machine: on 2 cores, W node processes cost more than one process running W runs.
 *
 * Run: npx tsx bench/queue.ts [--tasks 12] [--workers 1,2,4] [--one-process 4] [--rounds 3] [--stall-runs 2]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job, Queue, QueueEvents } from 'bullmq';
import { QUEUE_NAME } from '../eval/queue/manifest.ts';
import { startRedis, type TestRedis } from '../eval/queue/test-helpers.ts';
import { loadTaskFile } from '../eval/tasks.ts';
import { median, ms, quantile, table } from './stats.ts';

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i === -1 ? dflt : argv[i + 1]!;
};
const TASKS = Number(opt('--tasks', '12'));
const WORKERS = opt('--workers', '1,2,4').split(',').map(Number);
const STALL_RUNS = Number(opt('--stall-runs', '2'));
const ROUNDS = Math.max(1, Number(opt('--rounds', '3')));
/** Also W desktops in ONE worker process (--concurrency W), against the local runner with W (empty: none). */
const ONE_PROCESS = opt('--one-process', '4').split(',').filter(Boolean).map(Number);
const REPO = new URL('../', import.meta.url).pathname;
const TASK_FILE = join(REPO, 'eval/suites/basic/tasks.json');
const AGENT = 'replay';

/** A `vncua ARGS` child; lines of its output go to `onLine` with their arrival time. */
function vncua(args: string[], onLine?: (line: string, at: number) => void): { child: ChildProcess; exited: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, [join(REPO, 'bin/vncua.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  let partial = '';
  const take = (d: Buffer) => {
    const at = Date.now();
    text += d;
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const l of lines) onLine?.(l, at);
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  return { child, exited: new Promise((r) => child.once('close', (code) => r(code))), output: () => text };
}

/** Wait until `cond` holds, or fail saying `what`. */
async function until(what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`bench/queue: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Start `n` workers on the queue and wait until BullMQ lists them all. */
async function startWorkers(redis: TestRedis, queue: Queue, n: number, extra: string[] = [], concurrency = 1): Promise<Array<ReturnType<typeof vncua> & { name: string }>> {
  const before = (await queue.getWorkers()).length;
  const ws = Array.from({ length: n }, (_, i) => {
    const name = `bench-w${i + 1}-${process.pid}-${Date.now()}`;
    return { ...vncua(['worker', '--queue', redis.url, '--concurrency', String(concurrency), '--name', name, ...extra]), name };
  });
  await until(`${n} workers to connect`, async () => (await queue.getWorkers()).length >= before + n);
  return ws;
}

/** Stop workers (SIGTERM, then SIGKILL after 20 s). */
async function stopWorkers(ws: Array<ReturnType<typeof vncua>>): Promise<void> {
  await Promise.all(
    ws.map(async (w) => {
      if (w.child.exitCode !== null || w.child.signalCode !== null) return;
      w.child.kill('SIGTERM');
      const t = setTimeout(() => w.child.kill('SIGKILL'), 20_000);
      await w.exited;
      clearTimeout(t);
    }),
  );
}

interface Timed {
  wallMs: number;
  overheadsMs: number[];
}

/** One local `vncua eval --workers W` of the tasks: wall time. */
async function localRun(ids: string[], w: number): Promise<number> {
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-local-'));
  try {
    const t0 = performance.now();
    const r = vncua(['eval', '--tasks', TASK_FILE, '--agent', AGENT, '--only', ids.join(','), '--out', out, '--workers', String(w)]);
    const code = await r.exited;
    if (code !== 0) throw new Error(`local eval exited ${code}:\n${r.output()}`);
    return performance.now() - t0;
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** One queued `vncua eval --queue` of the tasks on W idle workers: wall time and per-run overheads. */
async function queuedRun(redis: TestRedis, queue: Queue, events: QueueEvents, ids: string[], w: number, oneProcess = false): Promise<Timed> {
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-queue-'));
  const workers = oneProcess ? await startWorkers(redis, queue, 1, [], w) : await startWorkers(redis, queue, w);
  // Every completed job of this suite: its times, read while it still exists (the coordinator removes them at the end).
  const jobs = new Map<string, { timestamp: number; processedOn: number; finishedOn: number; by: string; label: string }>();
  const reading: Array<Promise<void>> = [];
  const onCompleted = ({ jobId }: { jobId: string }) => {
    reading.push(
      Job.fromId(queue, jobId).then((j) => {
        if (!j?.finishedOn || !j.processedOn) return;
        const label = jobId.slice(jobId.indexOf('.') + 1).replace(/#1$/, '');
        jobs.set(label, { timestamp: j.timestamp, processedOn: j.processedOn, finishedOn: j.finishedOn, by: j.processedBy ?? '?', label });
      }),
    );
  };
  events.on('completed', onCompleted);
  const doneAt = new Map<string, number>();
  try {
    const t0 = performance.now();
    const r = vncua(['eval', '--queue', redis.url, '--tasks', TASK_FILE, '--agent', AGENT, '--only', ids.join(','), '--out', out], (line, at) => {
      const m = /^eval: \[\d+\/\d+\] (\S+): /.exec(line);
      if (m) doneAt.set(m[1]!, at);
    });
    const code = await r.exited;
    const wallMs = performance.now() - t0;
    if (code !== 0) throw new Error(`queued eval exited ${code}:\n${r.output()}`);
    await Promise.all(reading);
    // Per worker, its jobs in order: a run's start counts from max(enqueue, the worker's previous finish).
    const overheadsMs: number[] = [];
    const byWorker = new Map<string, Array<typeof jobs extends Map<string, infer V> ? V : never>>();
    for (const j of jobs.values()) byWorker.set(j.by, [...(byWorker.get(j.by) ?? []), j]);
    for (const list of byWorker.values()) {
      list.sort((a, b) => a.processedOn - b.processedOn);
      let prevFinish = 0;
      for (const j of list) {
        const task = JSON.parse(await readFile(join(out, AGENT, '1280_800', j.label.split('@')[0]!, 'task.json'), 'utf8')) as { started_at: number };
        const toStart = task.started_at - Math.max(j.timestamp, prevFinish);
        const toScored = (doneAt.get(j.label) ?? Number.NaN) - j.finishedOn;
        prevFinish = j.finishedOn;
        if (Number.isFinite(toStart) && Number.isFinite(toScored)) overheadsMs.push(toStart + toScored);
      }
    }
    return { wallMs, overheadsMs };
  } finally {
    events.off('completed', onCompleted);
    await stopWorkers(workers);
    await rm(out, { recursive: true, force: true });
  }
}

/** One stall trial: ms from SIGKILL of the worker running the job until the job is active again elsewhere. */
async function stallTrial(redis: TestRedis, queue: Queue, events: QueueEvents, id: string, stallArgs: string[]): Promise<number> {
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-stall-'));
  const workers = await startWorkers(redis, queue, 2, stallArgs);
  let killedAt = 0;
  let restartedAt = 0;
  let victim = '';
  const onActive = async ({ jobId }: { jobId: string }) => {
    const j = await Job.fromId(queue, jobId);
    const by = j?.processedBy ?? '';
    if (!killedAt) {
      const w = workers.find((x) => by.startsWith(x.name));
      if (!w) return;
      victim = w.name;
      w.child.kill('SIGKILL');
      killedAt = Date.now();
    } else if (!restartedAt && !by.startsWith(victim)) restartedAt = Date.now();
  };
  events.on('active', onActive);
  try {
    const r = vncua(['eval', '--queue', redis.url, '--tasks', TASK_FILE, '--agent', AGENT, '--only', id, '--out', out]);
    await until('the killed job to run again elsewhere', () => restartedAt > 0, 180_000);
    const code = await r.exited;
    if (code !== 0) throw new Error(`queued eval exited ${code}:\n${r.output()}`);
    return restartedAt - killedAt;
  } finally {
    events.off('active', onActive);
    await stopWorkers(workers);
    await rm(out, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const all = (await loadTaskFile(TASK_FILE)).tasks.map((t) => t.id);
  const ids = all.slice(0, TASKS);
  const redis = await startRedis();
  const connection = { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null };
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  await events.waitUntilReady();
  const loads: string[] = [];
  try {
    const rows: Array<Array<string | number>> = [];
    const overheads: number[] = [];
    // W worker processes of concurrency 1 (the figure), and W desktops in one worker process (--concurrency W).
    const configs = [...WORKERS.map((w) => ({ label: String(w), w, one: false })), ...ONE_PROCESS.map((w) => ({ label: `${w} (one process, --concurrency ${w})`, w, one: true }))];
    const byW = new Map(configs.map((c) => [c.label, { local: [] as number[], queue: [] as number[], ratio: [] as number[], overhead: [] as number[] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, c] of configs.entries()) {
        const w = c.w;
        // Alternate the order so neither side always runs first (between rows and between rounds).
        let q: Timed;
        let local: number;
        if ((i + round) % 2 === 0) {
          q = await queuedRun(redis, queue, events, ids, w, c.one);
          local = await localRun(ids, w);
        } else {
          local = await localRun(ids, w);
          q = await queuedRun(redis, queue, events, ids, w, c.one);
        }
        loads.push(loadavg()[0]!.toFixed(1));
        const r = byW.get(c.label)!;
        r.local.push(local);
        r.queue.push(q.wallMs);
        r.ratio.push(local / q.wallMs);
        // The overhead is read per worker name: one process running W jobs at once has no "previous finish" per slot.
        if (!c.one) {
          overheads.push(...q.overheadsMs);
          r.overhead.push(...q.overheadsMs);
        }
        console.error(`bench/queue: round ${round + 1}/${ROUNDS} W=${c.label} local ${ms(local)} queue ${ms(q.wallMs)} ratio ${(local / q.wallMs).toFixed(3)}`);
      }
    }
    for (const [label, r] of byW) {
      rows.push([
        label,
        ms(median(r.local)),
        ms(median(r.queue)),
        r.ratio.map((x) => x.toFixed(3)).join(', '),
        `**${median(r.ratio).toFixed(3)}**`,
        r.overhead.length ? ms(median(r.overhead)) : '–',
      ]);
    }
    const stall: Array<Array<string | number>> = [];
    for (const [label, args] of [
      ['default (30 s)', [] as string[]],
      ['--stall-timeout 10', ['--stall-timeout', '10']],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < STALL_RUNS; i++) times.push(await stallTrial(redis, queue, events, ids[0]!, [...args]));
      stall.push([label, times.map((t) => ms(t)).join(', '), ms(median(times))]);
    }
    console.log(
      `### Queue (${ids.length} basic-suite tasks, replay agent, 1280x800, ${ROUNDS} rounds; load average after each comparison ${loads.join(' / ')} on ${process.env.NPROC ?? '2'} cores)\n`,
    );
    console.log(
      'Throughput: wall time of `vncua eval` (spawn to exit, scores included) with W desktops locally against W worker processes (concurrency 1, idle before the suite):\n',
    );
    console.log(table(['W', 'local, median', 'queue, median', 'local / queue, each round', 'local / queue, median (≥ 0.95)', 'queue overhead per run, median'], rows));
    console.log(
      `\nQueue overhead per run (enqueue, or the worker's previous finish, to the run's start on the worker + job completion to the coordinator's progress line), all ${overheads.length} runs: median ${ms(median(overheads))}, p90 ${ms(quantile(overheads, 0.9))} (bar ≤ 30 ms)\n`,
    );
    console.log('A worker killed with SIGKILL mid-run: time until its job runs on another worker:\n');
    console.log(table(['stall timeout', 'trials', 'median (bar ≤ 30 s by default)'], stall));
  } finally {
    await events.close().catch(() => {});
    await queue.close().catch(() => {});
    await redis.close();
  }
}

await main();
