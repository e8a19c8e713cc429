/**
 * `vncua export` end to end: `vncua eval` with the replay agent on two basic-suite tasks on real local
 * desktops, then `vncua export --format jsonl` of the results twice: before `vncua process` (every image
 * rendered from the recordings, nothing written under the results) and after it (every image copied
 * from its output). The PNGs are 1280x800, the step that made the page show success has a before and
 * an after that differ, and the rendered and the copied images are the same pixels.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { ExportLine } from '../harness/trace/export-line.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const TASKS = fileURLToPath(new URL('../eval/suites/basic/tasks.json', import.meta.url));
const IDS = ['click-button', 'type-search'];

async function pixels(file: string): Promise<{ width: number; height: number; data: Buffer }> {
  const { data, info } = await sharp(await readFile(file))
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

async function exported(out: string): Promise<ExportLine[]> {
  return (await readFile(join(out, 'steps.jsonl'), 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as ExportLine);
}

describe('vncua export after vncua eval', () => {
  it('exports both runs with 1280x800 PNGs, rendered before vncua process and copied after it, the same pixels', async () => {
    const base = await mkdtemp(join(tmpdir(), 'vncua-export-desktop-'));
    const root = join(base, 'runs');
    try {
      const evalRun = await run(process.execPath, [BIN, 'eval', '--tasks', TASKS, '--agent', 'replay', '--only', IDS.join(','), '--workers', '1', '--out', root, '--no-score'], {
        timeout: 240_000,
      });
      expect(evalRun.stdout).toMatch(/2\/2/);
      const runDirs = IDS.map((id) => join(root, 'replay', '1280_800', id));
      const listing = () => runDirs.map((d) => readdirSync(d).sort().join(','));
      const before = listing();

      // Not processed: every image rendered from the recording, nothing written into the runs.
      const first = join(base, 'export-rendered');
      const r1 = await run(process.execPath, [BIN, 'export', root, '--format', 'jsonl', '--out', first], { timeout: 240_000 });
      expect(r1.stderr).toBe('');
      expect(listing()).toEqual(before);
      const rendered = await exported(first);
      expect([...new Set(rendered.map((l) => l.task.id))].sort()).toEqual([...IDS].sort());
      for (const id of IDS) {
        const steps = rendered.filter((l) => l.task.id === id);
        expect(steps.length, id).toBeGreaterThan(0);
        expect(steps.every((l) => l.screenshot_source === 'rendered' && l.run_verdict.success)).toBe(true);
        for (const l of steps) {
          for (const p of [l.screenshot_before!, l.screenshot_after!]) {
            const px = await pixels(join(first, p));
            expect([px.width, px.height], p).toEqual([1280, 800]);
          }
        }
        // The step the success check first saw complete changed the page: its before and after differ.
        const success = steps.find((l) => l.verdict.first_success)!;
        expect(success, id).toBeDefined();
        expect(['mouse_click', 'type_text', 'press_keys']).toContain(success.action);
        const [b, a] = await Promise.all([pixels(join(first, success.screenshot_before!)), pixels(join(first, success.screenshot_after!))]);
        expect(b.data.equals(a.data), `${id} step ${success.step_index}`).toBe(false);
      }

      // Processed: the images are vncua process's, copied; they are the same pixels as the rendered ones.
      await run(process.execPath, [BIN, 'process', root], { timeout: 240_000 });
      const second = join(base, 'export-processed');
      await run(process.execPath, [BIN, 'export', root, '--format', 'jsonl', '--out', second, '--successful', '--group', 'clicks', '--group', 'typing'], { timeout: 240_000 });
      const copied = await exported(second);
      expect(copied).toHaveLength(rendered.length);
      for (const [k, l] of copied.entries()) {
        expect(l.screenshot_source).toBe('process');
        const r = rendered[k]!;
        expect([l.run_id, l.step_index]).toEqual([r.run_id, r.step_index]);
        for (const which of ['screenshot_before', 'screenshot_after'] as const) {
          const [x, y] = await Promise.all([pixels(join(second, l[which]!)), pixels(join(first, r[which]!))]);
          expect(x.data.equals(y.data), `${l.run_id} #${l.step_index} ${which}`).toBe(true);
        }
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 600_000);
});
