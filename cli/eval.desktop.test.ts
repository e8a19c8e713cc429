/**
 * `vncua eval`: argument parsing, and the reliability contract on real desktops with the runner in a
 * child process: SIGKILL it in the middle of a suite, check /proc that no desktop process is left,
 * run it again, and check every task ran to a finished result exactly once (nothing lost, nothing
 * finished run twice) and the scores were written. A dead task server: every run infra_error with the
 * code, exit 1. A wrong API key (the chat agent against a local server answering 401 through the
 * official SDK): the suite stops at once, exit 2, one coded line, nothing half-written.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { serveTestPages } from '../eval/test-fixtures/pages.ts';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { groupMembers, procStat } from '../harness/desktop/procs.ts';
import { parseEvalArgs, run } from './eval.ts';
import { evalArgError } from './test-helpers/child.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

describe('vncua eval arguments', () => {
  it('parses every option', () => {
    const o = parseEvalArgs([
      '--tasks',
      't.json',
      '--agent',
      'scripted',
      '--resolution',
      '1280x800',
      '--resolution',
      '1920x1080',
      '--workers',
      '3',
      '--max-steps',
      '9',
      '--retries',
      '0',
      '--rerun',
      '--shard',
      '2/4',
      '--out',
      'o',
      '--provider',
      'remote',
      '--endpoints',
      'e.json',
      '--base-url',
      'http://127.0.0.1:1/',
      '--process',
      '--no-score',
      '--',
      'x',
      '--y',
    ]);
    expect(o).toEqual({
      tasks: 't.json',
      agent: 'scripted',
      resolutions: [
        { width: 1280, height: 800 },
        { width: 1920, height: 1080 },
      ],
      workers: 3,
      maxSteps: 9,
      retries: 0,
      rerun: true,
      shard: { i: 2, n: 4 },
      out: 'o',
      provider: 'remote',
      endpoints: 'e.json',
      baseUrl: 'http://127.0.0.1:1/',
      process: true,
      score: false,
      args: ['x', '--y'],
    });
    expect(parseEvalArgs(['--tasks', 't', '--agent', 'a'])).toMatchObject({ out: 'runs/eval', provider: 'local', score: true, rerun: false, resolutions: [] });
    expect(parseEvalArgs(['--help'])).toBeUndefined();
  });

  it('--success-grace-ms: 0 to 60000 ms, anything else names the flag', () => {
    const ok = ['--tasks', 't', '--agent', 'a'];
    expect(parseEvalArgs([...ok, '--success-grace-ms', '0'])?.successGraceMs).toBe(0);
    expect(parseEvalArgs([...ok, '--success-grace-ms', '2500'])?.successGraceMs).toBe(2500);
    expect(parseEvalArgs(ok)?.successGraceMs).toBeUndefined();
    for (const v of ['-1', '1.5', '60001', 'soon']) expect(evalArgError([...ok, '--success-grace-ms', v])).toBe('--success-grace-ms');
  });

  it('names the bad argument', () => {
    const ok = ['--tasks', 't', '--agent', 'a'];
    expect(evalArgError(['--agent', 'a'])).toBe('--tasks');
    expect(evalArgError(['--tasks', 't'])).toBe('--agent');
    expect(evalArgError([...ok, '--resolution', '12x'])).toBe('--resolution');
    expect(evalArgError([...ok, '--workers', '0'])).toBe('--workers');
    expect(evalArgError([...ok, '--shard', '3/2'])).toBe('--shard');
    expect(evalArgError([...ok, '--provider', 'cloud'])).toBe('--provider');
    expect(evalArgError([...ok, '--provider', 'remote'])).toBe('--endpoints');
    expect(evalArgError([...ok, '--endpoints', 'e.json'])).toBe('--endpoints');
    expect(evalArgError([...ok, '--frobnicate'])).toBe('--frobnicate');
    expect(evalArgError([...ok, '--out'])).toBe('--out');
  });

  it('run() exits 2 on bad arguments, 0 for --help', async () => {
    const write = process.stderr.write;
    const out = process.stdout.write;
    process.stderr.write = (() => true) as never;
    process.stdout.write = (() => true) as never;
    try {
      expect(await run(['--tasks'])).toBe(2);
      expect(await run(['--help'])).toBe(0);
    } finally {
      process.stderr.write = write;
      process.stdout.write = out;
    }
  });
});

/** Pids of live processes whose environment holds `VNCUA_EVAL_TEST_TAG=<tag>` (the runner and everything it started). */
function taggedPids(tag: string): number[] {
  const needle = Buffer.from(`VNCUA_EVAL_TEST_TAG=${tag}\0`);
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/environ`).includes(needle)) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * The runner's desktops: the process groups of the start scripts it spawned (each docker/start.sh leads
 * its own group). Desktops do not inherit the runner's environment (start.sh scrubs it), so they are
 * found by parentage while the runner lives.
 */
function desktopGroups(runnerPid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = procStat(Number(name));
    try {
      if (s && s.ppid === runnerPid && s.state !== 'Z' && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('docker/start.sh')) out.push(s.pid);
    } catch {
      // gone
    }
  }
  return out;
}

/** Live processes of those desktops' groups. */
const desktopProcesses = (groups: number[]): number[] => groups.flatMap((g) => groupMembers(g));

/** Command line that runs `vncua eval ARGS` in a child: bin/vncua.js once the command is registered, else cli/eval.ts directly. */
function evalCommand(args: string[]): string[] {
  if (/\beval:\s*\{/.test(readFileSync(join(ROOT, 'cli/main.ts'), 'utf8'))) return [join(ROOT, 'bin/vncua.js'), 'eval', ...args];
  return ['--import', 'tsx', '--input-type=module', '-e', "const { run } = await import('./cli/eval.ts'); process.exitCode = await run(process.argv.slice(1));", '--', ...args];
}

describe('vncua eval: SIGKILL in the middle of a suite, then resume', () => {
  let pages: { url: string; close(): Promise<void> };
  let dir: string;
  beforeAll(async () => {
    pages = await serveTestPages();
    dir = await mkdtemp(join(tmpdir(), 'vncua-eval-cli-'));
  });
  afterAll(async () => {
    await pages?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('SIGTERM cancels cleanly: exit code 1, the running task removed (not a result), its desktop gone', async () => {
    const tasksFile = join(dir, 'one.json');
    await writeFile(tasksFile, JSON.stringify([{ id: 'slow-1', goal: 'Click the button', url: `${pages.url}ok/slow.html`, success: { sentinel: '>code#1<' } }]));
    const out = join(dir, 'term');
    const tag = `term${process.pid}-${Date.now()}`;
    const args = ['--tasks', tasksFile, '--agent', 'eval/test-fixtures/click-agent.ts', '--out', out, '--', '--wait-ms', '30000'];
    const child = spawn(process.execPath, evalCommand(args), { cwd: ROOT, env: { ...process.env, VNCUA_EVAL_TEST_TAG: tag }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    const runDir = join(out, 'click-agent', '1280_800', 'slow-1');
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(runDir, 'partial_execution.json'))) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the agent did not start:\n${text}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const groups = desktopGroups(child.pid!);
    expect(groups).toHaveLength(1);
    expect(desktopProcesses(groups).length).toBeGreaterThan(4); // Xvnc, wm, bridges, Chromium...
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    expect(code, text).toBe(1);
    expect(text).toContain('SIGTERM, cancelling');
    expect(existsSync(runDir)).toBe(false);
    expect(taggedPids(tag)).toEqual([]);
    expect(desktopProcesses(groups)).toEqual([]);
  });

  it('leaves no desktop process behind, and the rerun runs exactly the unfinished tasks', async () => {
    const ids = ['ok-1', 'ok-2', 'ok-3', 'ok-4'];
    const tasksFile = join(dir, 'tasks.json');
    await writeFile(tasksFile, JSON.stringify(ids.map((id) => ({ id, goal: 'Click the button', url: `ok/${id}.html`, success: { sentinel: '>code#1<' } }))));
    const out = join(dir, 'out');
    const log = join(dir, 'agent.log');
    const tag = `t${process.pid}-${Date.now()}`;
    const args = [
      '--tasks',
      tasksFile,
      '--agent',
      'eval/test-fixtures/click-agent.ts',
      '--base-url',
      pages.url,
      '--workers',
      '2',
      '--out',
      out,
      '--',
      '--wait-ms',
      '2500',
      '--log',
      log,
    ];
    const runDir = (id: string) => join(out, 'click-agent', '1280_800', id);
    const finished = () => ids.filter((id) => existsSync(join(runDir(id), 'result.json')));
    const started = () => ids.filter((id) => existsSync(join(runDir(id), 'partial_execution.json')));
    const spawnEval = () => spawn(process.execPath, evalCommand(args), { cwd: ROOT, env: { ...process.env, VNCUA_EVAL_TEST_TAG: tag }, stdio: ['ignore', 'pipe', 'pipe'] });

    // 1. Kill the runner once one task has finished and another one's agent is running.
    const first = spawnEval();
    let firstOut = '';
    first.stdout.on('data', (d) => (firstOut += d));
    first.stderr.on('data', (d) => (firstOut += d));
    const deadline = Date.now() + 120_000;
    while (!(finished().length >= 1 && started().length >= 1)) {
      if (Date.now() > deadline || first.exitCode !== null) throw new Error(`no task finished in time:\n${firstOut}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The runner's desktops (Xvnc, websockify, Chromium...), in the process groups of its start scripts.
    const groups = desktopGroups(first.pid!);
    expect(groups.length).toBeGreaterThanOrEqual(1);
    expect(desktopProcesses(groups).length).toBeGreaterThan(4);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    const finishedBefore = new Map(finished().map((id) => [id, readFileSync(join(runDir(id), 'result.json'), 'utf8')]));
    expect(finishedBefore.size).toBeGreaterThanOrEqual(1);
    expect(finishedBefore.size).toBeLessThan(ids.length);

    // 2. The desktops die with the runner: nothing of theirs, nothing carrying the runner's environment is left.
    const goneBy = Date.now() + 15_000;
    while ((taggedPids(tag).length > 0 || desktopProcesses(groups).length > 0) && Date.now() < goneBy) await new Promise((r) => setTimeout(r, 100));
    expect(taggedPids(tag)).toEqual([]);
    expect(desktopProcesses(groups)).toEqual([]);

    // 3. Run it again to the end.
    const second = spawnEval();
    let secondOut = '';
    second.stdout.on('data', (d) => (secondOut += d));
    second.stderr.on('data', (d) => (secondOut += d));
    const code = await new Promise<number | null>((r) => second.once('exit', r));
    expect(code, secondOut).toBe(0);
    expect(taggedPids(tag)).toEqual([]);

    // Every task finished once: the first run's results are untouched, the second ran exactly the others.
    for (const id of ids) expect(JSON.parse(readFileSync(join(runDir(id), 'result.json'), 'utf8')).status).toBe('finished');
    for (const [id, text] of finishedBefore) expect(readFileSync(join(runDir(id), 'result.json'), 'utf8')).toBe(text);
    const starts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const secondPid = String(second.pid);
    const rerun = starts
      .filter((s) => s[2] === secondPid)
      .map((s) => s[1]!.split('@')[0]!)
      .sort();
    expect(rerun).toEqual(ids.filter((id) => !finishedBefore.has(id)).sort());
    expect(secondOut).toContain(`${finishedBefore.size} already done`);
    // Scores were written and count each task once.
    const scoresHtml = /scores: (.*scores\.html)/.exec(secondOut)?.[1];
    expect(scoresHtml).toBe(join(out, 'scores.html'));
    const scores = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8'));
    expect(scores.by_agent).toMatchObject([{ agent: 'click-agent', runs: 4, successes: 4, infra_errors: 0 }]);
  });
});

/** Run `vncua eval ARGS` in a child to its end. */
function evalChild(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, evalCommand(args), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

describe('vncua eval: task pages that never load, and configuration errors', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-eval-cli-pages-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a dead task server: every run infra_error with PAGE_ERR_UNREACHABLE, retried, said in the progress lines and the scores; exit 1', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}/`;
    const tasksFile = join(dir, 'dead.json');
    await writeFile(tasksFile, JSON.stringify(['a', 'b'].map((id) => ({ id, goal: 'Click the button', url: `${dead}${id}.html`, success: { sentinel: '>code#1<' } }))));
    const out = join(dir, 'dead-out');
    const r = await evalChild(['--tasks', tasksFile, '--agent', 'eval/test-fixtures/click-agent.ts', '--retries', '1', '--out', out]);
    const text = r.stdout + r.stderr;
    expect(r.code, text).toBe(1);
    for (const id of ['a', 'b']) {
      expect(text).toContain(`${id}@1280x800: infra failure on attempt 1 (PAGE_ERR_UNREACHABLE: the task page ${dead}${id}.html could not be loaded: net::ERR_CONNECTION_REFUSED`);
      expect(text).toContain(
        `${id}@1280x800: infra_error (PAGE_ERR_UNREACHABLE: the task page ${dead}${id}.html could not be loaded: net::ERR_CONNECTION_REFUSED), success unknown`,
      );
      expect(JSON.parse(readFileSync(join(out, 'click-agent', '1280_800', id, 'result.json'), 'utf8'))).toMatchObject({
        status: 'infra_error',
        steps: 0,
        error: { code: 'PAGE_ERR_UNREACHABLE' },
      });
    }
    expect(text).toContain('0 succeeded, 2 infra errors (PAGE_ERR_UNREACHABLE ×2)');
    const scores = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8'));
    expect(scores.by_agent).toMatchObject([{ agent: 'click-agent', runs: 0, infra_errors: 2, success_rate: null }]);
    expect(readFileSync(join(out, 'scores.md'), 'utf8')).toContain(
      `PAGE_ERR_UNREACHABLE: 2 attempts failed on infrastructure; the last: the task page ${dead}a.html could not be loaded: net::ERR_CONNECTION_REFUSED`,
    );
  });

  it('a wrong API key stops the suite at once: exit 2, one line naming MODEL_ERR_AUTH, no run left half-written, nothing scored', async () => {
    const pages = await serveTestPages();
    const api = await startChatServer(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    try {
      const tasksFile = join(dir, 'three.json');
      await writeFile(
        tasksFile,
        JSON.stringify(['a', 'b', 'c'].map((id) => ({ id, goal: 'Click the button', url: `${pages.url}ok/${id}.html`, success: { sentinel: '>code#1<' } }))),
      );
      const out = join(dir, 'auth-out');
      const r = await evalChild(['--tasks', tasksFile, '--agent', 'chat', '--workers', '1', '--out', out, '--', '--base-url', api.baseURL, '--model', 'test-vlm'], {
        VNCUA_CHAT_API_KEY: 'sk-wrong',
      });
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('vncua eval:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^vncua eval: MODEL_ERR_AUTH: .*HTTP 401.* \(met by a@1280x800; the suite stopped/);
      // One call: the first run's first step; the other runs never started.
      expect(api.bodies).toHaveLength(1);
      const runs = join(out, 'chat', '1280_800');
      expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
      expect(existsSync(join(out, 'scores.json'))).toBe(false);
    } finally {
      await api.close();
      await pages.close();
    }
  });
});
