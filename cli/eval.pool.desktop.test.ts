/**
 * `vncua eval --pool 2 --workers 2` on real local desktops: six basic-suite tasks with the replay
 * agent (two of them about the browser's history: Back must not reach a pooled desktop's empty start
 * page), all succeed; every run had its own desktop (one start script pid per task.json, none
 * twice), most of them from the pool, each with its measured desktop overhead; and once the command
 * has exited, no process of any of those desktops is left.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { groupMembers } from '../harness/desktop/procs.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const TASKS = fileURLToPath(new URL('../eval/suites/basic/tasks.json', import.meta.url));
const IDS = ['click-button', 'nav-back', 'type-search', 'nav-forward', 'late-content', 'form-signup'];

describe('vncua eval --pool', () => {
  it('runs basic-suite tasks on pooled desktops: all succeed, one desktop per run, nothing left running', async () => {
    const out = await mkdtemp(join(tmpdir(), 'vncua-eval-pool-'));
    try {
      const { stdout } = await run(
        process.execPath,
        [BIN, 'eval', '--tasks', TASKS, '--agent', 'replay', '--only', IDS.join(','), '--workers', '2', '--pool', '2', '--out', out, '--no-score'],
        { timeout: 240_000 },
      );
      expect(stdout).toMatch(/6\/6/);
      const runs = IDS.map((id) => {
        const dir = join(out, 'replay', '1280_800', id);
        return {
          id,
          task: JSON.parse(readFileSync(join(dir, 'task.json'), 'utf8')) as {
            status: string;
            attempt: number;
            desktop: { pid: number; pooled: boolean };
            desktop_overhead_ms: number | null;
            desktop_acquire_ms: number;
          },
          trace: JSON.parse(readFileSync(join(dir, 'execution.json'), 'utf8')) as Array<{ task_marked_complete?: boolean }>,
        };
      });
      for (const r of runs) {
        expect(r.task.status, r.id).toBe('finished');
        expect(
          r.trace.some((e) => e.task_marked_complete === true),
          `${r.id} succeeded`,
        ).toBe(true);
        expect(r.task.desktop_overhead_ms, r.id).toEqual(expect.any(Number));
        expect(typeof r.task.desktop.pooled, r.id).toBe('boolean');
      }
      // One desktop per run (retries would show as attempt > 1 with a desktop of their own).
      const pids = runs.map((r) => r.task.desktop.pid);
      expect(new Set(pids).size).toBe(runs.length);
      // The first runs may find their spare still starting, or none; later ones are served by the pool.
      expect(runs.filter((r) => r.task.desktop.pooled).length).toBeGreaterThanOrEqual(2);
      // The command has exited: none of the desktops it ran (nor the spares, which die with it) is left.
      for (const pid of pids) expect(groupMembers(pid), `desktop ${pid}`).toEqual([]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
    // The command's own deadline (240 s) is the test's: six tasks on a loaded 2-core machine took over 60 s.
  }, 300_000);
});
