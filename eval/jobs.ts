/**
 * The runs of a suite: every task at every resolution (a task with its own `resolution` runs at that
 * size only), `repeat` times each, in file order, then resolution order, then repeat order;
 * `--shard i/n` keeps every n-th of them.
 */
import type { ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { resolutionLabel } from './layout.ts';
import type { EvalTask } from './tasks.ts';

/** One task at one resolution, one of its repeats. */
export interface EvalJob {
  task: EvalTask;
  size: ScreenSize;
  /** Which repeat (1-based) of `repeats`. */
  repeat: number;
  /** How many times every task runs (--repeat K; 1: the single-run layout). */
  repeats: number;
  /** Position in the full (unsharded) job list. */
  index: number;
}

/** A shard: the `i`-th (1-based) of `n`. */
export interface Shard {
  i: number;
  n: number;
}

/** Parse "i/n" (1 <= i <= n); EVAL_ERR_BAD_OPTIONS when malformed. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const shard = m ? { i: Number(m[1]), n: Number(m[2]) } : undefined;
  if (!shard || shard.n < 1 || shard.i < 1 || shard.i > shard.n) {
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `Bad shard "${text}": expected i/n with 1 <= i <= n, e.g. 1/4.`, { details: { field: 'shard', value: text } });
  }
  return shard;
}

/** Every task at every resolution (or at its own), `repeats` times, in file order, then resolution order, then repeat order. */
export function expandJobs(tasks: readonly EvalTask[], resolutions: readonly ScreenSize[], repeats = 1): EvalJob[] {
  const jobs: EvalJob[] = [];
  for (const task of tasks) {
    const sizes = task.resolution ? [task.resolution] : resolutions;
    for (const size of sizes) for (let repeat = 1; repeat <= repeats; repeat++) jobs.push({ task, size, repeat, repeats, index: jobs.length });
  }
  return jobs;
}

/** The jobs of shard i/n: those whose index is i-1 modulo n (deterministic; shards are disjoint and cover every job). */
export function shardJobs(jobs: readonly EvalJob[], shard: Shard | undefined): EvalJob[] {
  if (!shard || shard.n === 1) return [...jobs];
  return jobs.filter((j) => j.index % shard.n === shard.i - 1);
}

/** `taskId@1280x800`, for logs; `taskId@1280x800#2` for the second of several repeats. */
export function jobLabel(job: Pick<EvalJob, 'task' | 'size' | 'repeat' | 'repeats'>): string {
  return `${job.task.id}@${resolutionLabel(job.size)}${job.repeats > 1 ? `#${job.repeat}` : ''}`;
}
