/**
 * Scoring: every metric on hand-built traces (no finish, finish before success, success then failure
 * later, empty, partial, infra_error, a run that never started), then a results tree (written with
 * the real TraceWriter, plus a uitask trace) scored into scores.json / scores.md / scores.html.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionName, RunResult, RunStatus } from '../harness/trace/schema.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish } from '../harness/trace/test-fixtures/uitask.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { taskOutcomes } from './score-repeat.ts';
import { aggregate, scoreRun, writeScores, type RunInput, type ScoreReport } from './score.ts';

type E = RunInput['entries'][number];
const e = (action: ActionName, tmc: boolean | null, t?: [number, number]): E => ({ action, task_marked_complete: tmc, started_at: t?.[0], ended_at: t?.[1] });
const finished = (durationMs = 1000): RunResult => ({ status: 'finished', steps: 1, durationMs });

describe('scoreRun: the metrics of one run', () => {
  it('success, then finish: a proper stop', () => {
    const m = scoreRun({ entries: [e('mouse_click', false), e('mouse_click', true), e('finish', true)], partial: false, result: finished(1500) });
    expect(m).toEqual({
      success: true,
      assisted_success: false,
      human_steps: 0,
      success_index: 1,
      finish_index: 2,
      proper_stop: true,
      complete: true,
      steps_performed: 3,
      duration_ms: 1500,
      actions_by_type: { mouse_click: 2, finish: 1 },
      infra_error: false,
      stopped: null,
      reason: null,
      model_calls: null,
      input_tokens: null,
      output_tokens: null,
      cost_usd: null,
      domain_blocked: null,
    });
  });

  it('no finish: success counts, proper_stop does not', () => {
    const m = scoreRun({ entries: [e('type_text', false), e('press_keys', true)], partial: false, result: { status: 'max_steps', durationMs: 10 } });
    expect([m.success, m.success_index, m.finish_index, m.proper_stop, m.complete]).toEqual([true, 1, null, false, true]);
  });

  it('finish before success: not a proper stop', () => {
    const m = scoreRun({ entries: [e('mouse_click', false), e('finish', false), e('mouse_click', true)], partial: false, result: finished() });
    expect([m.success, m.success_index, m.finish_index, m.proper_stop]).toEqual([true, 2, 1, false]);
  });

  it('success then failure later: still a success, at its first index; a later finish is a proper stop', () => {
    const m = scoreRun({ entries: [e('mouse_click', true), e('mouse_click', false), e('finish', false)], partial: false, result: finished() });
    expect([m.success, m.success_index, m.finish_index, m.proper_stop]).toEqual([true, 0, 2, true]);
  });

  it('an empty trace: no success, no indices, zero steps; complete when the run finished', () => {
    const m = scoreRun({ entries: [], partial: false, result: finished(42) });
    expect(m).toMatchObject({
      success: false,
      success_index: null,
      finish_index: null,
      proper_stop: false,
      steps_performed: 0,
      complete: true,
      duration_ms: 42,
      actions_by_type: {},
    });
  });

  it('a partial trace (killed run): scored as far as it goes, not complete; duration from its timestamps', () => {
    const m = scoreRun({ entries: [e('mouse_click', false, [1000, 1010]), e('mouse_click', true, [1500, 1600.5])], partial: true, result: null });
    expect(m).toMatchObject({ success: true, success_index: 1, complete: false, steps_performed: 2, duration_ms: 600.5, infra_error: false });
  });

  it('runs that ended badly are not complete: error, cancelled, stuck', () => {
    for (const status of ['error', 'cancelled', 'stuck', 'timeout'] as const) {
      const m = scoreRun({ entries: [e('mouse_click', false)], partial: false, result: { status, durationMs: 5, error: { code: 'ACTION_ERR_OFF_SCREEN', message: 'x' } } });
      expect([status, m.complete, m.infra_error]).toEqual([status, false, false]);
    }
  });

  it('infra errors: the infra_error status, an infra error code, or no trace and no result at all', () => {
    const infra = scoreRun({
      entries: [e('mouse_click', true)],
      partial: false,
      result: { status: 'infra_error', durationMs: 5, error: { code: 'DESKTOP_ERR_START_FAILED', message: 'x' } },
    });
    expect([infra.infra_error, infra.complete, infra.success]).toEqual([true, false, true]);
    const lost = scoreRun({
      entries: [e('mouse_click', false)],
      partial: false,
      result: { status: 'error', durationMs: 5, error: { code: 'AGENT_ERR_CONNECTION_LOST', message: 'x' } },
    });
    expect(lost.infra_error).toBe(true);
    const rfb = scoreRun({ entries: [], partial: false, result: { status: 'error', durationMs: 5, error: { code: 'RFB_ERR_CLOSED', message: 'x' } } });
    expect(rfb.infra_error).toBe(true);
    expect(scoreRun({ entries: [], partial: true, result: null, noTrace: true }).infra_error).toBe(true);
    expect(scoreRun({ entries: [], partial: true, result: null }).infra_error).toBe(false);
  });

  it("a success first seen at or after a person's step is assisted: not the agent's success, nor a proper stop", () => {
    const human = (action: ActionName, complete: boolean) => ({ ...e(action, complete), actor: 'human' as const });
    // The person clicked, the page was complete after it, the agent called finish: assisted.
    const assisted = scoreRun({ entries: [e('mouse_click', false), human('mouse_click', true), e('finish', true)], partial: false, result: finished(1000) });
    expect(assisted).toMatchObject({ success: false, assisted_success: true, human_steps: 1, success_index: 1, proper_stop: false });
    // The agent had succeeded before the person acted: the agent's success, the person's step counted.
    const own = scoreRun({ entries: [e('mouse_click', true), human('type_text', true), e('finish', true)], partial: false, result: finished(1000) });
    expect(own).toMatchObject({ success: true, assisted_success: false, human_steps: 1, success_index: 0, proper_stop: true });
    // A person acted, the task never completed.
    const failed = scoreRun({ entries: [human('mouse_click', false), e('finish', false)], partial: false, result: finished(1000) });
    expect(failed).toMatchObject({ success: false, assisted_success: false, human_steps: 1 });
    const agg = aggregate([assisted, own, failed, scoreRun({ entries: [e('mouse_click', true)], partial: false, result: finished(1000) })]);
    expect(agg).toMatchObject({ runs: 4, successes: 2, success_rate: 0.5, assisted_successes: 1, human_runs: 3, proper_stops: 1 });
  });

  it('aggregates exclude infra errors from every rate', () => {
    const runs = [
      scoreRun({ entries: [e('mouse_click', true), e('finish', true)], partial: false, result: finished(1000) }),
      scoreRun({ entries: [e('mouse_click', false)], partial: false, result: { status: 'max_steps', durationMs: 3000 } }),
      scoreRun({ entries: [e('mouse_click', true)], partial: false, result: { status: 'infra_error', durationMs: 9999, error: { code: 'EVAL_ERR_DESKTOP_LOST', message: '' } } }),
    ];
    expect(aggregate(runs)).toEqual({
      runs: 2,
      successes: 1,
      success_rate: 0.5,
      assisted_successes: 0,
      human_runs: 0,
      proper_stops: 1,
      proper_stop_rate: 0.5,
      completes: 2,
      complete_rate: 1,
      avg_steps: 1.5,
      avg_duration_ms: 2000,
      stopped: { ambiguity: 0, needs_human: 0, sensitive_action: 0, problem: 0, cost_cap: 0 },
      cost_usd: null,
      avg_cost_usd: null,
      cost_per_success: null,
      infra_errors: 1,
      invalid: 0,
      domain_blocked: null,
      domain_blocked_runs: 0,
    });
    expect(aggregate([]).success_rate).toBeNull();
  });

  it('runs ended with a stop status or cost_cap are counted apart per status: not in runs, not successes, their cost summed', () => {
    const priced = (status: RunStatus, cost: number, reason?: string) => ({ status, durationMs: 100, model_calls: 1, cost_usd: cost, ...(reason ? { reason } : {}) });
    const runs = [
      scoreRun({ entries: [e('mouse_click', true), e('finish', true)], partial: false, result: priced('finished', 0.1) }),
      scoreRun({ entries: [e('mouse_click', false)], partial: false, result: priced('max_steps', 0.1) }),
      scoreRun({ entries: [e('finish', false)], partial: false, result: priced('needs_human', 0.05, 'a CAPTCHA') }),
      scoreRun({ entries: [e('finish', false)], partial: false, result: priced('needs_human', 0.05) }),
      scoreRun({ entries: [e('finish', false)], partial: false, result: priced('ambiguity', 0.05, 'Which one?') }),
      scoreRun({ entries: [e('finish', false)], partial: false, result: priced('sensitive_action', 0.05) }),
      scoreRun({ entries: [e('finish', false)], partial: false, result: priced('problem', 0.05) }),
      // A run that reached its cap, even with the page complete, is not the agent's success.
      scoreRun({ entries: [e('mouse_click', true)], partial: false, result: priced('cost_cap', 0.2) }),
    ];
    expect(runs[2]).toMatchObject({ stopped: 'needs_human', reason: 'a CAPTCHA' });
    expect(runs[0]).toMatchObject({ stopped: null, reason: null });
    const agg = aggregate(runs);
    expect(agg).toMatchObject({
      runs: 2,
      successes: 1,
      success_rate: 0.5,
      infra_errors: 0,
      stopped: { ambiguity: 1, needs_human: 2, sensitive_action: 1, problem: 1, cost_cap: 1 },
      cost_usd: 0.65,
      cost_per_success: 0.65,
    });
    expect(agg.avg_cost_usd).toBeCloseTo(0.65 / 8, 12);
    // pass@k: a stopped run does not count for its task.
    const outcomes = taskOutcomes(runs.map((m, i) => ({ ...m, agent: 'a', resolution: '1x1', task_id: `t${i}`, group: 'g', repeat: 1, invalid: null })));
    expect(outcomes.filter((o) => o.counted.length > 0)).toHaveLength(2);
  });
});

describe('scoring a results tree', () => {
  let root: string;
  let report: ScoreReport;
  let md: string;
  let html: string;

  /** A run written by the real TraceWriter: entries as [action, tmc], then result.json and task.json. */
  async function run(agent: string, res: string, id: string, steps: Array<[ActionName, boolean]>, result: RunResult | null, opts: { finalize?: boolean; report?: boolean } = {}) {
    const dir = join(root, agent, res.replace('x', '_'), id);
    const w = new TraceWriter(dir);
    await w.open();
    let t = 1_700_000_000_000;
    for (const [action, tmc] of steps) {
      const params = action === 'finish' ? {} : { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' };
      await w.append({ action, params, task_marked_complete: tmc, started_at: t, ended_at: t + 100 } as never);
      t += 1000;
    }
    if (opts.finalize !== false) await w.finalize();
    if (result) await w.writeResult(result);
    await writeFile(join(dir, 'task.json'), JSON.stringify({ id, agent, resolution: res, group: id.replace(/-\d+$/, ''), attempt: 1 }));
    if (opts.report) await writeFile(join(dir, 'action_screenshots.html'), '<html></html>');
    return dir;
  }

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-'));
    const done = (steps: number): RunResult => ({ status: 'finished', steps, durationMs: 2000 });
    await run(
      'alpha',
      '1280x800',
      'click-1',
      [
        ['mouse_click', true],
        ['finish', true],
      ],
      done(2),
      { report: true },
    );
    await run(
      'alpha',
      '1280x800',
      'click-2',
      [
        ['mouse_click', false],
        ['finish', false],
      ],
      done(2),
    );
    await run(
      'alpha',
      '1920x1080',
      'click-1',
      [
        ['mouse_click', true],
        ['finish', true],
      ],
      done(2),
    );
    await run('alpha', '1920x1080', 'click-2', [['mouse_click', true]], {
      status: 'infra_error',
      steps: 1,
      durationMs: 10,
      error: { code: 'EVAL_ERR_DESKTOP_LOST', message: 'Chromium died' },
    });
    await run('beta', '1280x800', 'click-1', [['mouse_click', false]], { status: 'max_steps', steps: 1, durationMs: 500 });
    await run(
      'beta',
      '1280x800',
      'click-2',
      [
        ['mouse_click', true],
        ['mouse_click', false],
      ],
      null,
      { finalize: false },
    );
    // A uitask run directory: its own trace format, no result.json, no task.json.
    const ui = join(root, 'uitask', '1280_800', 'form--1');
    await mkdir(ui, { recursive: true });
    await writeFile(join(ui, 'execution.json'), uitaskExecutionJson([uitaskClick({ x: 5, y: 5 }), uitaskFinish(null, { done: true })]));
    ({ report } = await writeScores(root));
    md = await readFile(join(root, 'scores.md'), 'utf8');
    html = await readFile(join(root, 'scores.html'), 'utf8');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('scores every run directory with the layout, task.json and trace it has', () => {
    const key = (r: ScoreReport['runs'][number]) => `${r.agent}/${r.resolution}/${r.task_id}`;
    expect(report.runs.map((r) => [key(r), r.status, r.success, r.proper_stop, r.complete, r.steps_performed, r.infra_error])).toEqual([
      ['alpha/1280x800/click-1', 'finished', true, true, true, 2, false],
      ['alpha/1280x800/click-2', 'finished', false, false, true, 2, false],
      ['alpha/1920x1080/click-1', 'finished', true, true, true, 2, false],
      ['alpha/1920x1080/click-2', 'infra_error', true, false, false, 1, true],
      ['beta/1280x800/click-1', 'max_steps', false, false, true, 1, false],
      ['beta/1280x800/click-2', 'partial', true, false, false, 2, false],
      ['uitask/1280x800/form--1', 'unknown', true, true, true, 2, false],
    ]);
    expect(report.runs.find((r) => r.agent === 'uitask')!.group).toBe('form');
    expect(report.runs.find((r) => r.agent === 'uitask')!.actions_by_type).toEqual({ mouse_click: 1, finish: 1 });
    expect(report.runs.map((r) => r.link)).toEqual([
      'alpha/1280_800/click-1/action_screenshots.html',
      'alpha/1280_800/click-2/execution.json',
      'alpha/1920_1080/click-1/execution.json',
      'alpha/1920_1080/click-2/execution.json',
      'beta/1280_800/click-1/execution.json',
      'beta/1280_800/click-2/partial_execution.json',
      'uitask/1280_800/form--1/execution.json',
    ]);
  });

  it('aggregates per agent, per resolution and per group, infra errors apart', () => {
    expect(report.by_agent.map((a) => [a.agent, a.runs, a.successes, a.infra_errors])).toEqual([
      ['alpha', 3, 2, 1],
      ['beta', 2, 1, 0],
      ['uitask', 1, 1, 0],
    ]);
    expect(report.by_resolution.map((a) => [a.agent, a.resolution, a.runs, a.success_rate])).toEqual([
      ['alpha', '1280x800', 2, 0.5],
      ['alpha', '1920x1080', 1, 1],
      ['beta', '1280x800', 2, 0.5],
      ['uitask', '1280x800', 1, 1],
    ]);
    expect(report.by_group.filter((g) => g.agent === 'alpha').map((g) => [g.resolution, g.group, g.runs, g.infra_errors])).toEqual([
      ['1280x800', 'click', 2, 0],
      ['1920x1080', 'click', 1, 1],
    ]);
    expect(report.infra_errors).toEqual([
      {
        agent: 'alpha',
        resolution: '1920x1080',
        task_id: 'click-2',
        repeat: 1,
        dir: 'alpha/1920_1080/click-2',
        error: { code: 'EVAL_ERR_DESKTOP_LOST', message: 'Chromium died' },
        link: 'alpha/1920_1080/click-2/execution.json',
      },
    ]);
  });

  it('scores.md and scores.html: agents side by side, each cell linking to its step report or trace, no external resources', () => {
    expect(md).toContain('| alpha | 3 | 66.7% (2) |');
    // No agent made model calls: no cost columns.
    expect(md).not.toContain('cost / run');
    expect(html).not.toContain('cost / run');
    expect(md).toContain('EVAL_ERR_DESKTOP_LOST: Chromium died');
    expect(html).toContain('<th>task</th><th>resolution</th><th>alpha</th><th>beta</th><th>uitask</th>');
    expect(html).toContain('href="alpha/1280_800/click-1/action_screenshots.html"');
    expect(html).toContain('href="beta/1280_800/click-2/partial_execution.json"');
    // One linked cell per run.
    expect(html.match(/<td class="(ok|fail|infra)"[^>]*><a href=/g)?.length).toBe(report.runs.length);
    expect(html).not.toMatch(/<script|<link|src="http|url\(http/);
  });

  it('an empty directory is EVAL_ERR_NO_RUNS', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'vncua-score-empty-'));
    try {
      await expect(writeScores(empty)).rejects.toMatchObject({ code: 'EVAL_ERR_NO_RUNS' });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('scoring with success evidence', () => {
  it("keeps result.json's success_at and evidence per run, and links a successful run to its first successful step in the report", async () => {
    const root = await mkdtemp(join(tmpdir(), 'vncua-score-ev-'));
    try {
      const evidence = {
        rule: 'text' as const,
        pattern: '>code#1</',
        snippet: '<div id="r">code#1</div>',
        url: 'http://127.0.0.1:1/t.html',
        at: 1_700_000_001_350,
        entry_index: 1,
        phase: 'grace' as const,
      };
      const write = async (id: string, late: boolean, report: boolean) => {
        const dir = join(root, 'agent', '1280_800', id);
        const w = new TraceWriter(dir);
        await w.open();
        await w.append({
          action: 'mouse_click',
          params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' },
          task_marked_complete: false,
          started_at: 1_700_000_000_000,
          ended_at: 1_700_000_000_100,
        });
        await w.append({ action: 'type_text', params: { text: 'abc' }, task_marked_complete: false, started_at: 1_700_000_001_000, ended_at: 1_700_000_001_100 });
        await w.append({ action: 'finish', params: {}, task_marked_complete: false, started_at: 1_700_000_001_101, ended_at: 1_700_000_001_102 });
        if (late) await w.markComplete(1, { phase: 'grace', at: evidence.at, rule: 'text', pattern: evidence.pattern, snippet: evidence.snippet, url: evidence.url });
        await w.finalize();
        await w.writeResult({ status: 'finished', steps: 1, durationMs: 1500, success: late, success_at: late ? evidence.at : null, evidence: late ? evidence : null });
        if (report) await writeFile(join(dir, 'action_screenshots.html'), '<html></html>');
      };
      await write('late-1', true, true);
      await write('late-2', true, false);
      await write('none-1', false, true);
      const { report } = await writeScores(root);
      expect(report.runs.map((r) => [r.task_id, r.success, r.success_index, r.proper_stop, r.success_at, r.evidence?.phase ?? null, r.success_link])).toEqual([
        ['late-1', true, 1, true, evidence.at, 'grace', 'agent/1280_800/late-1/action_screenshots.html#step-1'],
        ['late-2', true, 1, true, evidence.at, 'grace', null],
        ['none-1', false, null, false, null, null, null],
      ]);
      expect(report.runs[0]!.evidence).toEqual(evidence);
      const json = JSON.parse(await readFile(join(root, 'scores.json'), 'utf8')) as ScoreReport;
      expect(json.runs[0]!.evidence).toEqual(evidence);
      const html = await readFile(join(root, 'scores.html'), 'utf8');
      expect(html).toMatch(
        /<a class="first" href="agent\/1280_800\/late-1\/action_screenshots\.html#step-1" title="first success at step 1 \(grace check, text &#34;&#62;code#1&#60;\/&#34;\): &#60;div id=&#34;r&#34;&#62;code#1&#60;\/div&#62; on http:\/\/127\.0\.0\.1:1\/t\.html">step 1<\/a>/,
      );
      expect(html.match(/class="first"/g)?.length).toBe(1);
      const md = await readFile(join(root, 'scores.md'), 'utf8');
      expect(md).toContain('([step 1](agent/1280_800/late-1/action_screenshots.html#step-1))');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('scoring runs that stopped for a reason', () => {
  it('scores.json lists them with status and reason; scores.md and scores.html show the per-status counts and a "Stopped runs" table', async () => {
    const root = await mkdtemp(join(tmpdir(), 'vncua-score-stop-'));
    try {
      const write = async (id: string, result: RunResult) => {
        const dir = join(root, 'model', '1280_800', id);
        const w = new TraceWriter(dir);
        await w.open();
        await w.append({ action: 'finish', params: {}, task_marked_complete: id === 'done-1', started_at: 1, ended_at: 2 } as never);
        await w.finalize();
        await w.writeResult(result);
      };
      await write('done-1', { status: 'finished', steps: 1, durationMs: 10 });
      await write('login-1', { status: 'needs_human', steps: 1, durationMs: 10, reason: 'A login wall: the site asks for a password.' });
      await write('buy-1', { status: 'cost_cap', steps: 1, durationMs: 10, error: { code: 'AGENT_ERR_COST_CAP', message: 'The run cost $0.5.' } });
      const { report } = await writeScores(root);
      expect(report.by_agent[0]).toMatchObject({ runs: 1, successes: 1, success_rate: 1, stopped: { needs_human: 1, cost_cap: 1, ambiguity: 0 } });
      expect(report.stopped.map((s) => [s.task_id, s.status, s.reason, s.error?.code ?? null])).toEqual([
        ['buy-1', 'cost_cap', null, 'AGENT_ERR_COST_CAP'],
        ['login-1', 'needs_human', 'A login wall: the site asks for a password.', null],
      ]);
      const md = await readFile(join(root, 'scores.md'), 'utf8');
      const html = await readFile(join(root, 'scores.html'), 'utf8');
      expect(md).toContain('2 (needs_human 1, cost_cap 1)');
      expect(md).toContain('## Stopped runs (counted apart)');
      expect(md).toContain('| needs_human | A login wall: the site asks for a password. |');
      expect(md).toContain('| cost_cap | AGENT_ERR_COST_CAP: The run cost $0.5. |');
      expect(html).toContain('<td class="stopped"');
      expect(html).toContain('■ needs_human: A login wall');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
