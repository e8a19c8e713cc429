/**
 * Repeats (`vncua eval --repeat K`): pass@1, pass@k, pass^k over tasks, and the flaky tasks.
 *
 * A task is one (agent, resolution, task id); its runs are the repeats found on disk (one in the
 * single-run layout). A run *counts* unless it is an infra error, invalid, or ended with a status counted apart
 * (eval/score.ts APART_STATUSES: the agent said why it stopped, or a cost cap stopped it). For a task with n
 * counted runs, c of them successes, and a set of tasks whose largest number of runs is k:
 *
 *   pass@1 = mean over tasks with n >= 1 of c / n        (the chance one run succeeds)
 *   pass@k = share of tasks with n = k where c >= 1      (at least one of k runs succeeds)
 *   pass^k = share of tasks with n = k where c = k       (all k runs succeed)
 *
 * Tasks with fewer than k counted runs (infra errors, invalid runs, repeats not run yet) are left out
 * of pass@k and pass^k, so both are always over exactly k runs per task; `tasks_short` counts them.
 * With k = 1 all three equal the success rate over tasks. A task is flaky when its counted runs
 * disagree (0 < c < n).
 */

/** One run as the repeat metrics see it. */
export interface RepeatRun {
  agent: string;
  resolution: string;
  task_id: string;
  group: string;
  repeat: number;
  success: boolean;
  infra_error: boolean;
  invalid: unknown;
  /** A status counted apart (eval/score.ts APART_STATUSES: the agent's stop statuses, cost_cap): the run does not count. */
  stopped?: string | null;
}

/** One task's runs. */
export interface TaskOutcome {
  agent: string;
  resolution: string;
  task_id: string;
  group: string;
  /** Repeat numbers of the runs found, in order. */
  repeats: number[];
  /** Of those, the runs that count (not infra, not invalid), and which succeeded. */
  counted: number[];
  succeeded: number[];
}

/** The repeat metrics of a set of tasks (one row of by_agent / by_resolution / by_group). */
export interface PassAtK {
  /** Tasks in the row. */
  tasks: number;
  /** The largest number of runs of one task in the row (the K of --repeat K). */
  k: number;
  /** Mean over tasks with a counted run of successes / counted runs; null when none. */
  pass_at_1: number | null;
  /** Share of the tasks with k counted runs that succeeded at least once; null when none. */
  pass_at_k: number | null;
  /** Share of the tasks with k counted runs that succeeded every time; null when none. */
  pass_hat_k: number | null;
  /** Tasks with fewer than k counted runs: in pass@1, not in pass@k / pass^k. */
  tasks_short: number;
}

/** A task whose counted runs disagree. */
export interface FlakyTask {
  agent: string;
  resolution: string;
  task_id: string;
  group: string;
  /** Repeat numbers of the counted runs that succeeded, and of those that did not. */
  succeeded: number[];
  failed: number[];
  /** Runs that do not count (infra errors, invalid). */
  not_counted: number[];
}

/** Group runs into tasks (agent, resolution, task id), in first-seen order. */
export function taskOutcomes(runs: readonly RepeatRun[]): TaskOutcome[] {
  const tasks = new Map<string, TaskOutcome>();
  for (const r of runs) {
    const key = `${r.agent}\0${r.resolution}\0${r.task_id}`;
    let t = tasks.get(key);
    if (!t) tasks.set(key, (t = { agent: r.agent, resolution: r.resolution, task_id: r.task_id, group: r.group, repeats: [], counted: [], succeeded: [] }));
    t.repeats.push(r.repeat);
    if (r.infra_error || r.invalid || (r.stopped ?? null) !== null) continue;
    t.counted.push(r.repeat);
    if (r.success) t.succeeded.push(r.repeat);
  }
  const byNumber = (a: number, b: number) => a - b;
  for (const t of tasks.values()) {
    t.repeats.sort(byNumber);
    t.counted.sort(byNumber);
    t.succeeded.sort(byNumber);
  }
  return [...tasks.values()];
}

/** pass@1, pass@k, pass^k of a set of tasks (see the file comment). */
export function passAtK(tasks: readonly TaskOutcome[]): PassAtK {
  const k = Math.max(0, ...tasks.map((t) => t.repeats.length));
  const withRuns = tasks.filter((t) => t.counted.length > 0);
  const full = tasks.filter((t) => k > 0 && t.counted.length === k);
  const share = (n: number, of: number) => (of === 0 ? null : n / of);
  return {
    tasks: tasks.length,
    k,
    pass_at_1: withRuns.length === 0 ? null : withRuns.reduce((s, t) => s + t.succeeded.length / t.counted.length, 0) / withRuns.length,
    pass_at_k: share(full.filter((t) => t.succeeded.length > 0).length, full.length),
    pass_hat_k: share(full.filter((t) => t.succeeded.length === k).length, full.length),
    tasks_short: tasks.length - full.length,
  };
}

/** The tasks whose counted runs disagree, with which repeats succeeded. */
export function flakyTasks(tasks: readonly TaskOutcome[]): FlakyTask[] {
  return tasks
    .filter((t) => t.succeeded.length > 0 && t.succeeded.length < t.counted.length)
    .map((t) => ({
      agent: t.agent,
      resolution: t.resolution,
      task_id: t.task_id,
      group: t.group,
      succeeded: t.succeeded,
      failed: t.counted.filter((n) => !t.succeeded.includes(n)),
      not_counted: t.repeats.filter((n) => !t.counted.includes(n)),
    }));
}
