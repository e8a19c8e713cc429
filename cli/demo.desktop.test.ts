import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { DEMO_RESOLUTIONS, DEMO_TASKS, parseDemoArgs } from './demo.ts';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));

describe('vncua demo', () => {
  it('defaults to the basic suite at 1280x800 and 1920x1080 on 2 workers, into a fresh runs/demo-… directory', () => {
    const o = parseDemoArgs([], new Date('2026-11-25T10:20:30.456Z'))!;
    expect(o.tasks).toBe(DEMO_TASKS);
    expect(o.resolutions.map((r) => `${r.width}x${r.height}`)).toEqual([...DEMO_RESOLUTIONS]);
    expect(o.workers).toBe(2);
    expect(o.out).toBe(join('runs', 'demo-2026-11-25T10-20-30'));
    expect(parseDemoArgs(['--help'])).toBeUndefined();
    for (const bad of [['--workers', '0'], ['--resolution', 'big'], ['--frobnicate'], ['--out']]) {
      let err: unknown;
      try {
        parseDemoArgs(bad);
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'CLI_ERR_BAD_ARGS'), bad.join(' ')).toBe(true);
    }
  });

  it('runs suite tasks with the replay agent, recorded and post-processed, and prints the scores page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vncua-demo-'));
    try {
      // Three tasks of the basic suite, in a task file beside the suite's own (references and pages resolve from there).
      const all = JSON.parse(readFileSync(DEMO_TASKS, 'utf8')) as Array<{ id: string; url: string }>;
      const picked = all.filter((t) => ['click-button', 'drag-card', 'type-unicode'].includes(t.id));
      expect(picked).toHaveLength(3);
      const tasks = join(fileURLToPath(new URL('../eval/suites/basic/', import.meta.url)), `.demo-test-${process.pid}.json`);
      writeFileSync(tasks, JSON.stringify(picked));
      const out = join(dir, 'out');
      let stdout: string;
      try {
        ({ stdout } = await run(process.execPath, [bin, 'demo', '--tasks', tasks, '--resolution', '1024x700', '--out', out], { timeout: 120_000 }));
      } finally {
        rmSync(tasks, { force: true });
      }
      expect(stdout).toContain('demo: 3/3 runs succeeded (0 infra errors)');
      expect(stdout).toMatch(/tasks per minute/);
      const html = join(out, 'scores.html');
      expect(stdout).toContain(`Open the scores: ${html}`);
      const scores = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8')) as { runs: Array<{ task_id: string; success: boolean; link: string }> };
      expect(scores.runs.map((r) => [r.task_id, r.success]).sort()).toEqual([
        ['click-button', true],
        ['drag-card', true],
        ['type-unicode', true],
      ]);
      for (const r of scores.runs) {
        // Each run was recorded and processed: the scores link to its step report, which has its screenshots.
        expect(r.link).toBe(`replay/1024_700/${r.task_id}/action_screenshots.html`);
        const runDir = join(out, 'replay', '1024_700', r.task_id);
        expect(existsSync(join(runDir, 'recording', 'server.rfb.bin'))).toBe(true);
        expect(existsSync(join(runDir, 'action_screenshots', '0000_before.png'))).toBe(true);
        expect(readFileSync(html, 'utf8')).toContain(`href="${r.link}"`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
