/**
 * `vncua run --out` (`node bin/vncua.js run ...` in a child process, each with a deadline): a folder
 * holding a run is refused (exit 2, OUTPUT_ERR_RUN_EXISTS, every byte of the old run, recording
 * included, left as it was) unless --overwrite, which moves the old run to DIR.1 and runs into a
 * fresh DIR; an --out that is a file, under a file, under /proc or not writable is a coded one-line
 * error, exit 2, before any desktop starts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveTestPages, type TestPages } from '../eval/test-fixtures/pages.ts';
import { snapshotDir } from '../harness/test-helpers/files.ts';
import { unwritableDir } from '../harness/test-helpers/unwritable.ts';
import { codeLine, runVncua } from './test-helpers/child.ts';

describe('vncua run --out', () => {
  let pages: TestPages;
  let dir: string;
  let script: string;
  beforeAll(async () => {
    pages = await serveTestPages();
    dir = await mkdtemp(join(tmpdir(), 'vncua-run-out-'));
    script = join(dir, 'click.json');
    await writeFile(script, JSON.stringify([{ action: 'mouse_click', params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' } }]));
  });
  afterAll(async () => {
    await pages?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a folder holding a finished run: refused untouched (exit 2) unless --overwrite, which moves it to DIR.1', async () => {
    const out = join(dir, 'run');
    const args = ['--agent', 'scripted', '--script', script, '--url', `${pages.url}ok/a.html`, '--out', out];
    const first = await runVncua('run', args, { deadlineMs: 90_000 });
    expect(first.code, first.stderr).toBe(0);
    const before = await snapshotDir(out);
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['execution.json', 'result.json', 'recording/recording.json']));
    expect(Object.keys(before).some((f) => f.startsWith('recording/') && f.endsWith('.rfb.bin') && before[f]!.length > 0)).toBe(true);

    const refused = await runVncua('run', args);
    expect([refused.code, codeLine(refused, 'run'), refused.stdout]).toEqual([2, 'OUTPUT_ERR_RUN_EXISTS', '']);
    expect(await snapshotDir(out)).toEqual(before);

    const over = await runVncua('run', [...args, '--overwrite'], { deadlineMs: 90_000 });
    expect(over.code, over.stderr).toBe(0);
    expect(over.stdout).toContain(`the previous run: ${out}.1\n`);
    expect(await snapshotDir(`${out}.1`)).toEqual(before);
    expect(JSON.parse(readFileSync(join(out, 'result.json'), 'utf8')).status).toBe('finished');
    expect(readFileSync(join(out, 'execution.json'), 'utf8')).not.toBe(Buffer.from(before['execution.json']!, 'hex').toString('utf8'));
  }, 240_000);

  it('a folder holding only a partial run or a recording is refused too', async () => {
    const partial = join(dir, 'partial');
    await mkdir(join(partial, 'recording'), { recursive: true });
    await writeFile(join(partial, 'recording', 'client-0.rfb.bin'), 'x');
    const r = await runVncua('run', ['--agent', 'scripted', '--script', script, '--vnc', 'ws://127.0.0.1:9', '--cdp', 'http://127.0.0.1:9', '--out', partial]);
    expect([r.code, codeLine(r, 'run')]).toEqual([2, 'OUTPUT_ERR_RUN_EXISTS']);
    expect(await readdir(partial, { recursive: true })).toEqual(['recording', 'recording/client-0.rfb.bin']);
  });

  it('--out a file, below a file, under /proc, or not writable: a coded line, exit 2, nothing started or created', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'keep');
    const base = ['--agent', 'scripted', '--script', script, '--url', `${pages.url}ok/a.html`];
    for (const [out, code] of [
      [file, 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      [join(file, 'sub'), 'OUTPUT_ERR_NOT_A_DIRECTORY'],
      ['/proc/vncua-test/run', 'OUTPUT_ERR_PSEUDO_FS'],
    ] as const) {
      const r = await runVncua('run', [...base, '--out', out]);
      expect([r.code, codeLine(r, 'run'), r.stdout], out).toEqual([2, code, '']);
    }
    expect(readFileSync(file, 'utf8')).toBe('keep');
    expect(existsSync('/proc/vncua-test')).toBe(false);
    const ro = await unwritableDir();
    try {
      const env = ro.runAs ? { HOME: dir, TMPDIR: dir } : {};
      const r = await runVncua('run', [...base, '--out', join(ro.dir, 'run')], { runAs: ro.runAs, env });
      expect([r.code, codeLine(r, 'run')], ro.how).toEqual([2, 'OUTPUT_ERR_NOT_WRITABLE']);
      expect(await readdir(ro.dir)).toEqual([]);
    } finally {
      await ro.close();
    }
  });
});
