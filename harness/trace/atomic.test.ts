import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeFile, writeFileAtomic } from './atomic.ts';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  for (const durable of [false, true]) {
    it(`${durable ? 'durable: ' : ''}replaces a file with one of the given mode, leaving no temp file`, async () => {
      dir = mkdtempSync(join(tmpdir(), 'vncua-atomic-'));
      const path = join(dir, 'live.json');
      writeFileSync(path, 'old', { mode: 0o644 });
      await writeFileAtomic(path, '{"secret":1}', { mode: 0o600, durable });
      expect(readFileSync(path, 'utf8')).toBe('{"secret":1}');
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['live.json']);
      await removeFile(path);
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  it('fails with TRACE_ERR_WRITE naming the path when the directory is missing', async () => {
    dir = mkdtempSync(join(tmpdir(), 'vncua-atomic-'));
    const path = join(dir, 'gone', 'live.json');
    await expect(writeFileAtomic(path, 'x', { mode: 0o600 })).rejects.toMatchObject({ code: 'TRACE_ERR_WRITE', details: { path } });
  });
});
