/**
 * processRoot(): post-process every run under a root. With `jobs` N > 1, N worker PROCESSES (not
 * threads: decoding is CPU-bound JavaScript) each take one run at a time. A run that fails, or a worker
 * that dies, is reported and the others go on. Workers die with the parent (IPC disconnect) and are
 * stopped in `finally`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { VncuaError, errorInfo } from '../../harness/errors.ts';
import { findRuns } from './find.ts';
import { processRun, type ProcessRunOptions, type ProcessRunResult } from './run.ts';
import type { WorkerAnswer, WorkerJob } from './worker.ts';

/** How one run went. */
export type RunOutcome = { runDir: string; ok: true; result: ProcessRunResult } | { runDir: string; ok: false; error: { code: string; message: string } };

/** Options of processRoot(). */
export interface ProcessRootOptions extends ProcessRunOptions {
  /** Worker processes (default 1: in this process). */
  jobs?: number;
  /** Called as each run finishes (in completion order). */
  onOutcome?: (o: RunOutcome) => void;
  /** Stop handing out runs (and stop the workers) when aborted. */
  signal?: AbortSignal;
}

/** Every run's outcome, in the order the runs were found. */
export interface ProcessRootResult {
  runs: RunOutcome[];
  failed: number;
}

/** Process every run under `root`; throws PROCESS_ERR_NO_RUNS when there is none. */
export async function processRoot(root: string, options: ProcessRootOptions = {}): Promise<ProcessRootResult> {
  const runs = await findRuns(root);
  if (runs.length === 0) {
    throw new VncuaError('PROCESS_ERR_NO_RUNS', `No run under ${root}: a run directory holds execution.json (or partial_execution.json) and a recording/ directory.`, {
      details: { root },
    });
  }
  const { jobs, onOutcome, signal, ...runOptions } = options;
  return processRuns(
    runs.map((runDir) => ({ runDir, options: runOptions })),
    { ...(jobs !== undefined ? { jobs } : {}), ...(onOutcome ? { onOutcome } : {}), ...(signal ? { signal } : {}) },
  );
}

/** One run for processRuns(): its directory and its own options (e.g. its outputDir). */
export interface RunJob {
  runDir: string;
  options: ProcessRunOptions;
}

/**
 * Process the given runs (distinct directories), each with its own options, `jobs` worker processes at a
 * time (1: in this process); every run's outcome, in the order given.
 */
export async function processRuns(runs: readonly RunJob[], options: Pick<ProcessRootOptions, 'jobs' | 'onOutcome' | 'signal'> = {}): Promise<ProcessRootResult> {
  const jobs = Math.max(1, Math.min(options.jobs ?? 1, runs.length));
  const { onOutcome, signal } = options;
  const outcomes = new Map<string, RunOutcome>();
  const report = (o: RunOutcome) => {
    outcomes.set(o.runDir, o);
    onOutcome?.(o);
  };
  if (jobs === 1) {
    for (const { runDir, options: runOptions } of runs) {
      if (signal?.aborted) break;
      try {
        report({ runDir, ok: true, result: await processRun(runDir, runOptions) });
      } catch (e) {
        report({ runDir, ok: false, error: errorInfo(e, 'PROCESS_ERR_WORKER') });
      }
    }
  } else if (runs.length > 0) {
    await runInWorkers(runs, jobs, report, signal);
  }
  const ordered = runs.filter((r) => outcomes.has(r.runDir)).map((r) => outcomes.get(r.runDir)!);
  return { runs: ordered, failed: ordered.filter((o) => !o.ok).length };
}

/** The worker module and the node flags that load it (.ts sources need tsx's loader). */
function workerEntry(): { path: string; execArgv: string[] } {
  const url = new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url);
  const path = fileURLToPath(url);
  if (!path.endsWith('.ts')) return { path, execArgv: [] };
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return { path, execArgv: ['--import', pathToFileURL(tsx).href] };
}

async function runInWorkers(runs: readonly RunJob[], jobs: number, report: (o: RunOutcome) => void, signal: AbortSignal | undefined): Promise<void> {
  const entry = workerEntry();
  const queue = [...runs];
  const live = new Set<ChildProcess>();
  let nextId = 0;
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => (done = r));
  let remaining = runs.length;
  let startFailures = 0;
  const settle = (o: RunOutcome) => {
    report(o);
    remaining--;
    if (remaining === 0) done();
  };

  const start = (): void => {
    if (queue.length === 0 || signal?.aborted) return;
    const child = fork(entry.path, [], { execArgv: entry.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    live.add(child);
    let current: WorkerJob | null = null;
    let ready = false;
    let stderrNote = '';
    const give = () => {
      const next = signal?.aborted ? undefined : queue.shift();
      if (next === undefined) {
        current = null;
        if (child.connected) child.disconnect();
        return;
      }
      current = { id: nextId++, runDir: next.runDir, options: next.options };
      child.send(current, (err) => {
        if (err) child.kill('SIGKILL'); // reported as a dead worker by the exit handler
      });
    };
    child.on('message', (m: WorkerAnswer | { ready: true }) => {
      if ('ready' in m) {
        ready = true;
        give();
        return;
      }
      if (!current || m.id !== current.id) return;
      const dir = current.runDir;
      settle(m.ok ? { runDir: dir, ok: true, result: m.result } : { runDir: dir, ok: false, error: m.error });
      give();
    });
    child.on('error', (e) => {
      stderrNote = e.message;
    });
    child.on('exit', (code, sig) => {
      live.delete(child);
      if (!ready && ++startFailures > jobs) {
        // Workers cannot even start (e.g. the module fails to load): fail what is left rather than loop.
        for (const { runDir: dir } of queue.splice(0)) {
          settle({
            runDir: dir,
            ok: false,
            error: { code: 'PROCESS_ERR_WORKER', message: `No worker process could start (${sig ?? `exit code ${code}`}${stderrNote ? `: ${stderrNote}` : ''}).` },
          });
        }
      } else if (!ready) {
        start();
        return;
      }
      if (current) {
        const dir = current.runDir;
        current = null;
        settle({
          runDir: dir,
          ok: false,
          error: {
            code: 'PROCESS_ERR_WORKER',
            message: `The worker process processing ${dir} died (${sig ?? `exit code ${code}`}${stderrNote ? `: ${stderrNote}` : ''}); the other runs go on.`,
          },
        });
        start(); // replace it while runs remain
      }
      if (live.size === 0 && (queue.length === 0 || signal?.aborted)) {
        // Runs never handed out (aborted) are not reported.
        done();
      }
    });
  };

  const onAbort = () => {
    for (const c of live) c.kill('SIGTERM');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (let i = 0; i < jobs; i++) start();
    await finished;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await Promise.all(
      [...live].map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const t = setTimeout(() => c.kill('SIGKILL'), 5000);
            c.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            try {
              if (c.connected) c.disconnect();
              else c.kill('SIGTERM');
            } catch {
              c.kill('SIGTERM');
            }
          }),
      ),
    );
  }
}
