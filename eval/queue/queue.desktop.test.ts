/**
 * The queue end to end with real parts: a real redis-server (test-helpers.ts), a real coordinator
 * (`vncua eval --queue`) and three real `vncua worker` processes, each with real desktops.
 * - the basic suite (replay agent, as the README's demo): every run committed exactly once, the results
 *   tree and scores shaped as a local `vncua eval` of the same runs;
 * - kill -9 of a worker mid-run: its job runs elsewhere within the stall timeout, its half-written
 *   attempt is never scored and is swept;
 * - a Redis restart mid-suite: coordinator and workers carry on (with its data, and without: lost jobs re-added);
 * - a coordinator killed and started again with the same command: it resumes the suite, nothing runs twice;
 * - SIGTERM on a worker past its --grace: the run goes back to the queue (not an attempt), done elsewhere.
 * The last three use a click agent that waits (so runs can be caught in the middle) and logs each
 * attempt's start with its pid (eval/test-fixtures/click-agent.ts --log).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveTestPages, type TestPages } from '../test-fixtures/pages.ts';
import { QUEUE_DIR } from './manifest.ts';
import { stagingRoot } from './results-sink.ts';
import { type TestRedis, type VncuaChild, spawnVncua, startRedis, waitFor, runDirs } from './test-helpers.ts';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const BASIC = join(ROOT, 'eval/suites/basic/tasks.json');
const STALL_S = 6;
const SLOW_STALL_S = 30;

let redis: TestRedis;
let dir: string;
const children: VncuaChild[] = [];
/** This test's workers by --name (w1, w2, ...). */
const byName = new Map<string, VncuaChild>();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-queue-'));
});
afterEach(async () => {
  byName.clear();
  for (const c of children.splice(0)) await c.kill('SIGKILL');
  await redis?.close();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Start `n` workers (concurrency 1) and wait until each takes jobs. Their stall timeout is STALL_S where
 * a test kills one, else SLOW_STALL_S: on a loaded machine a live worker's lock renewal can be late by
 * seconds, and a test that counts runs must not see a live worker's run taken as stalled.
 */
async function startWorkers(n: number, extra: string[] = [], stallS = SLOW_STALL_S): Promise<VncuaChild[]> {
  const ws = Array.from({ length: n }, () => {
    const name = `w${byName.size + 1}`;
    const w = spawnVncua('worker', ['--queue', redis.url, '--concurrency', '1', '--stall-timeout', String(stallS), '--name', name, ...extra]);
    byName.set(name, w);
    return w;
  });
  children.push(...ws);
  for (const w of ws)
    await waitFor(
      () => w.output().includes('takes jobs'),
      60_000,
      'a worker did not start taking jobs',
      () => w.output(),
    );
  return ws;
}

/** All output, for failure messages. */
const everything = () => children.map((c, i) => `--- child ${i}\n${c.output()}`).join('\n');

/** `label` → how many times a worker log said it committed that run. */
function commits(workers: VncuaChild[]): Map<string, number> {
  const n = new Map<string, number>();
  for (const w of workers) for (const m of w.output().matchAll(/vncua worker: (\S+@\d+x\d+(?:#\d+)?): [a-z_]+(?: \(success\))?, committed/g)) n.set(m[1]!, (n.get(m[1]!) ?? 0) + 1);
  return n;
}

/** The click agent's log: one `start <task>@<W>x<H> <pid>` line per attempt. */
function starts(log: string): Array<{ label: string; pid: number }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [, label, pid] = l.split(' ');
      return { label: label!, pid: Number(pid) };
    });
}

/** Staging attempts under `out` that hold a running agent's trace: [job id, token]. */
function runningAttempts(out: string): Array<{ job: string; token: string }> {
  const root = stagingRoot(out);
  if (!existsSync(root)) return [];
  const found: Array<{ job: string; token: string }> = [];
  const dirs = (d: string) => {
    try {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name] : []));
    } catch {
      return []; // gone meanwhile
    }
  };
  for (const job of dirs(root)) for (const token of dirs(join(root, job))) if (existsSync(join(root, job, token, 'partial_execution.json'))) found.push({ job, token });
  return found;
}

describe('the basic suite on the queue, three workers', () => {
  it('runs every run exactly once, and scores it as a local vncua eval does', async () => {
    redis = await startRedis();
    const only = 'click-button,double-click-file,hover-menu,right-click-menu';
    const out = join(dir, 'basic-queue');
    const workers = [...(await startWorkers(2)), ...(await startWorkers(1, ['--pool', '1']))];
    // Run options that change results travel in the manifest: judges (the final page captured on the worker), a run cost cap.
    const judged = ['--judge', 'heuristic', '--judge', '{"type":"dom","selector":"body"}', '--max-cost', '5'];
    const coordinator = spawnVncua('eval', ['--queue', redis.url, '--tasks', BASIC, '--agent', 'replay', '--only', only, '--out', out, ...judged]);
    children.push(coordinator);
    const code = await Promise.race([coordinator.exited, new Promise((r) => setTimeout(() => r('timeout'), 300_000))]);
    expect(code, `the coordinator did not finish the suite in time (or failed):\n${everything()}`).toBe(0);
    const text = coordinator.output();
    expect(text).toContain(`workers from the queue at ${redis.url}`);
    expect(text).toMatch(/suite [0-9a-f]{16} on redis:\/\/127\.0\.0\.1:\d+\/0: 4 runs queued/);
    expect(text).toContain('4/4 done');

    // Every run once: committed once in all, each by one worker; all four runs on disk, nothing in .vncua-queue.
    const labels = only.split(',').map((id) => `${id}@1280x800`);
    const n = commits(workers);
    expect(Object.fromEntries(n), everything()).toEqual(Object.fromEntries(labels.map((l) => [l, 1])));
    expect(workers.filter((w) => /committed/.test(w.output())).length, 'more than one worker took jobs').toBeGreaterThan(1);
    expect(runDirs(out)).toEqual(labels.map((l) => `replay/1280_800/${l.split('@')[0]}`).sort());
    expect(existsSync(join(out, QUEUE_DIR)), 'the queue directory was not cleaned up').toBe(false);

    // The same runs locally: the same tree and the same scores.
    const local = join(dir, 'basic-local');
    const l = spawnVncua('eval', ['--tasks', BASIC, '--agent', 'replay', '--only', only, '--workers', '2', '--out', local, ...judged]);
    children.push(l);
    expect(await l.exited, l.output()).toBe(0);
    expect(runDirs(out)).toEqual(runDirs(local));
    const q = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8'));
    const s = JSON.parse(readFileSync(join(local, 'scores.json'), 'utf8'));
    expect(Object.keys(q).sort()).toEqual(Object.keys(s).sort());
    const pick = (a: Record<string, unknown>) => ({ agent: a.agent, runs: a.runs, successes: a.successes, infra_errors: a.infra_errors });
    expect(q.by_agent.map(pick)).toEqual(s.by_agent.map(pick));
    expect(q.by_agent[0]).toMatchObject({ agent: 'replay', runs: 4, infra_errors: 0 });
    for (const rel of runDirs(out)) {
      const tq = JSON.parse(readFileSync(join(out, rel, 'task.json'), 'utf8'));
      const tl = JSON.parse(readFileSync(join(local, rel, 'task.json'), 'utf8'));
      expect(Object.keys(tq).sort(), rel).toEqual(Object.keys(tl).sort());
      expect(tq).toMatchObject({ id: tl.id, agent: 'replay', resolution: '1280x800', attempt: 1, status: tl.status });
      expect(readdirSync(join(out, rel)).sort(), rel).toEqual(readdirSync(join(local, rel)).sort());
      // Judged on the worker as locally: the final page captured, the same verdicts.
      expect(readdirSync(join(out, rel)), rel).toEqual(expect.arrayContaining(['judges.json', 'final_page.json']));
      const verdicts = (root: string) =>
        (JSON.parse(readFileSync(join(root, rel, 'judges.json'), 'utf8')) as { verdicts: Array<{ judge: string; verdict: string }> }).verdicts.map((v) => [v.judge, v.verdict]);
      expect(verdicts(out), rel).toEqual(verdicts(local));
      expect(
        verdicts(out).find(([j]) => j === 'dom'),
        rel,
      ).toEqual(['dom', 'pass']);
    }

    // SIGTERM: the workers stop cleanly.
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect(await w.exited, w.output()).toBe(0);
    for (const w of workers) expect(w.output()).toMatch(/stopped: \d+ attempts?, \d+ runs? committed, 0 returned to the queue/);
  }, 600_000);
});

describe('nothing lost, nothing doubled', () => {
  let pages: TestPages;
  beforeAll(async () => {
    pages = await serveTestPages();
  });
  afterAll(async () => {
    await pages?.close();
  });

  /** A task file of `n` pages that need one click, and the eval arguments of the click agent over it (each run waits `waitMs`). */
  async function clickSuite(name: string, n: number, waitMs: number) {
    const ids = Array.from({ length: n }, (_, i) => `ok-${i + 1}`);
    const tasks = join(dir, `${name}.json`);
    await writeFile(tasks, JSON.stringify(ids.map((id) => ({ id, goal: 'Click the button', url: `${pages.url}ok/${id}.html`, success: { sentinel: '>code#1<' } }))));
    const out = join(dir, `${name}-out`);
    const log = join(dir, `${name}.log`);
    const args = ['--queue', redis.url, '--tasks', tasks, '--agent', 'eval/test-fixtures/click-agent.ts', '--out', out, '--', '--wait-ms', String(waitMs), '--log', log];
    return { ids, labels: ids.map((id) => `${id}@1280x800`), out, log, args };
  }

  /** The suite finished: every run finished once on disk and scored, nothing of the queue left. */
  function expectComplete(s: { ids: string[]; out: string }) {
    expect(runDirs(s.out)).toEqual(s.ids.map((id) => `click-agent/1280_800/${id}`).sort());
    for (const id of s.ids) expect(JSON.parse(readFileSync(join(s.out, 'click-agent/1280_800', id, 'result.json'), 'utf8')).status).toBe('finished');
    const scores = JSON.parse(readFileSync(join(s.out, 'scores.json'), 'utf8'));
    expect(scores.by_agent).toMatchObject([{ agent: 'click-agent', runs: s.ids.length, successes: s.ids.length, infra_errors: 0 }]);
    expect(existsSync(join(s.out, QUEUE_DIR)), 'the queue directory (staging) was not cleaned up').toBe(false);
  }

  it('kill -9 of a worker mid-run: its job runs elsewhere within the stall timeout, the partial attempt is never scored', async () => {
    redis = await startRedis();
    const s = await clickSuite('kill', 4, 5000);
    const workers = await startWorkers(3, [], STALL_S);
    const coordinator = spawnVncua('eval', s.args);
    children.push(coordinator);
    // A worker in the middle of a run: its agent writes the trace in its staging dir.
    const caught = await waitFor(() => runningAttempts(s.out)[0], 120_000, 'no run started', everything);
    const name = /^\d+-(w\d+)-/.exec(caught.token)?.[1];
    const victim = name ? byName.get(name) : undefined;
    expect(victim, `no worker named in the staging token ${caught.token}`).toBeDefined();
    const label = caught.job.slice(caught.job.indexOf('.') + 1).replace(/#1$/, '');
    const victimPid = victim!.child.pid!;
    await victim!.kill('SIGKILL');
    const killedAt = Date.now();
    // Another worker starts it again within the stall timeout (and well within 30 s).
    await waitFor(() => starts(s.log).some((x) => x.label === label && x.pid !== victimPid), 60_000, `${label} did not run again after its worker was killed`, everything);
    const restartMs = Date.now() - killedAt;
    expect(restartMs).toBeLessThan(30_000);
    const code = await Promise.race([coordinator.exited, new Promise((r) => setTimeout(() => r('timeout'), 240_000))]);
    expect(code, everything()).toBe(0);
    expectComplete(s);
    // The killed run started again elsewhere; each run committed exactly once, never by the dead worker.
    const perLabel = new Map<string, number>();
    for (const x of starts(s.log)) perLabel.set(x.label, (perLabel.get(x.label) ?? 0) + 1);
    expect(perLabel.get(label), everything()).toBeGreaterThanOrEqual(2);
    // (Every run started; with this short stall timeout a live worker's late lock renewal on a loaded
    // machine may let a run start twice: it still lands once, as the commits show.)
    for (const l of s.labels) expect(perLabel.get(l), l).toBeGreaterThanOrEqual(1);
    expect(Object.fromEntries(commits(workers))).toEqual(Object.fromEntries(s.labels.map((l) => [l, 1])));
    expect(victim!.output()).not.toContain(`${label}: finished`);
  }, 600_000);

  it('a Redis restart mid-suite: coordinator and workers carry on; every run committed once', async () => {
    redis = await startRedis();
    const s = await clickSuite('redis', 6, 3000);
    const workers = await startWorkers(3);
    const coordinator = spawnVncua('eval', s.args);
    children.push(coordinator);
    await waitFor(() => commits(workers).size >= 1 && runningAttempts(s.out).length >= 1, 180_000, 'no run committed while another ran', everything);
    const before = commits(workers).size;
    await redis.restart();
    const code = await Promise.race([coordinator.exited, new Promise((r) => setTimeout(() => r('timeout'), 240_000))]);
    expect(code, everything()).toBe(0);
    expectComplete(s);
    expect(Object.fromEntries(commits(workers)), everything()).toEqual(Object.fromEntries(s.labels.map((l) => [l, 1])));
    expect(before, 'the restart came after the suite had ended').toBeLessThan(s.labels.length);
    for (const w of workers) expect(w.child.exitCode, 'a worker died with Redis').toBeNull();
  }, 600_000);

  it('Redis restarted empty mid-suite: the coordinator adds the lost jobs and manifest again; every run finished once', async () => {
    redis = await startRedis();
    const s = await clickSuite('wipe', 5, 3000);
    const workers = await startWorkers(3);
    const coordinator = spawnVncua('eval', s.args);
    children.push(coordinator);
    await waitFor(() => commits(workers).size >= 1 && runningAttempts(s.out).length >= 1, 180_000, 'no run committed while another ran', everything);
    await redis.restart({ wipe: true });
    const code = await Promise.race([coordinator.exited, new Promise((r) => setTimeout(() => r('timeout'), 240_000))]);
    expect(code, everything()).toBe(0);
    expectComplete(s);
    // A run whose job Redis lost while it ran may run again, but lands once: never committed twice.
    expect(Object.fromEntries(commits(workers)), everything()).toEqual(Object.fromEntries(s.labels.map((l) => [l, 1])));
  }, 600_000);

  it('a coordinator killed and started again with the same command resumes the suite; nothing runs twice', async () => {
    redis = await startRedis();
    const s = await clickSuite('coord', 6, 3000);
    const workers = await startWorkers(3);
    const first = spawnVncua('eval', s.args);
    children.push(first);
    await waitFor(() => commits(workers).size >= 1, 180_000, 'no run committed', everything);
    await first.kill('SIGKILL');
    const second = spawnVncua('eval', s.args);
    children.push(second);
    const code = await Promise.race([second.exited, new Promise((r) => setTimeout(() => r('timeout'), 240_000))]);
    expect(code, everything()).toBe(0);
    expect(second.output()).toMatch(/suite [0-9a-f]{16} on .*\(resumed\)/);
    expectComplete(s);
    // Every run started once and was committed once, across both coordinators.
    const perLabel = new Map<string, number>();
    for (const x of starts(s.log)) perLabel.set(x.label, (perLabel.get(x.label) ?? 0) + 1);
    expect(Object.fromEntries(perLabel), everything()).toEqual(Object.fromEntries(s.labels.map((l) => [l, 1])));
    expect(Object.fromEntries(commits(workers))).toEqual(Object.fromEntries(s.labels.map((l) => [l, 1])));
  }, 600_000);

  it('SIGTERM on a worker past its grace: the running run goes back to the queue, not counted as an attempt, and finishes elsewhere', async () => {
    redis = await startRedis();
    const s = await clickSuite('term', 1, 20_000);
    const [first] = await startWorkers(1, ['--grace', '1']);
    const coordinator = spawnVncua('eval', s.args);
    children.push(coordinator);
    await waitFor(() => runningAttempts(s.out)[0], 120_000, 'the run did not start', everything);
    first!.child.kill('SIGTERM');
    expect(await first!.exited, first!.output()).toBe(0);
    expect(first!.output()).toContain('ok-1@1280x800: stopped; back to the queue');
    expect(first!.output()).toMatch(/stopped: 1 attempt, 0 runs committed, 1 returned to the queue/);
    expect(runningAttempts(s.out), 'the stopped attempt left its staging dir').toEqual([]);
    // Another worker takes it: its first attempt still (the returned one did not count).
    const [second] = await startWorkers(1);
    const code = await Promise.race([coordinator.exited, new Promise((r) => setTimeout(() => r('timeout'), 240_000))]);
    expect(code, everything()).toBe(0);
    expectComplete(s);
    expect(JSON.parse(readFileSync(join(s.out, 'click-agent/1280_800/ok-1/task.json'), 'utf8'))).toMatchObject({ attempt: 1, infra_errors: [] });
    expect(starts(s.log).map((x) => x.pid)).toEqual([first!.child.pid, second!.child.pid]);
  }, 600_000);
});
