/**
 * A post-processing worker process (forked by processRoot with jobs > 1): takes one run at a time over
 * IPC, answers with its result or error, and exits when its parent goes away (IPC disconnect).
 */
import { isVncuaError } from '../../harness/errors.ts';
import { processRun, type ProcessRunOptions } from './run.ts';

/** A job sent to a worker. */
export interface WorkerJob {
  id: number;
  runDir: string;
  options: ProcessRunOptions;
}

/** A worker's answer. */
export type WorkerAnswer = { id: number; ok: true; result: Awaited<ReturnType<typeof processRun>> } | { id: number; ok: false; error: { code: string; message: string } };

/** Send to the parent if it is still there (it may have gone while a run was processed). */
function answer(m: WorkerAnswer | { ready: true }): void {
  if (process.connected) process.send!(m, undefined, {}, () => {});
}

if (process.send) {
  process.on('message', (job: WorkerJob) => {
    processRun(job.runDir, job.options).then(
      (result) => answer({ id: job.id, ok: true, result }),
      (e: unknown) => answer({ id: job.id, ok: false, error: { code: isVncuaError(e) ? e.code : 'PROCESS_ERR_WORKER', message: e instanceof Error ? e.message : String(e) } }),
    );
  });
  process.on('disconnect', () => process.exit(0));
  answer({ ready: true });
}
