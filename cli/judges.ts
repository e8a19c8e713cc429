/**
 * The judges on the command line: `--judge SPEC` (repeatable) of `vncua eval` (every task without its
 * own `judges`) and `vncua score` (judge the finished runs again, without re-running them), the LLM
 * judge's prices (byom/pricing.ts's table: eval/ cannot import byom/, so the CLI passes them in), and
 * one line on stderr per run whose judge could not decide (its code, the run, the judge).
 */
import { relative } from 'node:path';
import { costUsd, findPrice, usageTokens } from '../byom/pricing.ts';
import { judgeRun } from '../eval/judges/judge.ts';
import type { PriceFn } from '../eval/judges/llm.ts';
import { parseJudgeArg, type JudgeSpec } from '../eval/judges/spec.ts';
import { findRunDirs } from '../eval/score.ts';
import { oneLine } from './command.ts';

/** The --judge option of eval and score. */
export const JUDGE_OPTION = {
  judge: {
    type: 'string',
    multiple: true,
    value: 'SPEC',
    description:
      'a judge beside the success sentinel: sentinel, heuristic, llm:MODEL, hybrid:MODEL, or a JSON spec ({"type":"url","glob":"*/done*"}, {"type":"dom","selector":"#ok"}, {"type":"expression",...}, {"type":"llm","model":...,"when":"unsure"}); repeatable; verdicts in each run\'s judges.json',
  },
} as const;

/** Parse every --judge (JUDGE_ERR_BAD_SPEC names which one). */
export function parseJudgeArgs(values: readonly string[]): JudgeSpec[] {
  return values.map((v, i) => parseJudgeArg(v, values.length > 1 ? `--judge #${i + 1}` : '--judge'));
}

/** USD of an LLM judge call at the spec's `price`, else byom/pricing.ts's list prices (null for an unknown model). */
export const judgePrice: PriceFn = (model, usage, price) => {
  const p = price ?? findPrice(model)?.price;
  const t = usageTokens(usage);
  return p && t ? costUsd(t, p) : null;
};

/** One line per judge that could not decide: `vncua CMD: CODE: DIR: message`. */
export function writeJudgeErrors(
  command: string,
  root: string,
  runs: ReadonlyArray<{ dir: string; judges?: Array<{ judge: string; error?: { code: string; message: string } }> | undefined }>,
  err: NodeJS.WritableStream,
): number {
  let n = 0;
  for (const r of runs) {
    for (const j of r.judges ?? []) {
      if (!j.error) continue;
      n++;
      err.write(`vncua ${command}: ${j.error.code}: ${relative(root, r.dir) || '.'}: ${oneLine(j.error.message)}\n`);
    }
  }
  return n;
}

/** Judge every run under `root` again with `specs` (judges.json rewritten, source "rejudge"; a run that never ended gets unknown from the sentinel). */
export async function rejudgeRoot(
  root: string,
  specs: readonly JudgeSpec[],
  opts: { signal?: AbortSignal; price?: PriceFn; env?: NodeJS.ProcessEnv } = {},
): Promise<Array<{ dir: string; judges: Array<{ judge: string; verdict: string; error?: { code: string; message: string } }> }>> {
  const out: Array<{ dir: string; judges: Array<{ judge: string; verdict: string; error?: { code: string; message: string } }> }> = [];
  for (const dir of await findRunDirs(root)) {
    opts.signal?.throwIfAborted();
    const f = await judgeRun(dir, specs, { source: 'rejudge', ...opts });
    out.push({ dir, judges: f.verdicts.map((v) => ({ judge: v.judge, verdict: v.verdict, ...(v.error ? { error: v.error } : {}) })) });
  }
  return out;
}
