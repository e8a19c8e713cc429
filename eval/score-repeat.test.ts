/**
 * Repeats: pass@1, pass@k, pass^k and the flaky tasks, on hand-built runs (infra errors and invalid
 * runs not counted; tasks short of k counted runs out of pass@k / pass^k), then on a results tree in
 * the repeat layout (OUT/<agent>/<W>_<H>/<task id>/<n>/) written by the real TraceWriter, with a run
 * moved aside by --rerun (<n>~1) that is not scored.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceWriter } from '../harness/trace/writer.ts';
import { writeScores, type ScoreReport } from './score.ts';
import { flakyTasks, passAtK, taskOutcomes, type RepeatRun } from './score-repeat.ts';

type Mark = '✓' | '✗' | 'infra' | 'invalid';
function runs(task: string, marks: Mark[], resolution = '1280x800'): RepeatRun[] {
  return marks.map((m, i) => ({
    agent: 'a',
    resolution,
    task_id: task,
    group: task,
    repeat: i + 1,
    success: m === '✓',
    infra_error: m === 'infra',
    invalid: m === 'invalid' ? { code: 'TRACE_ERR_INVALID' } : null,
  }));
}

describe('pass@k over hand-built repeats', () => {
  const all = [
    ...runs('t-ok', ['✓', '✓', '✓']),
    ...runs('t-never', ['✗', '✗', '✗']),
    ...runs('t-flaky', ['✗', '✓', '✗']),
    ...runs('t-short', ['✓', 'infra', '✓']),
    ...runs('t-inv', ['✓', 'invalid', '✗']),
  ];

  it('pass@1 is the mean per-task success share; pass@k and pass^k are over tasks with k counted runs', () => {
    const p = passAtK(taskOutcomes(all));
    expect(p).toMatchObject({ tasks: 5, k: 3, tasks_short: 2 });
    // (3/3 + 0/3 + 1/3 + 2/2 + 1/2) / 5
    expect(p.pass_at_1).toBeCloseTo((1 + 0 + 1 / 3 + 1 + 0.5) / 5, 12);
    // Of t-ok, t-never, t-flaky: two succeeded at least once, one every time.
    expect(p.pass_at_k).toBeCloseTo(2 / 3, 12);
    expect(p.pass_hat_k).toBeCloseTo(1 / 3, 12);
  });

  it('the flaky tasks: counted runs that disagree, with which repeats succeeded', () => {
    expect(flakyTasks(taskOutcomes(all))).toEqual([
      { agent: 'a', resolution: '1280x800', task_id: 't-flaky', group: 't-flaky', succeeded: [2], failed: [1, 3], not_counted: [] },
      { agent: 'a', resolution: '1280x800', task_id: 't-inv', group: 't-inv', succeeded: [1], failed: [3], not_counted: [2] },
    ]);
  });

  it('with one run per task all three are the success rate; the same task at two resolutions is two tasks', () => {
    const single = [...runs('x', ['✓']), ...runs('y', ['✗']), ...runs('z', ['✓']), ...runs('x', ['✗'], '1920x1080')];
    const p = passAtK(taskOutcomes(single));
    expect(p).toEqual({ tasks: 4, k: 1, pass_at_1: 0.5, pass_at_k: 0.5, pass_hat_k: 0.5, tasks_short: 0 });
    expect(flakyTasks(taskOutcomes(single))).toEqual([]);
    expect(passAtK([])).toEqual({ tasks: 0, k: 0, pass_at_1: null, pass_at_k: null, pass_hat_k: null, tasks_short: 0 });
    expect(passAtK(taskOutcomes(runs('only-infra', ['infra', 'infra'])))).toMatchObject({ pass_at_1: null, pass_at_k: null, tasks_short: 1 });
  });
});

describe('scoring a results tree with repeats', () => {
  let root: string;
  let report: ScoreReport;
  let md: string;
  let html: string;

  /** One repeat's run, written by the real TraceWriter: a click (success or not) then finish; task.json unless `bare`. */
  async function repeat(dir: string, success: boolean, opts: { bare?: boolean; task?: Record<string, unknown> } = {}) {
    const w = new TraceWriter(dir);
    await w.open();
    await w.append({
      action: 'mouse_click',
      params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' },
      task_marked_complete: success,
      started_at: 1e12,
      ended_at: 1e12 + 50,
    });
    await w.append({ action: 'finish', params: {}, task_marked_complete: success, started_at: 1e12 + 100, ended_at: 1e12 + 101 });
    await w.finalize();
    await w.writeResult({ status: 'finished', steps: 2, durationMs: 200 });
    if (!opts.bare) await writeFile(join(dir, 'task.json'), JSON.stringify(opts.task));
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-repeat-'));
    const base = join(root, 'clicker', '1280_800');
    const plan: Record<string, boolean[]> = { 'ok-1': [true, true, true], 'never-1': [false, false, false], 'flaky-1': [false, true, false] };
    for (const [id, marks] of Object.entries(plan)) {
      for (const [i, ok] of marks.entries()) {
        const n = i + 1;
        // ok-1 without task.json: agent, resolution, task and repeat come from the layout alone.
        await repeat(
          join(base, id, String(n)),
          ok,
          id === 'ok-1' ? { bare: true } : { task: { id, agent: 'clicker', resolution: '1280x800', group: id.replace(/-\d+$/, ''), repeat: n, repeats: 3 } },
        );
      }
    }
    // An older run moved aside by --rerun: kept on disk, never scored.
    await mkdir(join(base, 'ok-1', '2~1'));
    await repeat(join(base, 'ok-1', '2~1'), false, { bare: true });
    ({ report } = await writeScores(root));
    md = await readFile(join(root, 'scores.md'), 'utf8');
    html = await readFile(join(root, 'scores.html'), 'utf8');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('every repeat is a run with its number, from task.json or the layout; moved-aside runs are not scored', () => {
    expect(report.runs.map((r) => `${r.task_id}#${r.repeat}:${r.success ? 'ok' : 'fail'}`)).toEqual([
      'flaky-1#1:fail',
      'flaky-1#2:ok',
      'flaky-1#3:fail',
      'never-1#1:fail',
      'never-1#2:fail',
      'never-1#3:fail',
      'ok-1#1:ok',
      'ok-1#2:ok',
      'ok-1#3:ok',
    ]);
    expect(report.runs.every((r) => r.agent === 'clicker' && r.resolution === '1280x800')).toBe(true);
  });

  it('pass@1, pass@3, pass^3 per agent, resolution and group; the flaky list', () => {
    const pick = (a: ScoreReport['by_agent'][number]) => [a.runs, a.successes, a.tasks, a.k, a.pass_at_1, a.pass_at_k, a.pass_hat_k, a.tasks_short];
    expect(pick(report.by_agent[0]!)).toEqual([9, 4, 3, 3, (1 / 3 + 0 + 1) / 3, 2 / 3, 1 / 3, 0]);
    expect(pick(report.by_resolution[0]!)).toEqual(pick(report.by_agent[0]!));
    expect(report.by_group.map((g) => [g.group, g.pass_at_1, g.pass_at_k, g.pass_hat_k])).toEqual([
      ['flaky', 1 / 3, 1, 0],
      ['never', 0, 0, 0],
      ['ok', 1, 1, 1],
    ]);
    expect(report.flaky).toEqual([{ agent: 'clicker', resolution: '1280x800', task_id: 'flaky-1', group: 'flaky', succeeded: [2], failed: [1, 3], not_counted: [] }]);
  });

  it('scores.md and scores.html show the repeat metrics, the flaky task, and one link per repeat', () => {
    expect(md).toContain('| clicker | 9 | 44.4% (4) |');
    expect(md).toContain('| 3 | 3 | 44.4% | 66.7% | 33.3% |');
    expect(md).toContain('| clicker | 1280x800 | flaky-1 | 2 | 1, 3 | – |');
    expect(html).toContain('pass@1 44.4%, pass@3 66.7%, pass^3 33.3%');
    expect(html).toContain('<td>clicker</td><td>1280x800</td><td>flaky-1</td><td>2</td><td>1, 3</td>');
    for (const n of [1, 2, 3]) expect(html).toContain(`href="clicker/1280_800/flaky-1/${n}/execution.json">#${n} ${n === 2 ? '✓' : '✗'}</a>`);
    expect(html).toMatch(/<td class="flaky">.*flaky-1\/1\/execution\.json.*<small>1\/3<\/small><\/td>/);
    expect(html).not.toContain('2~1');
  });
});
