import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readResult, readTrace } from '../harness/trace/index.ts';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
const script = JSON.parse(readFileSync(fileURLToPath(new URL('../agents/demo/script.json', import.meta.url)), 'utf8')) as Array<{ action: string; params: unknown }>;

describe('vncua demo', () => {
  it('runs the scripted agent on the demo page: the trace holds the script in order, the code is revealed, a screenshot is saved', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vncua-demo-'));
    try {
      const { stdout } = await run(process.execPath, [bin, 'demo', '--out', out, '--size', '1024x700'], { timeout: 60_000 });
      const tracePath = join(out, 'execution.json');
      expect(stdout).toContain(`trace: ${tracePath}`);
      expect(stdout).toContain('result: finished');

      const trace = await readTrace(tracePath);
      expect(trace.source).toBe('vncua');
      expect(trace.entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(script.map((s) => ({ action: s.action, params: s.params })));
      expect(trace.entries.every((e) => !('error' in e))).toBe(true);
      // The code appears only after the last click, when the typed text was saved and the list scrolled.
      expect(trace.entries.at(-1)!.task_marked_complete).toBe(true);
      expect(trace.entries[0]!.task_marked_complete).toBe(false);
      expect((await readResult(out)).status).toBe('finished');

      const file = join(out, 'screenshot.png');
      expect(stdout).toContain(`Screenshot saved: ${file}`);
      const { data, info } = await sharp(readFileSync(file)).raw().toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([1024, 700]);
      // The page's orange button is on screen: some pixels are close to #f9a826.
      let orange = 0;
      for (let i = 0; i < data.length; i += info.channels) {
        if (Math.abs(data[i]! - 0xf9) < 6 && Math.abs(data[i + 1]! - 0xa8) < 6 && Math.abs(data[i + 2]! - 0x26) < 6) orange++;
      }
      expect(orange).toBeGreaterThan(500);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
