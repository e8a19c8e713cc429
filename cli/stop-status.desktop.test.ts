/**
 * Why runs stopped, end to end: real `vncua eval` runs of `--agent http` (the HTTP planner adapter) on real desktops,
 * against a local planner server speaking the wire format (byom/http/wire.ts) that answers by the task's goal:
 * FINISH with each stop status and a reason, a plain FINISH, or WAITs whose priced usage reaches `--max-cost` mid-run.
 * Every status reaches result.json, `--process`'s step report (tokens and cost per step) and `vncua score` (counted
 * apart, per status). Then `--max-suite-cost`: the first run reaches the suite's cap mid-run, the others do not
 * start (exit 1, a line says so); the same command again counts what the finished run cost and stops the next one
 * sooner.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedServer, type ScriptedServer } from '../byom/http/test-helpers/servers.ts';
import { readResult, readTrace } from '../harness/trace/reader.ts';
import type { PlannerRequest } from '../byom/http/wire.ts';
import { runVncua, type Ran } from './test-helpers/run-vncua.ts';

/** $10 in / $20 out per 1M tokens: 1000 in + 100 out = $0.012 a plan. */
const PRICES = { 'my-planner': { input: 10, output: 20 } };
const USAGE = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
const PLAN_USD = 0.012;
const STOPS = {
  ambiguity: 'Which of the two forms?',
  needs_human: 'A login wall: the site asks for a password.',
  sensitive_action: 'Paying needs approval.',
  problem: 'The page shows a 502 error.',
} as const;

/** `vncua ARGS` in a child (cli/test-helpers/run-vncua.ts), its output and exit code. */
function vncua(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<Ran> {
  return runVncua(args[0]!, args.slice(1), { env, deadlineMs: timeoutMs });
}

describe('stop statuses and cost caps through vncua eval, process and score', () => {
  let dir: string;
  let planner: ScriptedServer;
  /** Plans asked for, per task goal. */
  const asked = new Map<string, number>();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-stop-'));
    await writeFile(join(dir, 'page.html'), '<!doctype html><title>p</title><h1>A page</h1><button>Go</button>');
    await writeFile(join(dir, 'prices.json'), JSON.stringify(PRICES));
    const task = (id: string, goal: string) => ({ id, goal, url: 'page.html', success: { sentinel: 'code#1' }, maxSteps: 10 });
    await writeFile(
      join(dir, 'tasks.json'),
      JSON.stringify([...Object.keys(STOPS).map((s) => task(`stop-${s.replace('_', '-')}`, `STOP ${s}`)), task('spend', 'SPEND'), task('done', 'DONE')]),
    );
    await writeFile(join(dir, 'suite.json'), JSON.stringify(['a', 'b', 'c'].map((x) => task(`spend-${x}`, `SPEND ${x}`))));
    planner = await startScriptedServer((seen) => {
      const req = JSON.parse(seen.body) as PlannerRequest;
      const n = (asked.get(req.task) ?? 0) + 1;
      asked.set(req.task, n);
      const [verb, arg] = req.task.split(' ');
      // WAITs of distinct lengths: no two plans alike (the stuck guard stays quiet).
      if (verb === 'SPEND') return { body: { actions: [{ type: 'WAIT', seconds: n / 1000 }], usage: USAGE } };
      if (verb === 'STOP') return { body: { actions: [{ type: 'FINISH', status: arg, reason: STOPS[arg as keyof typeof STOPS] }], usage: USAGE } };
      return { body: { actions: [{ type: 'FINISH', message: 'done' }], usage: USAGE } };
    });
  }, 60_000);
  afterAll(async () => {
    await planner?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const adapterArgs = () => ['--', '--endpoint', `${planner.url}v1/plan`, '--model', 'my-planner', '--prices', join(dir, 'prices.json')];
  const env = { VNCUA_PLANNER_TOKEN: 'planner-token' };

  it('each stop status and a --max-cost reached mid-run end their runs so, in result.json, the step report and the scores', async () => {
    const out = join(dir, 'out');
    const r = await vncua(
      ['eval', '--tasks', join(dir, 'tasks.json'), '--agent', 'http', '--out', out, '--workers', '2', '--max-cost', '0.03', '--process', ...adapterArgs()],
      env,
    );
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const runDir = (id: string) => join(out, 'http', '1280_800', id);
    for (const [status, reason] of Object.entries(STOPS)) {
      const res = await readResult(runDir(`stop-${status.replace('_', '-')}`));
      expect(res).toMatchObject({ status, reason, steps: 1, model_calls: 1, cost_usd: PLAN_USD });
      const { entries } = await readTrace(runDir(`stop-${status.replace('_', '-')}`));
      expect(entries.map((e) => [e.action, e.params])).toEqual([['finish', { status, reason }]]);
    }
    expect(await readResult(runDir('done'))).toMatchObject({ status: 'finished', steps: 1 });
    // $0.012 a plan: 0.012, 0.024 under the cap of 0.03; the third reaches it; no fourth plan is asked for.
    const spend = await readResult(runDir('spend'));
    expect(spend).toMatchObject({ status: 'cost_cap', steps: 3, model_calls: 3, input_tokens: 3000, output_tokens: 300, error: { code: 'AGENT_ERR_COST_CAP' } });
    expect(spend!.cost_usd).toBeCloseTo(3 * PLAN_USD, 12);
    expect(asked.get('SPEND')).toBe(3);
    const trace = await readTrace(runDir('spend'));
    expect(trace.partial).toBe(false);
    expect(trace.entries.map((e) => e.action)).toEqual(['wait', 'wait', 'wait']);

    // The step report: each step's tokens and cost; the outcome's status, reason and error.
    const shots = JSON.parse(await readFile(join(runDir('spend'), 'action_screenshots.json'), 'utf8')) as {
      outcome: Record<string, unknown>;
      actions: Array<{ model?: Record<string, unknown> }>;
    };
    expect(shots.actions.map((a) => a.model)).toEqual(Array.from({ length: 3 }, () => ({ calls: 1, input_tokens: 1000, output_tokens: 100, cost_usd: PLAN_USD })));
    expect(shots.outcome).toMatchObject({ status: 'cost_cap', error: { code: 'AGENT_ERR_COST_CAP' }, model: { calls: 3, input_tokens: 3000, output_tokens: 300 } });
    const report = await readFile(join(runDir('stop-needs-human'), 'action_screenshots.html'), 'utf8');
    expect(report).toContain('<dt>status</dt><dd>needs_human</dd>');
    expect(report).toContain('<dt>reason</dt><dd>A login wall: the site asks for a password.</dd>');
    expect(report).toContain('1 call · 1000 in / 100 out tokens · $0.012');

    // Scores: the stopped runs are counted apart, per status; only `done` is in the rate; every run's cost is summed.
    const s = await vncua(['score', out]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain('http: 0.0% success (0/1), stopped: ambiguity 1, needs_human 1, sensitive_action 1, problem 1, cost_cap 1 excluded');
    const scores = JSON.parse(await readFile(join(out, 'scores.json'), 'utf8')) as {
      by_agent: Array<{ runs: number; stopped: Record<string, number>; cost_usd: number }>;
      stopped: Array<{ task_id: string; status: string; reason: string | null }>;
    };
    expect(scores.by_agent[0]).toMatchObject({ runs: 1, stopped: { ambiguity: 1, needs_human: 1, sensitive_action: 1, problem: 1, cost_cap: 1 } });
    expect(scores.by_agent[0]!.cost_usd).toBeCloseTo(8 * PLAN_USD, 12);
    expect(scores.stopped.map((x) => [x.task_id, x.status])).toEqual([
      ['spend', 'cost_cap'],
      ['stop-ambiguity', 'ambiguity'],
      ['stop-needs-human', 'needs_human'],
      ['stop-problem', 'problem'],
      ['stop-sensitive-action', 'sensitive_action'],
    ]);
  }, 600_000);

  it('--max-suite-cost: reached mid-run by the first run, the others do not start; the same command again counts what was spent', async () => {
    const out = join(dir, 'suite-out');
    const args = (cap: string) => ['eval', '--tasks', join(dir, 'suite.json'), '--agent', 'http', '--out', out, '--workers', '1', '--max-suite-cost', cap, ...adapterArgs()];
    const first = await vncua(args('0.03'), env);
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(1);
    expect(first.stdout).toContain("eval: the suite's cost cap was reached ($0.036 of $0.03): 2 runs not started");
    const runDir = (id: string) => join(out, 'http', '1280_800', id);
    expect(await readResult(runDir('spend-a'))).toMatchObject({ status: 'cost_cap', steps: 3, model_calls: 3, error: { code: 'EVAL_ERR_SUITE_COST_CAP' } });
    expect(asked.get('SPEND b')).toBeUndefined();
    expect(asked.get('SPEND c')).toBeUndefined();
    // Again with $0.06: spend-a is done ($0.036 counted), spend-b reaches the cap at its second plan, spend-c does not start.
    const second = await vncua(args('0.06'), env);
    expect(second.code, `${second.stdout}\n${second.stderr}`).toBe(1);
    expect(second.stdout).toContain("eval: the suite's cost cap was reached ($0.06 of $0.06): 1 run not started");
    expect(await readResult(runDir('spend-b'))).toMatchObject({ status: 'cost_cap', steps: 2, model_calls: 2, error: { code: 'EVAL_ERR_SUITE_COST_CAP' } });
    expect(asked.get('SPEND b')).toBe(2);
    expect(asked.get('SPEND c')).toBeUndefined();
  }, 600_000);
});
