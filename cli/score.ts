/**
 * `vncua score DIR`: score every run under DIR (the --out of `vncua eval`, or any tree of run
 * directories) and write DIR/scores.json, DIR/scores.md and DIR/scores.html (eval/score.ts;
 * the metrics are described in eval/README.md). Runs that cannot be read are listed as invalid and
 * make the command exit 1, unless --allow-invalid.
 */
import { qaLine } from '../eval/score-qa.ts';
import { assistedText, pct, usd } from '../eval/score-render.ts';
import { writeScores } from '../eval/score.ts';
import type { JudgeSpec } from '../eval/judges/spec.ts';
import { cancelOnSignals, parseCommandArgs, parseCommandLine, type CommandSpec } from './command.ts';
import { JUDGE_OPTION, judgePrice, parseJudgeArgs, rejudgeRoot, writeJudgeErrors } from './judges.ts';

/** `vncua score`'s options: the --help is generated from them. */
export const SCORE_SPEC = {
  command: 'score',
  positional: { name: 'DIR', description: 'the --out directory of vncua eval (OUT/<agent>/<W>_<H>/<task id>/[<n>/]), or any directories holding execution.json / result.json' },
  options: {
    'allow-invalid': { type: 'boolean', description: 'exit 0 even when some runs cannot be read (they are listed and never scored)' },
    ...JUDGE_OPTION,
  },
  notes: `writes DIR/scores.json, scores.md and scores.html; with --judge, first judges every run again
(its judges.json rewritten; the page judges reuse what the run's end captured in final_page.json),
one line on stderr per judge that could not decide (its JUDGE_ERR_ code; the verdict is unknown)
exit code: 0 when scores were written, 1 when DIR holds no run or some runs are invalid
           (unless --allow-invalid), 2 on bad arguments
`,
} as const satisfies CommandSpec;

/** What `vncua score` was asked to do. */
export interface ScoreCommandOptions {
  dir: string;
  allowInvalid: boolean;
  /** --judge: judge every run again with these before scoring. */
  judges?: JudgeSpec[];
}

/** Parse `vncua score` arguments; undefined for --help. */
export function parseScoreArgs(argv: string[]): ScoreCommandOptions | undefined {
  const line = parseCommandLine(SCORE_SPEC, argv);
  if (!line) return undefined;
  const judges = line.values.judge.length > 0 ? parseJudgeArgs(line.values.judge) : undefined;
  return { dir: line.positional, allowInvalid: line.values['allow-invalid'], ...(judges ? { judges } : {}) };
}

/** Run `vncua score DIR`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs(SCORE_SPEC, () => parseScoreArgs(argv));
  if ('exitCode' in parsed) return parsed.exitCode;
  const o = parsed.options;
  if (o.judges) {
    const cancel = cancelOnSignals('score', 'cancelling: the judges stop');
    try {
      const judged = await rejudgeRoot(o.dir, o.judges, { signal: cancel.signal, price: judgePrice });
      writeJudgeErrors('score', o.dir, judged, process.stderr);
    } finally {
      cancel.dispose();
    }
  }
  const { report, files } = await writeScores(o.dir);
  for (const a of report.by_agent) {
    // Runs the agent stopped for a reason (or a cost cap stopped), per status: `needs_human 2, cost_cap 1`.
    const stopped = Object.entries(a.stopped)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const apart = [
      stopped ? `stopped: ${stopped}` : '',
      a.infra_errors ? `${a.infra_errors} infra error${a.infra_errors === 1 ? '' : 's'}` : '',
      a.invalid ? `${a.invalid} invalid` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const repeats = a.k > 1 ? `; pass@1 ${pct(a.pass_at_1)}, pass@${a.k} ${pct(a.pass_at_k)}, pass^${a.k} ${pct(a.pass_hat_k)}` : '';
    const cost = a.cost_usd === null ? '' : `; cost ${usd(a.cost_usd)} (${usd(a.avg_cost_usd)} a run, ${usd(a.cost_per_success)} a success)`;
    const blocked = a.domain_blocked === null ? '' : `; DOMAIN_BLOCKED ${a.domain_blocked} in ${a.domain_blocked_runs} run${a.domain_blocked_runs === 1 ? '' : 's'}`;
    process.stdout.write(
      `${a.agent}: ${pct(a.success_rate)} success (${a.successes}/${a.runs}${assistedText(a)})${apart ? `, ${apart} excluded` : ''}${repeats}${cost}${blocked}\n`,
    );
  }
  for (const j of report.judges)
    process.stdout.write(
      `${j.agent}: judge ${j.judge}: ${pct(j.pass_rate)} pass (${j.pass}/${j.pass + j.fail}${j.unknown ? `, ${j.unknown} unknown` : ''}${j.skipped ? `, ${j.skipped} skipped` : ''})\n`,
    );
  if (report.disagreements.length > 0) process.stdout.write(`judges disagree on: ${report.disagreements.map((d) => d.dir).join(', ')}\n`);
  for (const q of report.qa ?? []) process.stdout.write(`qa: ${q.agent}/${q.task_id}: ${qaLine(q)}\n`);
  if (report.flaky.length > 0) process.stdout.write(`flaky: ${report.flaky.map((f) => `${f.agent}/${f.resolution}/${f.task_id}`).join(', ')}\n`);
  process.stdout.write(`scores: ${files.html}\n`);
  if (report.invalid.length > 0 && !o.allowInvalid) {
    const first = report.invalid[0]!;
    process.stderr.write(
      `vncua score: EVAL_ERR_INVALID_RUNS: ${report.invalid.length} run${report.invalid.length === 1 ? '' : 's'} could not be read and ${report.invalid.length === 1 ? 'was' : 'were'} not scored (first: ${first.reason.message}); they are listed in the scores; --allow-invalid accepts them.\n`,
    );
    return 1;
  }
  return 0;
}
