/**
 * runSuite with repeats and reruns on real desktops (Xvnc + Chromium, the local provider), with the
 * tiny agent that clicks the middle of the screen and finishes:
 * - --repeat 3 over a task that always succeeds, one that never does, and one whose page succeeds on
 *   the second click only (a counter kept by the test's HTTP server): one directory per repeat, the
 *   flaky list and pass@1 / pass@3 / pass^3 exactly;
 * - running again skips every finished repeat; --repeat 1 on the same results is EVAL_ERR_LAYOUT_MIXED
 *   with nothing touched;
 * - --rerun moves a finished run aside to <dir>~1 (kept byte for byte, not scored) and runs it again;
 * - an --out that is a file, or under /proc: a coded error before anything starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentContext } from '../harness/agent/context.ts';
import { isVncuaError } from '../harness/errors.ts';
import type { ProgressEvent } from './progress.ts';
import { runSuite } from './runner.ts';
import { writeScores } from './score.ts';
import type { EvalTask } from './tasks.ts';
import { ClickAgent } from './test-fixtures/click-agent.ts';
import { serveTestPages, type TestPages } from './test-fixtures/pages.ts';

let pages: TestPages;
let root: string;
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

beforeAll(async () => {
  pages = await serveTestPages();
  root = await mkdtemp(join(tmpdir(), 'vncua-eval-repeat-'));
});
afterAll(async () => {
  await pages?.close();
  await rm(root, { recursive: true, force: true });
});

function clicker() {
  const contexts: AgentContext[] = [];
  return { contexts, agent: { name: 'clicker', build: (ctx: AgentContext) => (contexts.push(ctx), new ClickAgent(ctx.agentOptions)) } };
}

/** Every file under `dir` with its size and mtime: what "nothing touched" compares. */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const s = await stat(join(dir, name));
    out.push(`${name} ${s.isFile() ? s.size : 'dir'} ${s.mtimeMs}`);
  }
  return out;
}

describe('--repeat 3', () => {
  let out: string;
  let tasks: EvalTask[];
  const d = (id: string, n: number) => join(out, 'clicker', '1280_800', id, String(n));

  beforeAll(() => {
    out = join(root, 'repeat');
    tasks = [
      { id: 'ok-1', goal: 'Click the button', url: `${pages.url}ok/a.html`, success: { sentinel: '>code#1<' }, group: 'ok' },
      { id: 'never-1', goal: 'Click the button', url: `${pages.url}never/b.html`, success: { sentinel: '>code#1<' }, group: 'never' },
      { id: 'flaky-1', goal: 'Click the button', url: `${pages.url}flaky/f.html?succeed=2`, success: { sentinel: '>code#1<' }, group: 'flaky' },
    ];
  });

  it('runs every task 3 times into <task id>/<n>/; the scores give the flaky task and pass@k exactly', async () => {
    const { agent, contexts } = clicker();
    const events: ProgressEvent[] = [];
    // One worker: the flaky page's clicks come in repeat order.
    const summary = await runSuite({ out, tasks, agent, repeat: 3, workers: 1, maxSteps: 5, onProgress: (e) => events.push(e) });
    expect([summary.total, summary.ran, summary.skipped, summary.successes, summary.infraErrors]).toEqual([9, 9, 0, 4, 0]);
    expect(summary.outcomes.map((o) => `${o.taskId}#${o.repeat}`)).toEqual([
      'ok-1#1',
      'ok-1#2',
      'ok-1#3',
      'never-1#1',
      'never-1#2',
      'never-1#3',
      'flaky-1#1',
      'flaky-1#2',
      'flaky-1#3',
    ]);
    expect(events.filter((e) => e.type === 'done').map((e) => (e as { job: string }).job)).toContain('flaky-1@1280x800#2');
    expect(pages.clicks('f')).toBe(3);
    expect(contexts.map((c) => c.outputDir)).toEqual(tasks.flatMap((t) => [1, 2, 3].map((n) => d(t.id, n))));
    for (const t of tasks) {
      expect((await readdir(join(out, 'clicker', '1280_800', t.id))).sort()).toEqual(['1', '2', '3']);
      for (const n of [1, 2, 3]) {
        expect(json(join(d(t.id, n), 'task.json'))).toMatchObject({ id: t.id, repeat: n, repeats: 3, attempt: 1, status: 'finished' });
        expect(json(join(d(t.id, n), 'result.json')).status).toBe('finished');
      }
    }
    expect(json(join(d('flaky-1', 2), 'execution.json'))[0].task_marked_complete).toBe(true);

    const { report } = await writeScores(out);
    expect(report.flaky).toEqual([{ agent: 'clicker', resolution: '1280x800', task_id: 'flaky-1', group: 'flaky', succeeded: [2], failed: [1, 3], not_counted: [] }]);
    const a = report.by_agent[0]!;
    expect([a.runs, a.successes, a.tasks, a.k, a.tasks_short]).toEqual([9, 4, 3, 3, 0]);
    expect(a.pass_at_1).toBeCloseTo((1 + 0 + 1 / 3) / 3, 12);
    expect(a.pass_at_k).toBeCloseTo(2 / 3, 12);
    expect(a.pass_hat_k).toBeCloseTo(1 / 3, 12);
  });

  it('again: every finished repeat is skipped; --repeat 1 on these results is EVAL_ERR_LAYOUT_MIXED, nothing touched', async () => {
    const again = clicker();
    const s = await runSuite({ out, tasks, agent: again.agent, repeat: 3 });
    expect([s.skipped, s.ran, again.contexts.length]).toEqual([9, 0, 0]);

    const before = await listing(out);
    const single = clicker();
    const err = await runSuite({ out, tasks, agent: single.agent }).catch((e: unknown) => e);
    expect(isVncuaError(err, 'EVAL_ERR_LAYOUT_MIXED')).toBe(true);
    expect((err as { details: { dirs: unknown[] } }).details.dirs).toHaveLength(3);
    expect(single.contexts).toHaveLength(0);
    expect(await listing(out)).toEqual(before);
  });
});

describe('--rerun and a bad out', () => {
  it('--rerun moves the finished run aside to <dir>~1, kept byte for byte and not scored, and runs it again', async () => {
    const out = join(root, 'rerun');
    const tasks: EvalTask[] = [{ id: 'ok-1', goal: 'Click the button', url: `${pages.url}ok/a.html`, success: { sentinel: '>code#1<' }, group: 'ok' }];
    const first = await runSuite({ out, tasks, agent: clicker().agent, maxSteps: 5 });
    expect(first.ran).toBe(1);
    const dir = join(out, 'clicker', '1280_800', 'ok-1');
    const old = await readFile(join(dir, 'execution.json'));
    const oldRecording = await readdir(join(dir, 'recording'));

    const rerun = await runSuite({ out, tasks, agent: clicker().agent, maxSteps: 5, rerun: true });
    expect(rerun.outcomes[0]).toMatchObject({ status: 'finished', movedAside: `${dir}~1` });
    expect(await readFile(join(`${dir}~1`, 'execution.json'))).toEqual(old);
    expect(await readdir(join(`${dir}~1`, 'recording'))).toEqual(oldRecording);
    expect(json(join(dir, 'result.json')).status).toBe('finished');
    expect(json(join(dir, 'task.json')).started_at).toBeGreaterThan(json(join(`${dir}~1`, 'task.json')).started_at);
    const { report } = await writeScores(out);
    expect(report.runs.map((r) => r.dir)).toEqual(['clicker/1280_800/ok-1']);
  });

  it("an out that is a file, or under /proc, or one run's own directory: a coded error before anything starts", async () => {
    const tasks: EvalTask[] = [{ id: 'ok-1', goal: 'x', url: `${pages.url}ok/a.html`, success: { sentinel: '>code#1<' }, group: 'ok' }];
    const file = join(root, 'a-file');
    await writeFile(file, 'keep');
    const runHere = join(root, 'one-run');
    await rm(runHere, { recursive: true, force: true });
    await mkdir(runHere);
    await writeFile(join(runHere, 'result.json'), '{"status":"finished","steps":0,"durationMs":1}');
    const cases: Array<[string, string]> = [
      [file, 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      [join(file, 'sub'), 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      ['/proc/vncua-test/out', 'OUTPUT_ERR_PSEUDO_FS'],
      [runHere, 'OUTPUT_ERR_RUN_EXISTS'],
    ];
    for (const [out, code] of cases) {
      const { agent, contexts } = clicker();
      const err = await runSuite({ out, tasks, agent }).catch((e: unknown) => e);
      expect(isVncuaError(err) ? err.code : err, out).toBe(code);
      expect(contexts).toHaveLength(0);
    }
    expect(readFileSync(file, 'utf8')).toBe('keep');
    expect(await readdir(runHere)).toEqual(['result.json']);
    expect(existsSync('/proc/vncua-test')).toBe(false);
  }, 20_000);
});
