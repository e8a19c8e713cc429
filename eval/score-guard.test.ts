/**
 * DOMAIN_BLOCKED in `vncua score`: result.json's domain_blocked per run (null without a guard), summed per agent
 * with the number of runs that had a block, and the DOMAIN_BLOCKED column of scores.md / scores.html (shown only
 * when some run had a guard). Runs written with the real TraceWriter.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../harness/trace/schema.ts';
import { TraceWriter } from '../harness/trace/writer.ts';
import { writeScores, type ScoreReport } from './score.ts';

describe('DOMAIN_BLOCKED in scores', () => {
  let root: string;
  let report: ScoreReport;

  async function run(agent: string, id: string, result: RunResult, blocked: unknown[] = []): Promise<void> {
    const w = new TraceWriter(join(root, agent, '1280_800', id));
    await w.open();
    const t = 1_700_000_000_000;
    await w.append({
      action: 'mouse_click',
      params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' },
      task_marked_complete: false,
      started_at: t,
      ended_at: t + 10,
      ...(blocked.length ? { meta: { domain_blocked: blocked } } : {}),
    });
    await w.finalize();
    await w.writeResult(result);
  }
  const done: RunResult = { status: 'max_steps', steps: 1, durationMs: 100 };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-guard-'));
    const b = (url: string) => ({ url, rule: 'blockedDomains: evil.com', step: 1, resource_type: 'Document', at: 1 });
    await run('guarded', 't-1', { ...done, domain_blocked: 2 }, [b('https://evil.com/a'), b('https://evil.com/b')]);
    await run('guarded', 't-2', { ...done, domain_blocked: 0 });
    await run('guarded', 't-3', { ...done, domain_blocked: 1 }, [b('https://evil.com/c')]);
    await run('free', 't-1', done);
    ({ report } = await writeScores(root));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('per run: result.json domain_blocked, null without a guard; per agent: the sum and the runs with a block', () => {
    expect(Object.fromEntries(report.runs.map((r) => [`${r.agent}/${r.task_id}`, r.domain_blocked]))).toEqual({
      'guarded/t-1': 2,
      'guarded/t-2': 0,
      'guarded/t-3': 1,
      'free/t-1': null,
    });
    const by = Object.fromEntries(report.by_agent.map((a) => [a.agent, [a.domain_blocked, a.domain_blocked_runs]]));
    expect(by).toEqual({ guarded: [3, 2], free: [null, 0] });
  });

  it('scores.md and scores.html show the DOMAIN_BLOCKED column', async () => {
    const md = await readFile(join(root, 'scores.md'), 'utf8');
    expect(md).toContain('DOMAIN_BLOCKED (runs)');
    expect(md).toMatch(/\| guarded \|.*\| 3 \(2\) \|/);
    expect(md).toMatch(/\| free \|.*\| – \|/);
    const html = await readFile(join(root, 'scores.html'), 'utf8');
    expect(html).toContain('<th>DOMAIN_BLOCKED (runs)</th>');
    expect(html).toContain('DOMAIN_BLOCKED 2');
  });
});
