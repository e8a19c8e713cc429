/**
 * The judges in the scores: each run's verdicts from its judges.json (eval/judges/), each judge's rate
 * per agent, and the runs where judges disagree (some said pass, some fail), with links to them.
 * A judge's rate counts the runs it decided (pass or fail); unknown verdicts are counted apart and
 * skipped ones (an LLM judge's `when` policy) not at all. Infra errors and invalid runs are left out.
 */
import { disagrees, readJudges, type Verdict } from './judges/record.ts';
import { roundUsd } from '../harness/trace/model-calls.ts';

/** One judge's verdict on a run, as the scores keep it. */
export interface RunJudgeVerdict {
  judge: string;
  type: string;
  verdict: Verdict;
  /** Not run on this run (its `when` policy). */
  skipped: boolean;
  reason: string;
  /** The code of a judge that could not decide (JUDGE_ERR_*). */
  error_code: string | null;
  cost_usd: number | null;
}

/** A run's judges: null without judges.json; `problem` when judges.json cannot be read. */
export async function runJudges(dir: string): Promise<{ judges: RunJudgeVerdict[] | null; problem: string | null }> {
  const f = await readJudges(dir);
  if (f === null) return { judges: null, problem: null };
  if ('invalid' in f) return { judges: null, problem: `judges.json ${f.invalid}` };
  return {
    judges: f.verdicts.map((v) => ({
      judge: v.judge,
      type: v.type,
      verdict: v.verdict,
      skipped: v.skipped,
      reason: v.reason,
      error_code: v.error?.code ?? null,
      cost_usd: v.cost_usd,
    })),
    problem: null,
  };
}

/** One judge's rate over an agent's judged runs. */
export interface JudgeRate {
  agent: string;
  judge: string;
  type: string;
  /** Runs it decided or could not decide (skipped ones left out). */
  runs: number;
  pass: number;
  fail: number;
  unknown: number;
  skipped: number;
  /** pass / (pass + fail); null when it decided none. */
  pass_rate: number | null;
  /** USD of its model calls; null when it made none with a known price. */
  cost_usd: number | null;
}

/** A run whose judges disagree. */
export interface Disagreement {
  agent: string;
  resolution: string;
  task_id: string;
  repeat: number;
  dir: string;
  /** The step report or the trace, relative to the scored root. */
  link: string | null;
  /** The run in `vncua serve` over the same root (relative to the viewer's page). */
  viewer: string;
  /** Judge name -> verdict. */
  verdicts: Record<string, Verdict>;
}

interface Judged {
  agent: string;
  resolution: string;
  task_id: string;
  repeat: number;
  dir: string;
  link: string | null;
  infra_error: boolean;
  invalid: unknown;
  judges: RunJudgeVerdict[] | null;
}

/** Each judge's rate per agent, in the order judges first appear. */
export function judgeRates(runs: readonly Judged[]): JudgeRate[] {
  const rows = new Map<string, JudgeRate & { costs: number[] }>();
  for (const r of runs) {
    if (r.infra_error || r.invalid || !r.judges) continue;
    for (const v of r.judges) {
      const k = `${r.agent}\0${v.judge}`;
      let row = rows.get(k);
      if (!row) {
        row = { agent: r.agent, judge: v.judge, type: v.type, runs: 0, pass: 0, fail: 0, unknown: 0, skipped: 0, pass_rate: null, cost_usd: null, costs: [] };
        rows.set(k, row);
      }
      if (v.skipped) {
        row.skipped++;
        continue;
      }
      row.runs++;
      row[v.verdict]++;
      if (v.cost_usd !== null) row.costs.push(v.cost_usd);
    }
  }
  return [...rows.values()].map(({ costs, ...row }) => ({
    ...row,
    pass_rate: row.pass + row.fail === 0 ? null : row.pass / (row.pass + row.fail),
    cost_usd: costs.length === 0 ? null : roundUsd(costs.reduce((s, c) => s + c, 0)),
  }));
}

/** The runs whose judges disagree. */
export function judgeDisagreements(runs: readonly Judged[]): Disagreement[] {
  return runs
    .filter((r) => !r.infra_error && !r.invalid && r.judges && disagrees(r.judges))
    .map((r) => ({
      agent: r.agent,
      resolution: r.resolution,
      task_id: r.task_id,
      repeat: r.repeat,
      dir: r.dir,
      link: r.link,
      viewer: `./?run=${encodeURIComponent(r.dir)}`,
      verdicts: Object.fromEntries(r.judges!.filter((v) => !v.skipped).map((v) => [v.judge, v.verdict])),
    }));
}
