/**
 * `vncua eval` input, as a user runs it (`node bin/vncua.js eval ...` in a child process, each with a
 * deadline so that a command that spins, as Node 20's recursive mkdir does under /proc, fails the test):
 * --repeat and --only parsing; an --only pattern matching nothing, a --repeat that is not a positive
 * integer, an --out that is a file, under /proc or not writable, a results layout --repeat would mix:
 * one coded line, exit 2, nothing created or touched. Then a real run of the tasks an --only glob
 * selects, with --workers above what the machine holds (a one-line warning naming the recommendation).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recommendedWorkers, machineResources } from '../eval/capacity.ts';
import { serveTestPages, type TestPages } from '../eval/test-fixtures/pages.ts';
import { unwritableDir } from '../harness/test-helpers/unwritable.ts';
import { parseEvalArgs } from './eval.ts';
import { codeLine, evalArgError, type Ran, runVncua } from './test-helpers/child.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin/vncua.js');

describe('vncua eval --repeat and --only arguments', () => {
  const ok = ['--tasks', 't', '--agent', 'a'];
  it('parses them (--only lists add up)', () => {
    expect(parseEvalArgs([...ok, '--repeat', '3', '--only', 'click-*, form-1', '--only', 'drag-?'])).toMatchObject({ repeat: 3, only: ['click-*', 'form-1', 'drag-?'] });
    expect(parseEvalArgs(ok)).not.toHaveProperty('repeat');
  });
  it('a --repeat that is not a positive integer, an empty --only: CLI_ERR_BAD_ARGS naming the flag', () => {
    for (const v of ['0', '-1', '1.5', 'x', '']) expect(evalArgError([...ok, '--repeat', v]), v).toBe('--repeat');
    expect(evalArgError([...ok, '--only', ' , '])).toBe('--only');
  });
});

describe('vncua eval: bad input is one coded line, exit 2, nothing written', () => {
  let pages: TestPages;
  let dir: string;
  let tasksFile: string;
  beforeAll(async () => {
    pages = await serveTestPages();
    dir = await mkdtemp(join(tmpdir(), 'vncua-eval-input-'));
    tasksFile = join(dir, 'tasks.json');
    const task = (id: string, page: string) => ({ id, goal: 'Click the button', url: `${pages.url}${page}`, success: { sentinel: '>code#1<' } });
    await writeFile(tasksFile, JSON.stringify([task('ok-1', 'ok/a.html'), task('ok-2', 'ok/b.html'), task('never-1', 'never/c.html')]));
  });
  afterAll(async () => {
    await pages?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const agent = ['--agent', 'eval/test-fixtures/click-agent.ts'];

  it('--only matching nothing: EVAL_ERR_NO_TASKS; --repeat 0: CLI_ERR_BAD_ARGS', async () => {
    const out = join(dir, 'none');
    const r = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out, '--only', 'ok-1,nope-*']);
    expect(r.code).toBe(2);
    expect(codeLine(r, 'eval')).toBe('EVAL_ERR_NO_TASKS');
    expect(r.stderr).toContain('"nope-*"');
    expect(existsSync(out)).toBe(false);
    const zero = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out, '--repeat', '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/^vncua eval: CLI_ERR_BAD_ARGS: --repeat must be a whole number >= 1; got "0"\./);
    expect(existsSync(out)).toBe(false);
  });

  it('a task file that holds no task, or whose entries are bad: EVAL_ERR_BAD_TASKS on one line, exit 2', async () => {
    const out = join(dir, 'empty');
    const empty = join(dir, 'empty.json');
    await writeFile(empty, '[]');
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify([{ id: 'a' }, { id: 'b', goal: 'x', url: 'p.html', success: {} }]));
    for (const file of [empty, bad]) {
      const r = await runVncua('eval', ['--tasks', file, ...agent, '--out', out]);
      expect([r.code, codeLine(r, 'eval')], file).toEqual([2, 'EVAL_ERR_BAD_TASKS']);
    }
    expect(existsSync(out)).toBe(false);
  });

  it('--out a file, below a file, or under /proc: OUTPUT_ERR_NOT_A_DIRECTORY / OUTPUT_ERR_PSEUDO_FS, at once', async () => {
    const file = join(dir, 'results.txt');
    await writeFile(file, 'not a directory');
    for (const [out, code] of [
      [file, 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      [join(file, 'sub'), 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      ['/proc/vncua-test/out', 'OUTPUT_ERR_PSEUDO_FS'],
      [`/proc/${process.pid}/vncua`, 'OUTPUT_ERR_PSEUDO_FS'],
    ] as const) {
      const r = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out], { deadlineMs: 60_000 });
      expect([r.code, codeLine(r, 'eval')], out).toEqual([2, code]);
    }
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
    // vncua demo is vncua eval with fixed arguments: the same check, the same exit.
    const demo = await new Promise<Ran>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'demo', '--out', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error('vncua demo did not exit'))), 120_000);
      child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr })));
    });
    expect([demo.code, /^vncua demo: ([A-Z_]+): /.exec(demo.stderr)?.[1]]).toEqual([2, 'OUTPUT_ERR_NOT_A_DIRECTORY']);
  }, 180_000);

  it('--out not writable (a read-only mount, or permissions): OUTPUT_ERR_NOT_WRITABLE, nothing created', async () => {
    const ro = await unwritableDir();
    try {
      const out = join(ro.dir, 'results');
      const env = ro.runAs ? { HOME: dir, TMPDIR: dir } : {};
      const r = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out], { ...(ro.runAs ? { runAs: ro.runAs } : {}), env });
      expect([r.code, codeLine(r, 'eval')], ro.how).toEqual([2, 'OUTPUT_ERR_NOT_WRITABLE']);
      expect(await readdir(ro.dir)).toEqual([]);
    } finally {
      await ro.close();
    }
  });

  it('a real run of the tasks an --only glob selects, --workers above the recommendation warned; then --repeat 2 on it: EVAL_ERR_LAYOUT_MIXED; a corrupted trace: invalid, exit 1', async () => {
    const out = join(dir, 'only');
    const advice = recommendedWorkers(machineResources());
    const asked = advice.workers + 5;
    const r = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out, '--only', 'never-*', '--workers', String(asked), '--no-score'], { deadlineMs: 120_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toBe(`vncua eval: warning: --workers ${asked} is more than this machine can hold; recommended: ${advice.workers} (${advice.limitedBy})\n`);
    const runs = join(out, 'click-agent', '1280_800');
    expect(await readdir(runs)).toEqual(['never-1']);
    expect(JSON.parse(readFileSync(join(runs, 'never-1', 'result.json'), 'utf8')).status).toBe('finished');
    const before = readFileSync(join(runs, 'never-1', 'task.json'), 'utf8');

    const mixed = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out, '--repeat', '2', '--only', 'never-1']);
    expect([mixed.code, codeLine(mixed, 'eval')]).toEqual([2, 'EVAL_ERR_LAYOUT_MIXED']);
    expect(await readdir(join(runs, 'never-1'))).not.toContain('1');
    expect(readFileSync(join(runs, 'never-1', 'task.json'), 'utf8')).toBe(before);

    // A finished run whose trace got corrupted: skipped (its result.json is fine), scored invalid, exit 1.
    await writeFile(join(runs, 'never-1', 'execution.json'), '[{"index": 0, "act');
    const again = await runVncua('eval', ['--tasks', tasksFile, ...agent, '--out', out, '--only', 'never-1', '--workers', '1']);
    expect(again.code, again.stdout + again.stderr).toBe(1);
    expect(again.stdout).toContain('eval: 1 run could not be read (invalid, not scored; listed in the scores)');
    expect(JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')).invalid.map((e: { dir: string }) => e.dir)).toEqual(['click-agent/1280_800/never-1']);
  }, 180_000);
});
