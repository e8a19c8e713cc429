/**
 * runSuite on real desktops (Xvnc + Chromium, the local provider unless said otherwise), with a tiny
 * agent that clicks the middle of the screen and finishes:
 * - 3 tasks x 2 resolutions on 2 workers: directories, task.json, results, the agent's context, scores;
 * - skipping finished runs, clearing a partial one, --rerun;
 * - infra failures: a desktop that cannot start (retried, then infra_error); Chromium killed mid-task
 *   (retried, then success); task pages that never load (a dead server, a 404: PAGE_ERR_*, retried,
 *   then infra_error, no act() ever);
 * - a configuration error (MODEL_ERR_AUTH) stops the suite: no run left on disk, none started after;
 * - cancelling through the signal: the running task's directory is removed, its desktop is gone;
 * - the remote provider: two tasks one after the other on one given desktop, navigated over CDP.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentContext } from '../harness/agent/context.ts';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { VncuaError } from '../harness/errors.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { groupMembers, isAlive } from '../harness/desktop/procs.ts';
import { isInfraErrorCode } from './infra.ts';
import type { ProgressEvent, ProgressSnapshot } from './progress.ts';
import { localProvider } from './providers/local.ts';
import type { DesktopProvider } from './providers/types.ts';
import { runSuite, type RunSuiteOptions } from './runner.ts';
import { writeScores } from './score.ts';
import type { EvalTask } from './tasks.ts';
import { ClickAgent, type ClickAgentExtra } from './test-fixtures/click-agent.ts';
import { serveTestPages } from './test-fixtures/pages.ts';

const R1280 = { width: 1280, height: 800 };
const R800 = { width: 800, height: 600 };

let pages: { url: string; close(): Promise<void> };
let root: string;
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

beforeAll(async () => {
  pages = await serveTestPages();
  root = await mkdtemp(join(tmpdir(), 'vncua-eval-'));
});
afterAll(async () => {
  await pages?.close();
  await rm(root, { recursive: true, force: true });
});

function tasks(): EvalTask[] {
  return [
    { id: 'ok-1', goal: 'Click the button', url: `${pages.url}ok/a.html`, success: { sentinel: '>code#1<' }, group: 'ok' },
    { id: 'ok-2', goal: 'Click the button again', url: `${pages.url}ok/b.html`, success: { expression: "document.getElementById('r').textContent === 'code#1'" }, group: 'ok' },
    { id: 'never-1', goal: 'Click a button that does nothing', url: `${pages.url}never/c.html`, success: { sentinel: '>code#1<' }, group: 'never' },
  ];
}

/** An agent spec that builds ClickAgents and keeps every context it was given. */
function clicker(extra: (ctx: AgentContext) => ClickAgentExtra = () => ({})) {
  const contexts: AgentContext[] = [];
  return { contexts, agent: { name: 'clicker', build: (ctx: AgentContext) => (contexts.push(ctx), new ClickAgent(ctx.agentOptions, extra(ctx))) } };
}

/** Events and the most workers busy at once. */
function recorder() {
  const events: ProgressEvent[] = [];
  let maxBusy = 0;
  return {
    events,
    maxBusy: () => maxBusy,
    onProgress: (e: ProgressEvent, s: ProgressSnapshot) => {
      events.push(e);
      maxBusy = Math.max(maxBusy, s.workers.filter((w) => w.state !== 'idle' && w.state !== 'done').length);
    },
  };
}

describe('runSuite on local desktops', () => {
  // Each test has its own results root: none reads what another one wrote.
  let out: string;
  const base = (): Pick<RunSuiteOptions, 'out' | 'taskFile' | 'maxSteps'> => ({ out, taskFile: '/suite/tasks.json', maxSteps: 5 });
  const dir = (id: string, r: { width: number; height: number }) => join(out, 'clicker', `${r.width}_${r.height}`, id);

  it('runs 3 tasks at 2 resolutions on 2 workers: one directory each, with task.json, the trace, the result and scores', async () => {
    out = join(root, 'suite');
    const { agent, contexts } = clicker();
    const progress = recorder();
    const summary = await runSuite({ ...base(), tasks: tasks(), agent, resolutions: [R1280, R800], workers: 2, onProgress: progress.onProgress });
    expect([summary.total, summary.ran, summary.skipped, summary.successes, summary.infraErrors, summary.cancelled]).toEqual([6, 6, 0, 4, 0, false]);
    expect(progress.maxBusy()).toBe(2);
    expect(progress.events.filter((e) => e.type === 'done').length).toBe(6);
    expect(readdirSync(join(out, 'clicker')).sort()).toEqual(['1280_800', '800_600']);
    for (const r of [R1280, R800]) {
      expect(readdirSync(join(out, 'clicker', `${r.width}_${r.height}`)).sort()).toEqual(['never-1', 'ok-1', 'ok-2']);
      for (const t of tasks()) {
        const d = dir(t.id, r);
        const task = json(join(d, 'task.json'));
        expect(task).toMatchObject({
          id: t.id,
          goal: t.goal,
          url: t.url,
          success: t.success,
          group: t.group,
          agent: 'clicker',
          resolution: `${r.width}x${r.height}`,
          attempt: 1,
          infra_errors: [],
          status: 'finished',
          task_file: '/suite/tasks.json',
        });
        expect(task.desktop).toMatchObject({ provider: 'local' });
        expect(task.started_at).toBeGreaterThan(1.6e12);
        expect(json(join(d, 'result.json'))).toMatchObject({ status: 'finished', steps: 2 });
        const trace = json(join(d, 'execution.json'));
        expect(trace.map((e: { action: string }) => e.action)).toEqual(['mouse_click', 'finish']);
        // The desktop had the run's size: the agent clicked its centre.
        expect(trace[0].params.position).toEqual({ x: r.width / 2, y: r.height / 2 });
        expect(trace[0].task_marked_complete).toBe(t.group === 'ok');
        expect(existsSync(join(d, 'recording', 'recording.json'))).toBe(true);
      }
    }
    // The context each agent was built with.
    const ctx = contexts.find((c) => c.taskId === 'ok-2' && c.resolution?.width === 800)!;
    expect(ctx).toMatchObject({ task: 'Click the button again', taskFile: '/suite/tasks.json', url: tasks()[1]!.url, maxSteps: 5, resolution: R800, outputDir: dir('ok-2', R800) });
    expect(ctx.agentOptions).toMatchObject({
      task: 'Click the button again',
      outputDir: dir('ok-2', R800),
      successCheck: tasks()[1]!.success,
      vncUrl: ctx.vncUrl,
      cdpUrl: ctx.cdpUrl,
    });
    expect(new Set(contexts.map((c) => c.cdpUrl)).size).toBe(6);

    const { report } = await writeScores(out);
    expect(report.by_resolution.map((a) => [a.agent, a.resolution, a.runs, a.successes, a.proper_stops])).toEqual([
      ['clicker', '800x600', 3, 2, 2],
      ['clicker', '1280x800', 3, 2, 2],
    ]);
    expect(report.by_group.filter((g) => g.resolution === '800x600').map((g) => [g.group, g.success_rate])).toEqual([
      ['never', 0],
      ['ok', 1],
    ]);
  });

  it('skips finished runs, clears and reruns a partial one, and --rerun runs finished ones again', async () => {
    out = join(root, 'suite-resume');
    const first = await runSuite({ ...base(), tasks: tasks(), agent: clicker().agent, resolutions: [R1280, R800], workers: 2 });
    expect([first.ran, first.skipped, first.infraErrors]).toEqual([6, 0, 0]);
    const before = readFileSync(join(dir('ok-1', R1280), 'result.json'), 'utf8');
    // A runner killed between the agent's result.json and its own last task.json write left a finished
    // run whose task.json has no end: the next run fills it in from result.json.
    const cut = join(dir('ok-2', R1280), 'task.json');
    const { ended_at: _end, status: _status, ...unended } = json(cut);
    await writeFile(cut, JSON.stringify(unended));
    const again = clicker();
    const skipped = await runSuite({ ...base(), tasks: tasks(), agent: again.agent, resolutions: [R1280, R800], workers: 2 });
    expect([skipped.skipped, skipped.ran, again.contexts.length]).toEqual([6, 0, 0]);
    expect(readFileSync(join(dir('ok-1', R1280), 'result.json'), 'utf8')).toBe(before);
    expect(json(cut)).toMatchObject({ ...unended, status: 'finished', ended_at: expect.any(Number) });

    // A run killed half-way leaves no result.json: it is cleared and run again, the others stay.
    const partial = dir('ok-2', R800);
    await unlink(join(partial, 'result.json'));
    await writeFile(join(partial, 'partial_execution.json'), '[]');
    const resumed = clicker();
    const r2 = await runSuite({ ...base(), tasks: tasks(), agent: resumed.agent, resolutions: [R1280, R800], workers: 2 });
    expect([r2.skipped, r2.ran, resumed.contexts.map((c) => `${c.taskId}@${c.resolution?.width}`)]).toEqual([5, 1, ['ok-2@800']]);
    expect(existsSync(join(partial, 'partial_execution.json'))).toBe(false);
    expect(json(join(partial, 'result.json')).status).toBe('finished');

    const startedBefore = json(join(dir('never-1', R800), 'task.json')).started_at;
    const rerun = clicker();
    const r3 = await runSuite({ ...base(), tasks: tasks().filter((t) => t.id === 'never-1'), agent: rerun.agent, resolutions: [R800], rerun: true });
    expect([r3.ran, r3.skipped, rerun.contexts.length]).toEqual([1, 0, 1]);
    expect(json(join(dir('never-1', R800), 'task.json')).started_at).toBeGreaterThan(startedBefore);
  });
});

describe('infra failures', () => {
  it('a desktop that cannot start is retried, then the run is infra_error (never built, listed apart in scores)', async () => {
    const out = join(root, 'no-desktop');
    const { agent, contexts } = clicker();
    const progress = recorder();
    // A "browser" that exits at once: the desktop's start script reports DESKTOP_ERR_START_FAILED.
    const provider = localProvider({ launch: { env: { VNCUA_CHROMIUM: '/bin/false' } } });
    const summary = await runSuite({ out, tasks: tasks().slice(0, 1), agent, provider, retries: 2, onProgress: progress.onProgress });
    expect([summary.ran, summary.infraErrors, summary.successes, contexts.length]).toEqual([1, 1, 0, 0]);
    expect(progress.events.filter((e) => e.type === 'retry').length).toBe(2);
    const d = join(out, 'clicker', '1280_800', 'ok-1');
    const result = json(join(d, 'result.json'));
    expect(result.status).toBe('infra_error');
    expect(result.error.code).toBe('DESKTOP_ERR_START_FAILED');
    const task = json(join(d, 'task.json'));
    expect(task.attempt).toBe(3);
    expect(task.infra_errors.map((e: { attempt: number; code: string }) => [e.attempt, e.code])).toEqual([
      [1, 'DESKTOP_ERR_START_FAILED'],
      [2, 'DESKTOP_ERR_START_FAILED'],
      [3, 'DESKTOP_ERR_START_FAILED'],
    ]);
    const { report } = await writeScores(out);
    expect(report.by_agent[0]).toMatchObject({ runs: 0, infra_errors: 1, success_rate: null });
    expect(report.infra_errors.map((e) => e.task_id)).toEqual(['ok-1']);
  });

  it('Chromium killed in the middle of a task: the attempt is an infra failure, the retry succeeds', async () => {
    const out = join(root, 'chromium-crash');
    const local = localProvider();
    const desktopPid = new Map<string, number>();
    const provider: DesktopProvider = {
      name: 'local',
      async acquire(req) {
        const d = await local.acquire(req);
        desktopPid.set(d.cdpUrl, d.info.pid as number);
        return d;
      },
    };
    let killed = 0;
    const { agent, contexts } = clicker((ctx) => ({
      beforeClick: async () => {
        if (contexts.length !== 1) return;
        // The browser process: the Chromium of the desktop (not one of its --type= helpers).
        const pid = desktopPid.get(ctx.cdpUrl)!;
        const browser = groupMembers(pid).find((p) => {
          const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
          return argv[0]!.endsWith('chromium') && !argv.some((a) => a.startsWith('--type='));
        });
        expect(browser).toBeDefined();
        process.kill(browser!, 'SIGKILL');
        killed++;
        await new Promise((r) => setTimeout(r, 300));
      },
    }));
    const summary = await runSuite({ out, tasks: tasks().slice(0, 1), agent, provider, retries: 2 });
    expect(killed).toBe(1);
    expect(contexts.length).toBe(2);
    expect([summary.ran, summary.successes, summary.infraErrors]).toEqual([1, 1, 0]);
    const d = join(out, 'clicker', '1280_800', 'ok-1');
    const task = json(join(d, 'task.json'));
    expect(task.attempt).toBe(2);
    expect(task.infra_errors).toHaveLength(1);
    expect(task.infra_errors[0].attempt).toBe(1);
    expect(isInfraErrorCode(task.infra_errors[0].code)).toBe(true);
    expect(json(join(d, 'result.json')).status).toBe('finished');
    // Both desktops are gone.
    for (const pid of desktopPid.values()) expect(isAlive(pid)).toBe(false);
  });
});

describe('task pages that never load', () => {
  it('a dead task server and a 404 are infra errors naming the URL and the cause: retried, no act() ever, listed apart in scores', async () => {
    const out = join(root, 'dead-pages');
    let acted = 0;
    const { agent, contexts } = clicker(() => ({ beforeClick: () => void acted++ }));
    const progress = recorder();
    const refused = `http://127.0.0.1:${await closedPort()}/task.html`;
    const missing = `${pages.url}no/such-page.html`;
    const dead: EvalTask[] = [
      { id: 'dead-1', goal: 'Click', url: refused, success: { sentinel: '>code#1<' }, group: 'dead' },
      { id: 'missing-1', goal: 'Click', url: missing, success: { sentinel: '>code#1<' }, group: 'dead' },
    ];
    const summary = await runSuite({ out, tasks: dead, agent, retries: 1, workers: 2, onProgress: progress.onProgress });
    expect([summary.ran, summary.infraErrors, summary.successes]).toEqual([2, 2, 0]);
    // Each attempt's agent was built and connected while the page loaded, but never acted.
    expect([contexts.length, acted]).toEqual([4, 0]);
    expect(progress.events.filter((e) => e.type === 'retry').length).toBe(2);
    const expected = { 'dead-1': ['PAGE_ERR_UNREACHABLE', refused], 'missing-1': ['PAGE_ERR_HTTP_STATUS', missing] } as const;
    for (const [id, [code, url]] of Object.entries(expected)) {
      const d = join(out, 'clicker', '1280_800', id);
      const result = json(join(d, 'result.json'));
      expect([result.status, result.error.code]).toEqual(['infra_error', code]);
      expect(result.error.message).toContain(url);
      const infra = json(join(d, 'task.json')).infra_errors;
      expect(infra.map((e: { attempt: number; code: string }) => [e.attempt, e.code])).toEqual([
        [1, code],
        [2, code],
      ]);
      expect(infra[0].agent_result).toMatchObject({ status: 'error', steps: 0, error: { code } });
      // The progress line gets the code and the cause.
      const done = progress.events.find((e) => e.type === 'done' && e.job === `${id}@1280x800`);
      expect(done).toMatchObject({ status: 'infra_error', error: { code } });
    }
    expect(json(join(out, 'clicker', '1280_800', 'missing-1', 'result.json')).error.message).toContain('HTTP 404');
    const { report } = await writeScores(out);
    expect(report.by_agent[0]).toMatchObject({ runs: 0, infra_errors: 2, success_rate: null });
    expect(report.infra_errors.map((e) => [e.task_id, e.error?.code])).toEqual([
      ['dead-1', 'PAGE_ERR_UNREACHABLE'],
      ['missing-1', 'PAGE_ERR_HTTP_STATUS'],
    ]);
  });
});

describe('a configuration error', () => {
  it('MODEL_ERR_AUTH stops the suite: the running runs are cancelled and removed, no other run starts', async () => {
    const out = join(root, 'config-error');
    const started: string[] = [];
    const { agent, contexts } = clicker((ctx) => {
      started.push(ctx.taskId!);
      if (ctx.taskId === 'ok-1') {
        return {
          beforeClick: async () => {
            // Fail once the other worker's agent is running too.
            const until = Date.now() + 60_000;
            while (!existsSync(join(out, 'clicker', '1280_800', 'ok-2', 'partial_execution.json')) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
            throw new VncuaError('MODEL_ERR_AUTH', 'The model API refused the credentials (HTTP 401).');
          },
        };
      }
      return { waitMs: 30_000 };
    });
    const progress = recorder();
    const summary = await runSuite({ out, tasks: tasks(), agent, workers: 2, retries: 2, onProgress: progress.onProgress });
    expect(summary.configError).toEqual({ code: 'MODEL_ERR_AUTH', message: 'The model API refused the credentials (HTTP 401).', job: 'ok-1@1280x800' });
    expect([summary.cancelled, summary.ran, summary.outcomes.length]).toEqual([false, 0, 0]);
    expect(started.sort()).toEqual(['ok-1', 'ok-2']);
    expect(contexts).toHaveLength(2);
    // Nothing half-written: neither run's directory is left, and never-1 never started.
    for (const id of ['ok-1', 'ok-2', 'never-1']) expect(existsSync(join(out, 'clicker', '1280_800', id))).toBe(false);
    expect(progress.events.at(-1)).toEqual({ type: 'end', cancelled: false, configError: summary.configError });
  });
});

describe('cancelling', () => {
  it('the signal stops the suite: the running task is cancelled, its directory removed, its desktop torn down', async () => {
    const out = join(root, 'cancel');
    const local = localProvider();
    const pids: number[] = [];
    const provider: DesktopProvider = {
      name: 'local',
      async acquire(req) {
        const d = await local.acquire(req);
        pids.push(d.info.pid as number);
        return d;
      },
    };
    const ac = new AbortController();
    const { agent } = clicker(() => ({ waitMs: 20_000 }));
    const summary = await runSuite({
      out,
      tasks: tasks(),
      agent,
      provider,
      signal: ac.signal,
      onProgress: (e, s) => {
        if (e.type === 'worker' && s.workers[0]!.state === 'running agent') setTimeout(() => ac.abort(), 500);
      },
    });
    expect([summary.cancelled, summary.ran, pids.length]).toEqual([true, 0, 1]);
    expect(isAlive(pids[0]!)).toBe(false);
    expect(existsSync(join(out, 'clicker', '1280_800', 'ok-1'))).toBe(false);
    expect(existsSync(join(out, 'clicker', '1280_800', 'ok-2'))).toBe(false);
  });
});

describe('remote provider', () => {
  it('runs tasks one at a time on a given desktop (with a VNC password), navigating its browser to each task', async () => {
    const desktop = await launchDesktop({ size: R800, timeoutMs: 45_000, password: 'remote12' });
    try {
      const out = join(root, 'remote');
      const { agent, contexts } = clicker();
      const progress = recorder();
      const summary = await runSuite({
        out,
        tasks: [tasks()[0]!, tasks()[2]!],
        agent,
        provider: 'remote',
        endpoints: [{ vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, size: R800, password: 'remote12' }],
        resolutions: [R800],
        workers: 4,
        onProgress: progress.onProgress,
      });
      expect([summary.ran, summary.successes, summary.infraErrors]).toEqual([2, 1, 0]);
      expect(progress.maxBusy()).toBe(1);
      expect(contexts.map((c) => c.vncUrl)).toEqual([desktop.vncUrl, desktop.vncUrl]);
      const trace = json(join(out, 'clicker', '800_600', 'ok-1', 'execution.json'));
      expect(trace[0].task_marked_complete).toBe(true);
      expect(json(join(out, 'clicker', '800_600', 'never-1', 'execution.json'))[0].task_marked_complete).toBe(false);
      expect(json(join(out, 'clicker', '800_600', 'ok-1', 'task.json')).desktop).toMatchObject({ provider: 'remote', endpoint: 0 });
      // The password reached the agent, and neither it nor the desktop's token reached task.json.
      expect(contexts.map((c) => c.agentOptions.password)).toEqual(['remote12', 'remote12']);
      const taskJson = readFileSync(join(out, 'clicker', '800_600', 'ok-1', 'task.json'), 'utf8');
      expect(taskJson).not.toContain(new URL(desktop.vncUrl).pathname.slice(1));
      expect(taskJson).not.toContain('remote12');
    } finally {
      await desktop.close();
    }
  });
});
