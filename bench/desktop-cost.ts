/**
 * What one desktop costs while a task runs, to size `vncua eval`'s default --workers (eval/capacity.ts):
 * the basic suite's first tasks with the replay agent (real pages, real clicks and typing, recorded),
 * one worker, at 1280x800 and 1920x1080. Every 200 ms it sums, over the desktop's process group
 * (Xvnc, matchbox, websockify, Chromium and its children), PSS (each shared page split between the
 * processes sharing it: what one more desktop adds) and RSS from /proc/PID/smaps_rollup, and reads
 * their CPU time (utime + stime) from /proc/PID/stat. It also reports the runner's own RSS (the
 * agent, its live framebuffer and the recording proxy run in the runner's process).
 *
 * With --provider docker the desktops are containers (the docker provider; `npm run setup:docker`), their
 * processes found from the host as every descendant of the container's init, and the suite is served
 * on the Docker bridge. The last line says how many desktops at 1280x800 this machine holds while a
 * suite runs: its total memory over (worst PSS peak + the runner's growth per worker).
 *
 * Run: npx tsx bench/desktop-cost.ts [tasks=8] [--provider docker]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, freemem, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_AGENTS } from '../agents/index.ts';
import { DESKTOP_MEMORY_BYTES, recommendedWorkers } from '../eval/capacity.ts';
import { localProvider } from '../eval/providers/local.ts';
import type { DesktopProvider } from '../eval/providers/types.ts';
import { runSuite } from '../eval/runner.ts';
import { startStaticServer } from '../eval/static-server.ts';
import { loadTaskFile, resolveTaskUrls } from '../eval/tasks.ts';
import { descendants, groupMembers } from '../harness/desktop/procs.ts';
import { dockerBridgeGateway, dockerProvider } from '../eval/providers/docker.ts';
import { execFileSync } from 'node:child_process';
import { memoryOf } from './lib/proc-memory.ts';
import { median, quantile, table } from './stats.ts';

const args = process.argv.slice(2);
const PROVIDER = args.includes('--provider') ? args[args.indexOf('--provider') + 1] : 'local';
const TASKS = Number(args.find((a) => /^\d+$/.test(a)) ?? 8);
const SAMPLE_MS = 200;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const MIB = 1024 * 1024;
const SUITE = fileURLToPath(new URL('../eval/suites/basic/tasks.json', import.meta.url));

/** utime + stime of one process, in seconds; null when it is gone. */
function cpuOf(pid: number): number | null {
  try {
    const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = line.slice(line.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** One desktop's life as sampled. */
interface Life {
  resolution: string;
  peakPss: number;
  peakRss: number;
  pssSamples: number[];
  /** Last CPU seconds seen per pid (a process that exits keeps its last reading). */
  cpu: Map<number, number>;
  start: number;
  end: number;
  runnerRssPeak: number;
}

/** A provider (local, or docker) whose desktops are sampled while they live. */
function sampled(lives: Life[]): DesktopProvider {
  const inner = PROVIDER === 'docker' ? dockerProvider() : localProvider();
  return {
    name: inner.name,
    prepare: inner.prepare?.bind(inner),
    async acquire(req) {
      const d = await inner.acquire(req);
      // The desktop's processes: start.sh's process group, or everything under the container's init.
      const members =
        PROVIDER === 'docker'
          ? (() => {
              const init = Number(execFileSync('docker', ['inspect', '--format', '{{.State.Pid}}', d.info.container as string], { encoding: 'utf8' }).trim());
              return () => descendants(init);
            })()
          : (() => {
              const pgid = d.info.pid as number;
              return () => groupMembers(pgid);
            })();
      const life: Life = {
        resolution: `${req.size.width}x${req.size.height}`,
        peakPss: 0,
        peakRss: 0,
        pssSamples: [],
        cpu: new Map(),
        start: performance.now(),
        end: NaN,
        runnerRssPeak: 0,
      };
      lives.push(life);
      const sample = () => {
        let pss = 0;
        let rss = 0;
        for (const pid of members()) {
          const m = memoryOf(pid);
          if (m) {
            pss += m.pss;
            rss += m.rss;
          }
          const c = cpuOf(pid);
          if (c !== null) life.cpu.set(pid, c);
        }
        life.pssSamples.push(pss);
        life.peakPss = Math.max(life.peakPss, pss);
        life.peakRss = Math.max(life.peakRss, rss);
        life.runnerRssPeak = Math.max(life.runnerRssPeak, process.memoryUsage.rss());
      };
      sample();
      const timer = setInterval(sample, SAMPLE_MS);
      return {
        ...d,
        release: async () => {
          sample();
          clearInterval(timer);
          life.end = performance.now();
          await d.release();
        },
      };
    },
  };
}

async function main(): Promise<void> {
  const file = await loadTaskFile(SUITE);
  const server = await startStaticServer({ root: dirname(file.file), host: PROVIDER === 'docker' ? ((await dockerBridgeGateway()) ?? '0.0.0.0') : undefined });
  const out = await mkdtemp(join(tmpdir(), 'vncua-bench-desktop-cost-'));
  const lives: Life[] = [];
  const rssBefore = process.memoryUsage.rss();
  try {
    const tasks = resolveTaskUrls(file.tasks.slice(0, TASKS), server.url.replace('0.0.0.0', '127.0.0.1'));
    const summary = await runSuite({
      tasks,
      taskFile: file.file,
      agent: { name: 'replay', build: BUILTIN_AGENTS.replay! },
      resolutions: [
        { width: 1280, height: 800 },
        { width: 1920, height: 1080 },
      ],
      workers: 1,
      out,
      provider: sampled(lives),
    });
    if (summary.infraErrors > 0 || summary.ran !== tasks.length * 2) throw new Error(`${summary.ran} runs, ${summary.infraErrors} infra errors`);
    const rows: Array<Array<string>> = [];
    const mib = (b: number) => `${(b / MIB).toFixed(0)}`;
    let worstPss = 0;
    for (const res of ['1280x800', '1920x1080']) {
      const ls = lives.filter((l) => l.resolution === res);
      const peaks = ls.map((l) => l.peakPss);
      const medians = ls.map((l) => median(l.pssSamples));
      const rss = ls.map((l) => l.peakRss);
      const cores = ls.map((l) => [...l.cpu.values()].reduce((s, c) => s + c, 0) / ((l.end - l.start) / 1000));
      worstPss = Math.max(worstPss, ...peaks);
      rows.push([
        res,
        String(ls.length),
        mib(median(medians)),
        mib(median(peaks)),
        mib(Math.max(...peaks)),
        mib(median(rss)),
        median(cores).toFixed(2),
        quantile(cores, 0.9).toFixed(2),
      ]);
    }
    const runnerPeak = Math.max(...lives.map((l) => l.runnerRssPeak));
    const worst1280 = Math.max(...lives.filter((l) => l.resolution === '1280x800').map((l) => l.peakPss));
    const holds1280 = Math.floor((totalmem() - rssBefore) / (worst1280 + Math.max(0, runnerPeak - rssBefore)));
    const cap = recommendedWorkers({ cores: availableParallelism(), availableBytes: freemem() });
    process.stdout.write(
      `\nOne ${PROVIDER === 'docker' ? 'container' : 'native'} desktop while a task runs (basic suite, replay agent, first ${TASKS} tasks per resolution, 1 worker, sampled every ${SAMPLE_MS} ms), ${new Date().toISOString().slice(0, 10)}\n\n` +
        table(
          [
            'Resolution',
            'Runs',
            'PSS median, MiB',
            'PSS peak (median run), MiB',
            'PSS peak (worst run), MiB',
            'RSS peak (median run), MiB',
            'CPU cores used (median run)',
            'CPU cores used (p90 run)',
          ],
          rows,
        ) +
        `\n\nThe runner's own RSS: ${mib(rssBefore)} MiB before the suite, ${mib(runnerPeak)} MiB at its peak (agent, live framebuffer, recording proxy; one worker).\n` +
        `Worst desktop PSS peak ${mib(worstPss)} MiB + runner growth ${mib(runnerPeak - rssBefore)} MiB = ${mib(worstPss + runnerPeak - rssBefore)} MiB; the default --workers budgets ${mib(DESKTOP_MEMORY_BYTES)} MiB per desktop (eval/capacity.ts): ${worstPss + runnerPeak - rssBefore <= DESKTOP_MEMORY_BYTES ? 'PASS' : 'FAIL'}.\n` +
        `This machine: ${availableParallelism()} cores, ${(freemem() / 1024 ** 3).toFixed(1)} GiB available of ${(totalmem() / 1024 ** 3).toFixed(1)} GiB: default --workers ${cap.workers} (${cap.limitedBy}).\n` +
        `Desktops at 1280x800 this machine's ${(totalmem() / 1024 ** 3).toFixed(0)} GiB holds while a suite runs (memory alone, ${PROVIDER}): ${holds1280} (total memory less the runner's ${mib(rssBefore)} MiB, over the worst 1280x800 PSS peak ${mib(worst1280)} MiB + the runner's growth per worker ${mib(runnerPeak - rssBefore)} MiB).\n`,
    );
    // The budget covers the desktop and its worker's share of the runner.
    if (worstPss + (runnerPeak - rssBefore) > DESKTOP_MEMORY_BYTES) process.exitCode = 1;
  } finally {
    await server.close();
    await rm(out, { recursive: true, force: true });
  }
}

await main();
