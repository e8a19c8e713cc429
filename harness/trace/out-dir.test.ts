/**
 * Output directories: a file in the way, a pseudo-filesystem (checked without ever calling mkdir,
 * which spins forever under /proc on Node 20), an unwritable directory; finished runs found and moved
 * aside, never deleted; TraceWriter.open() refusing a finished run.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { unwritableDir } from '../test-helpers/unwritable.ts';
import { checkOutputDir, finishedRunFiles, moveAside, runFiles } from './out-dir.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import { TraceWriter } from './writer.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'vncua-outdir-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isVncuaError(e)) return e.code;
    throw e;
  }
  return 'ok';
}

describe('checkOutputDir', () => {
  it('accepts an existing directory and a path to create (creating nothing)', async () => {
    expect(await checkOutputDir(root)).toBe(root);
    const later = join(root, 'a', 'b', 'c');
    expect(await checkOutputDir(later)).toBe(later);
    expect(existsSync(join(root, 'a'))).toBe(false);
  });

  it('a file, or a file among the parents: OUTPUT_ERR_NOT_A_DIRECTORY naming the file', async () => {
    const file = join(root, 'file.txt');
    await writeFile(file, 'keep me');
    for (const p of [file, join(file, 'sub'), join(file, 'sub', 'deeper')]) {
      const err = await checkOutputDir(p, '--out').catch((e: unknown) => e);
      expect(isVncuaError(err, 'OUTPUT_ERR_NOT_A_DIRECTORY'), p).toBe(true);
      expect((err as { details: { file: string } }).details.file).toBe(file);
    }
    expect(await readFile(file, 'utf8')).toBe('keep me');
  });

  it('/proc and /sys: OUTPUT_ERR_PSEUDO_FS at once, also for paths that do not exist', async () => {
    for (const p of ['/proc', '/proc/vncua-test/run', `/proc/${process.pid}/vncua`, '/sys/vncua', '/sys/fs/cgroup/vncua']) {
      expect(await codeOf(checkOutputDir(p)), p).toBe('OUTPUT_ERR_PSEUDO_FS');
    }
  });

  it('an unwritable directory (read-only mount, or permissions): OUTPUT_ERR_NOT_WRITABLE, for it and for a path inside it', async () => {
    const ro = await unwritableDir();
    try {
      const probe = `const { checkOutputDir } = await import(${JSON.stringify(join(REPO, 'harness/trace/out-dir.ts'))});
const codes = [];
for (const p of process.argv.slice(1)) codes.push(await checkOutputDir(p).then(() => 'ok', (e) => e.code));
process.stdout.write(JSON.stringify(codes));`;
      // In a child process, so that it can run as nobody when that is how the directory is unwritable.
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', probe, '--', ro.dir, join(ro.dir, 'run')],
          { cwd: REPO, timeout: 60_000, ...(ro.runAs ?? {}) },
          (err, out) => (err ? reject(err) : resolve(out)),
        ),
      );
      expect(JSON.parse(stdout), ro.how).toEqual(['OUTPUT_ERR_NOT_WRITABLE', 'OUTPUT_ERR_NOT_WRITABLE']);
    } finally {
      await ro.close();
    }
  });
});

describe('runs in a directory', () => {
  it('finishedRunFiles / runFiles tell a finished run, a partial one and unrelated files apart', async () => {
    const d = join(root, 'kinds');
    await mkdir(join(d, 'recording'), { recursive: true });
    await writeFile(join(d, 'notes.txt'), '');
    expect([await finishedRunFiles(d), await runFiles(d)]).toEqual([[], ['recording']]);
    await writeFile(join(d, 'partial_execution.json'), '[]');
    expect([await finishedRunFiles(d), await runFiles(d)]).toEqual([[], ['partial_execution.json', 'recording']]);
    await writeFile(join(d, 'result.json'), '{}');
    expect(await finishedRunFiles(d)).toEqual(['result.json']);
    expect(await finishedRunFiles(join(root, 'missing'))).toEqual([]);
  });

  it('moveAside renames to the first free DIR.N, keeping every file', async () => {
    const d = join(root, 'run');
    for (const n of [1, 2]) {
      await mkdir(d);
      await writeFile(join(d, 'result.json'), `{"n":${n}}`);
      expect(await moveAside(d)).toBe(`${d}.${n}`);
      expect(existsSync(d)).toBe(false);
    }
    expect(await readFile(`${d}.1/result.json`, 'utf8')).toBe('{"n":1}');
    expect(await readFile(`${d}.2/result.json`, 'utf8')).toBe('{"n":2}');
    // A taken name (here an empty directory) is never reused.
    await mkdir(d);
    await mkdir(`${d}~1`);
    expect(await moveAside(d, '~')).toBe(`${d}~2`);
  });
});

describe('TraceWriter.open()', () => {
  it('refuses a directory holding execution.json or result.json (OUTPUT_ERR_RUN_EXISTS, nothing touched), unless overwrite', async () => {
    for (const file of ['execution.json', 'result.json']) {
      const d = join(root, `finished-${file}`);
      await mkdir(d);
      await writeFile(join(d, file), 'the old run');
      const w = new TraceWriter(d);
      expect(await codeOf(w.open())).toBe('OUTPUT_ERR_RUN_EXISTS');
      expect(await readdir(d)).toEqual([file]);
      expect(await readFile(join(d, file), 'utf8')).toBe('the old run');
      const over = new TraceWriter(d, { overwrite: true });
      await over.open();
      await over.append(sampleEntry(0));
      await over.finalize();
      expect(JSON.parse(await readFile(join(d, 'execution.json'), 'utf8'))).toHaveLength(1);
    }
  });

  it('writes over a partial run (a crash leaves only partial_execution.json)', async () => {
    const d = join(root, 'crashed');
    await mkdir(d);
    await writeFile(join(d, 'partial_execution.json'), '[]');
    const w = new TraceWriter(d);
    await w.open();
    await w.finalize();
    expect(await readdir(d)).toEqual(['execution.json']);
  });

  it('under /proc: OUTPUT_ERR_PSEUDO_FS without calling mkdir (which would spin)', async () => {
    expect(await codeOf(new TraceWriter('/proc/vncua-test/run').open())).toBe('OUTPUT_ERR_PSEUDO_FS');
    expect(await codeOf(new TraceWriter('/proc/vncua-test/run').writeResult({ status: 'error', steps: 0, durationMs: 0 }))).toBe('OUTPUT_ERR_PSEUDO_FS');
  }, 10_000);
});
