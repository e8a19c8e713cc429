import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));

describe('vncua demo', () => {
  it('starts a desktop, saves a screenshot of the demo page and prints where', async () => {
    const out = mkdtempSync(join(tmpdir(), 'vncua-demo-'));
    try {
      const { stdout } = await run(process.execPath, [bin, 'demo', '--out', out, '--size', '1024x700'], { timeout: 60_000 });
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
      const summary = JSON.parse(readFileSync(join(out, 'demo.json'), 'utf8'));
      expect(summary.resolution).toEqual({ width: 1024, height: 700 });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
