/**
 * Cost in `vncua score`: result.json's model totals per run (model_calls, tokens, cost_usd), summed per
 * agent with cost per run and per success, and the cost columns of scores.md / scores.html (shown only
 * when some agent's runs were priced). Runs written with the real TraceWriter.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../harness/trace/schema.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { usd } from './score-render.ts';
import { aggregate, scoreRun, writeScores, type ScoreReport } from './score.ts';

describe('cost in scores', () => {
  let root: string;
  let report: ScoreReport;

  /** One run of `agent` on task `id`: a click (complete or not) and finish, then `result`. */
  async function run(agent: string, id: string, success: boolean, result: RunResult): Promise<void> {
    const w = new TraceWriter(join(root, agent, '1280_800', id));
    await w.open();
    const t = 1_700_000_000_000;
    await w.append({
      action: 'mouse_click',
      params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' },
      task_marked_complete: success,
      started_at: t,
      ended_at: t + 10,
    });
    await w.append({ action: 'finish', params: {}, task_marked_complete: success, started_at: t + 20, ended_at: t + 30 });
    await w.finalize();
    await w.writeResult(result);
  }
  const done: RunResult = { status: 'finished', steps: 2, durationMs: 100 };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-cost-'));
    // gpt: two priced runs and one that ended before any model call (it cost nothing).
    await run('gpt', 'click-1', true, { ...done, model_calls: 2, input_tokens: 3000, output_tokens: 40, cost_usd: 0.0185 });
    await run('gpt', 'click-2', false, { ...done, model_calls: 3, input_tokens: 4500, output_tokens: 60, cost_usd: 0.0115 });
    await run('gpt', 'click-3', false, { ...done, status: 'error', error: { code: 'MODEL_ERR_AUTH', message: 'bad key' } });
    // local: calls with tokens but no price.
    await run('local', 'click-1', true, { ...done, model_calls: 2, input_tokens: 2000, output_tokens: 20 });
    ({ report } = await writeScores(root));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("each run carries result.json's model totals; null when absent", () => {
    const runs = Object.fromEntries(report.runs.map((r) => [`${r.agent}/${r.task_id}`, [r.model_calls, r.input_tokens, r.output_tokens, r.cost_usd]]));
    expect(runs).toEqual({
      'gpt/click-1': [2, 3000, 40, 0.0185],
      'gpt/click-2': [3, 4500, 60, 0.0115],
      'gpt/click-3': [null, null, null, null],
      'local/click-1': [2, 2000, 20, null],
    });
  });

  it('per agent: the total, per run and per success; null when some run with calls was not priced', () => {
    const gpt = report.by_agent.find((a) => a.agent === 'gpt')!;
    expect(gpt).toMatchObject({ runs: 3, successes: 1, cost_usd: 0.03, cost_per_success: 0.03 });
    expect(gpt.avg_cost_usd).toBeCloseTo(0.01, 12);
    expect(report.by_agent.find((a) => a.agent === 'local')).toMatchObject({ cost_usd: null, avg_cost_usd: null, cost_per_success: null });
    // No success: no cost per success; no model calls at all: no cost.
    const failed = scoreRun({ entries: [], partial: false, result: { ...done, model_calls: 1, cost_usd: 0.5 } });
    expect(aggregate([failed])).toMatchObject({ cost_usd: 0.5, avg_cost_usd: 0.5, cost_per_success: null });
    expect(aggregate([scoreRun({ entries: [], partial: false, result: done })])).toMatchObject({ cost_usd: null });
  });

  it('scores.md and scores.html show the cost columns, and each run cell its calls, tokens and cost', async () => {
    const md = await readFile(join(root, 'scores.md'), 'utf8');
    const html = await readFile(join(root, 'scores.html'), 'utf8');
    const header = md.split('\n').find((l) => l.startsWith('| agent | runs |'))!;
    expect(header.endsWith('| pass^k | cost | cost / run | cost / success |')).toBe(true);
    expect(md).toMatch(/\| gpt \| 3 \| 33\.3% \(1\) \|.*\| \$0\.03 \| \$0\.01 \| \$0\.03 \|/);
    expect(md).toMatch(/\| local \| 1 \|.*\| – \| – \| – \|/);
    expect(html).toContain('<th>cost / success</th>');
    expect(html).toContain('3 model calls, 4500 in / 60 out tokens, $0.0115');
  });

  it('usd(): 2 decimals from a dollar up, 3 significant digits under it', () => {
    expect([usd(null), usd(0), usd(12.345), usd(1), usd(0.0185), usd(0.03 / 3), usd(0.00345), usd(0.0001), usd(0.5)]).toEqual([
      '–',
      '$0',
      '$12.35',
      '$1.00',
      '$0.0185',
      '$0.01',
      '$0.00345',
      '$0.0001',
      '$0.5',
    ]);
  });
});
