/** `vncua score`: exit 1 with one EVAL_ERR_INVALID_RUNS line when some runs cannot be read, 0 with --allow-invalid; the scores are written either way. */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { parseScoreArgs, run } from './score.ts';
import { runCaptured } from './test-helpers/capture.ts';

/** run(argv) with stdout and stderr captured. */
async function score(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, out, err } = await runCaptured(run, argv);
  return { code, stdout: out, stderr: err };
}

describe('vncua score', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-cli-'));
    const run = (id: string) => join(root, 'alpha', '1280_800', id);
    await mkdir(run('good-1'), { recursive: true });
    await writeFile(join(run('good-1'), 'execution.json'), '[]');
    await writeFile(join(run('good-1'), 'result.json'), JSON.stringify({ status: 'finished', steps: 0, durationMs: 5 }));
    await mkdir(run('bad-1'), { recursive: true });
    await writeFile(join(run('bad-1'), 'execution.json'), '[{"action": "mouse_cli');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('parses --allow-invalid; DIR is required', () => {
    expect(parseScoreArgs([root, '--allow-invalid'])).toEqual({ dir: root, allowInvalid: true });
    expect(parseScoreArgs([root])).toEqual({ dir: root, allowInvalid: false });
    let err: unknown;
    try {
      parseScoreArgs(['--allow-invalid']);
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'CLI_ERR_BAD_ARGS')).toBe(true);
  });

  it('invalid runs: the scores are written, one coded line on stderr, exit 1; --allow-invalid: exit 0', async () => {
    const r = await score([root]);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^vncua score: EVAL_ERR_INVALID_RUNS: 1 run could not be read .*alpha\/1280_800\/bad-1\/execution\.json/);
    expect(r.stdout).toContain('alpha: 0.0% success (0/1), 1 invalid excluded');
    for (const f of ['scores.json', 'scores.md', 'scores.html']) expect(existsSync(join(root, f))).toBe(true);
    const allowed = await score([root, '--allow-invalid']);
    expect([allowed.code, allowed.stderr]).toEqual([0, '']);
  });
});

describe('vncua score: DOMAIN_BLOCKED', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-score-guard-cli-'));
    for (const [id, blocked] of [
      ['t-1', 2],
      ['t-2', 0],
      ['t-3', 1],
    ] as const) {
      const dir = join(root, 'guarded', '1280_800', id);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'execution.json'), '[]');
      await writeFile(join(dir, 'result.json'), JSON.stringify({ status: 'finished', steps: 0, durationMs: 5, domain_blocked: blocked }));
    }
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("prints each agent's DOMAIN_BLOCKED count and the runs that had a block", async () => {
    const r = await score([root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^guarded: .*; DOMAIN_BLOCKED 3 in 2 runs$/m);
  });
});
