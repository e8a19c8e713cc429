import { describe, expect, it } from 'vitest';
import { judgeDisagreements, judgeRates, type RunJudgeVerdict } from './score-judges.ts';

const v = (judge: string, verdict: RunJudgeVerdict['verdict'], more: Partial<RunJudgeVerdict> = {}): RunJudgeVerdict => ({
  judge,
  type: judge,
  verdict,
  skipped: false,
  reason: '',
  error_code: null,
  cost_usd: null,
  ...more,
});
const run = (task_id: string, judges: RunJudgeVerdict[] | null, more: Record<string, unknown> = {}) => ({
  agent: 'a',
  resolution: '1280x800',
  task_id,
  repeat: 1,
  dir: `a/1280_800/${task_id}`,
  link: `a/1280_800/${task_id}/execution.json`,
  infra_error: false,
  invalid: null,
  judges,
  ...more,
});

describe('judges in the scores', () => {
  const runs = [
    run('t1', [v('sentinel', 'pass'), v('llm', 'pass', { cost_usd: 0.001 })]),
    run('t2', [v('sentinel', 'fail'), v('llm', 'pass', { cost_usd: 0.002 })]),
    run('t3', [v('sentinel', 'fail'), v('llm', 'unknown', { skipped: true })]),
    run('t4', [v('sentinel', 'pass'), v('llm', 'unknown', { error_code: 'JUDGE_ERR_BAD_ANSWER' })]),
    run('t5', null),
    run('t6', [v('sentinel', 'pass'), v('llm', 'fail')], { infra_error: true }),
  ];

  it('rates: pass / (pass + fail); unknown counted apart; skipped, infra and unjudged runs left out; costs summed', () => {
    expect(judgeRates(runs)).toEqual([
      { agent: 'a', judge: 'sentinel', type: 'sentinel', runs: 4, pass: 2, fail: 2, unknown: 0, skipped: 0, pass_rate: 0.5, cost_usd: null },
      { agent: 'a', judge: 'llm', type: 'llm', runs: 3, pass: 2, fail: 0, unknown: 1, skipped: 1, pass_rate: 1, cost_usd: 0.003 },
    ]);
  });

  it('disagreements: some pass and some fail, with the run link and the viewer URL', () => {
    expect(judgeDisagreements(runs)).toEqual([
      {
        agent: 'a',
        resolution: '1280x800',
        task_id: 't2',
        repeat: 1,
        dir: 'a/1280_800/t2',
        link: 'a/1280_800/t2/execution.json',
        viewer: './?run=a%2F1280_800%2Ft2',
        verdicts: { sentinel: 'fail', llm: 'pass' },
      },
    ]);
  });
});
