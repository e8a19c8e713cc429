/**
 * Nothing scored that could not be read: a corrupt execution.json, one that fails the schema (with
 * task_marked_complete true, which must not count as a success), a result.json that cannot be read,
 * is not JSON or fails its schema, a task.json that is not JSON, and a directory holding both a run
 * and numbered repeats. Each is `invalid`, listed with its reason in scores.json / .md / .html and
 * excluded from every rate; a readable run beside them is scored as usual.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TraceWriter } from '../harness/trace/writer.ts';
import { writeScores, type ScoreReport } from './score.ts';

const AGENT = 'alpha';
const entry = (tmc: boolean, extra: Record<string, unknown> = {}) => ({
  index: 0,
  action: 'mouse_click',
  params: { position: { x: 10, y: 20 }, button: 'left', click_type: 'single' },
  task_marked_complete: tmc,
  started_at: 1_700_000_000_000,
  ended_at: 1_700_000_000_050,
  duration_ms: 50,
  ...extra,
});

/** Build a run directory: each file's text as given (null: not written). */
async function runDir(root: string, id: string, files: Record<string, string | null>): Promise<string> {
  const dir = join(root, AGENT, '1280_800', id);
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) if (text !== null) await writeFile(join(dir, name), text);
  return dir;
}

const okResult = JSON.stringify({ status: 'finished', steps: 1, durationMs: 100 });
const task = (id: string) => JSON.stringify({ id, agent: AGENT, resolution: '1280x800', group: 'g', repeat: 1, repeats: 1 });

describe('invalid runs', () => {
  let root: string;
  let report: ScoreReport;
  let md: string;
  let html: string;
  let json: ScoreReport;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-invalid-'));
    // A readable run that succeeded, written by the real writer.
    const good = join(root, AGENT, '1280_800', 'good-1');
    const w = new TraceWriter(good);
    await w.open();
    const { index: _i, duration_ms: _d, ...input } = entry(true);
    await w.append(input as never);
    await w.finalize();
    await w.writeResult({ status: 'finished', steps: 1, durationMs: 100 });
    await writeFile(join(good, 'task.json'), task('good-1'));

    await runDir(root, 'corrupt-1', { 'execution.json': `[${JSON.stringify(entry(true)).slice(0, 40)}`, 'result.json': okResult, 'task.json': task('corrupt-1') });
    await runDir(root, 'schema-1', {
      'execution.json': JSON.stringify([entry(true, { params: { position: 'the middle' } })]),
      'result.json': okResult,
      'task.json': task('schema-1'),
    });
    const unreadable = await runDir(root, 'unreadable-1', { 'execution.json': JSON.stringify([entry(true)]), 'task.json': task('unreadable-1') });
    await mkdir(join(unreadable, 'result.json')); // readFile: EISDIR, whoever runs the test (root included)
    await runDir(root, 'notjson-1', { 'execution.json': JSON.stringify([entry(true)]), 'result.json': '{"status": "finish', 'task.json': task('notjson-1') });
    await runDir(root, 'badresult-1', {
      'execution.json': JSON.stringify([entry(true)]),
      'result.json': JSON.stringify({ status: 'done', steps: 1, durationMs: 1 }),
      'task.json': task('badresult-1'),
    });
    await runDir(root, 'badtask-1', { 'execution.json': JSON.stringify([entry(true)]), 'result.json': okResult, 'task.json': '{"id": ' });
    const mixed = await runDir(root, 'mixed-1', { 'execution.json': JSON.stringify([entry(true)]), 'result.json': okResult, 'task.json': task('mixed-1') });
    await mkdir(join(mixed, '2'));
    await writeFile(join(mixed, '2', 'result.json'), okResult);

    ({ report } = await writeScores(root));
    md = await readFile(join(root, 'scores.md'), 'utf8');
    html = await readFile(join(root, 'scores.html'), 'utf8');
    json = JSON.parse(await readFile(join(root, 'scores.json'), 'utf8')) as ScoreReport;
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const dir = (id: string) => `${AGENT}/1280_800/${id}`;

  it('each unreadable run is invalid with its code and the file at fault; the readable one is scored', () => {
    expect(report.invalid.map((e) => [e.task_id, e.reason.code, e.reason.file])).toEqual([
      ['badresult-1', 'TRACE_ERR_INVALID', `${dir('badresult-1')}/result.json`],
      // task.json not JSON: the task id comes from the layout.
      ['badtask-1', 'TRACE_ERR_INVALID', `${dir('badtask-1')}/task.json`],
      ['corrupt-1', 'TRACE_ERR_INVALID', `${dir('corrupt-1')}/execution.json`],
      ['mixed-1', 'EVAL_ERR_LAYOUT_MIXED', dir('mixed-1')],
      ['notjson-1', 'TRACE_ERR_INVALID', `${dir('notjson-1')}/result.json`],
      ['schema-1', 'TRACE_ERR_INVALID', `${dir('schema-1')}/execution.json`],
      ['unreadable-1', 'TRACE_ERR_INVALID', `${dir('unreadable-1')}/result.json`],
    ]);
    const reason = (id: string) => report.runs.find((r) => r.dir === dir(id))!.invalid!.message;
    expect(reason('corrupt-1')).toContain('not valid JSON');
    expect(reason('schema-1')).toContain('params.position');
    expect(reason('unreadable-1')).toContain('EISDIR');
    expect(reason('badresult-1')).toContain('"status"');
    // Not scored at all: no success (every one of them has a step marked complete), no steps.
    for (const r of report.runs.filter((x) => x.invalid)) expect([r.status, r.success, r.steps_performed, r.infra_error], r.dir).toEqual(['invalid', false, 0, false]);
    expect(report.runs.find((r) => r.task_id === 'good-1')).toMatchObject({ invalid: null, success: true, status: 'finished' });
  });

  it('invalid runs are excluded from every rate (a schema-failing trace marked complete is no success) and counted apart', () => {
    expect(report.by_agent).toHaveLength(1);
    expect(report.by_agent[0]).toMatchObject({ runs: 1, successes: 1, success_rate: 1, invalid: 7, infra_errors: 0, tasks: 8, pass_at_1: 1, tasks_short: 7 });
    expect(json.invalid).toEqual(report.invalid);
  });

  it('scores.md and scores.html list every invalid run with its reason', () => {
    const section = md.slice(md.indexOf('## Invalid runs'));
    const html_ = html.slice(html.indexOf('<h2>Invalid runs</h2>'));
    expect(report.invalid).toHaveLength(7);
    for (const e of report.invalid) {
      expect(section, e.dir).toContain(`| ${e.dir} | ${e.reason.code}: `);
      expect(html_, e.dir).toContain(`<code>${e.dir}</code>`);
    }
    expect(md).toMatch(/\| alpha \| 1 \| 100\.0% \(1\) \|.*\| 7 \|/);
  });
});
