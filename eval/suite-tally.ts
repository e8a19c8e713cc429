/**
 * A suite's running tally, shared by the local runner (eval/runner.ts) and the queue's coordinator
 * (eval/queue/coordinator.ts): the progress snapshot and its emitter (the ETA recomputed at each event, a failing
 * display never stopping the suite), the count of a finished run with its `done` event, and the outcomes put back in
 * job order for the summary.
 */
import type { EvalJob } from './jobs.ts';
import { resolutionLabel } from './layout.ts';
import type { ProgressEvent, ProgressListener, ProgressSnapshot, WorkerStatus } from './progress.ts';
import type { RunOutcome } from './runner.ts';

/** The snapshot, and what changes it. */
export interface SuiteTally {
  readonly snapshot: ProgressSnapshot;
  /** Report `e` (the ETA updated first); the listener's failure is swallowed. */
  emit(e: ProgressEvent): void;
  /** Count a finished run (done, successes, infra errors by code) and report it (`done`). */
  recordDone(label: string, o: RunOutcome): void;
}

/** A tally for `total` runs; `workers` is the initial worker list, `queue` the queue's URL without password when queued. */
export function suiteTally(o: { total: number; workers: WorkerStatus[]; queue?: string; onProgress?: ProgressListener | undefined }): SuiteTally {
  const snapshot: ProgressSnapshot = {
    total: o.total,
    skipped: 0,
    done: 0,
    successes: 0,
    infraErrors: 0,
    infraCodes: {},
    startedAt: Date.now(),
    etaMs: null,
    workers: o.workers,
    ...(o.queue !== undefined ? { queue: o.queue } : {}),
  };
  const emit = (e: ProgressEvent) => {
    const remaining = snapshot.total - snapshot.skipped - snapshot.done;
    snapshot.etaMs = snapshot.done > 0 ? ((Date.now() - snapshot.startedAt) / snapshot.done) * remaining : null;
    try {
      o.onProgress?.(e, snapshot);
    } catch {
      // a failing display must not stop the suite
    }
  };
  return {
    snapshot,
    emit,
    recordDone(label, r) {
      snapshot.done++;
      if (r.success === true) snapshot.successes++;
      if (r.status === 'infra_error') {
        snapshot.infraErrors++;
        const code = r.error?.code ?? 'EVAL_ERR_DESKTOP_LOST';
        snapshot.infraCodes[code] = (snapshot.infraCodes[code] ?? 0) + 1;
      }
      emit({ type: 'done', job: label, status: r.status, success: r.success, attempts: r.attempts, durationMs: r.durationMs, dir: r.dir, ...(r.error ? { error: r.error } : {}) });
    },
  };
}

/** Sort `outcomes` in place into the order of `jobs` (task, resolution, repeat). */
export function sortOutcomes(outcomes: RunOutcome[], jobs: readonly EvalJob[]): RunOutcome[] {
  const key = (id: string, res: string, n: number) => `${id}@${res}#${n}`;
  const order = new Map(jobs.map((j, i) => [key(j.task.id, resolutionLabel(j.size), j.repeat), i]));
  return outcomes.sort((a, b) => order.get(key(a.taskId, a.resolution, a.repeat))! - order.get(key(b.taskId, b.resolution, b.repeat))!);
}
