/**
 * A real local run (runSuite on a real desktop: Xvnc, Chromium, the recording proxy; a click agent) put through
 * a worker's upload path: copied into a staging dir of uploadSink, uploaded to a results receiver over another
 * results root, committed. The tree there is the local run's, byte for byte (names, sizes, sha256, empty dirs),
 * and `vncua score` and `vncua process` (child processes, as a user runs them) read it as they read the local one.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSuite } from '../../runner.ts';
import { ClickAgent } from '../../test-fixtures/click-agent.ts';
import { serveTestPages, type TestPages } from '../../test-fixtures/pages.ts';
import { newUploadToken, startResultsReceiver } from './receiver.ts';
import { uploadSink } from './sink.ts';
import { treeDigest } from './test-helpers.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const REL = 'clicker/800_600/ok-1';

/** `vncua ARGS` in a child; its exit code and output (killed after 120 s). */
function vncua(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/vncua.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`vncua ${args.join(' ')} did not exit within 120 s:\n${stdout}\n${stderr}`));
    }, 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

let pages: TestPages;
let base: string;
beforeAll(async () => {
  pages = await serveTestPages();
  base = await mkdtemp(join(tmpdir(), 'vncua-upload-tree-'));
});
afterAll(async () => {
  await pages?.close();
  await rm(base, { recursive: true, force: true });
});

describe('a real run through staging, upload and commit', () => {
  it('lands byte for byte what the local run wrote, and vncua score and vncua process read it alike', async () => {
    const local = join(base, 'local');
    const summary = await runSuite({
      out: local,
      taskFile: '/suite/tasks.json',
      maxSteps: 5,
      tasks: [{ id: 'ok-1', goal: 'Click the button', url: `${pages.url}ok/a.html`, success: { sentinel: '>code#1<' }, group: 'ok' }],
      agent: { name: 'clicker', build: (ctx) => new ClickAgent(ctx.agentOptions) },
      resolutions: [{ width: 800, height: 600 }],
      workers: 1,
    });
    expect([summary.ran, summary.successes]).toEqual([1, 1]);
    const run = join(local, REL);
    const want = await treeDigest(run);
    expect(Object.keys(want)).toEqual(expect.arrayContaining(['task.json', 'result.json', 'execution.json', 'recording/recording.json', 'recording/server.rfb.bin']));

    const remote = join(base, 'remote');
    const token = newUploadToken();
    const rx = await startResultsReceiver({ out: remote, token });
    const sink = uploadSink({ url: rx.url, token, tmpRoot: join(base, 'worker-tmp') });
    try {
      const staged = await sink.staging('suite.ok-1@800x600#1', 'attempt-1');
      await cp(run, staged, { recursive: true });
      await sink.commit(staged, REL);
    } finally {
      sink.close();
      await rx.close();
    }
    expect(await treeDigest(join(remote, REL))).toEqual(want);
    expect(await treeDigest(remote, ['.vncua-queue'])).toEqual(await treeDigest(local));

    // vncua score on either root: the same scores (scores.json but for where and when it was made).
    const scored = async (root: string) => {
      const r = await vncua(['score', root]);
      expect(r.code, r.stderr).toBe(0);
      const { root: _root, generated_at: _at, ...rest } = JSON.parse(await readFile(join(root, 'scores.json'), 'utf8'));
      return { stdout: r.stdout.replaceAll(root, 'ROOT'), scores: rest };
    };
    const [a, b] = [await scored(local), await scored(remote)];
    expect(b.scores.runs).toHaveLength(1);
    expect(b.scores.runs[0]).toMatchObject({ agent: 'clicker', resolution: '800x600', task_id: 'ok-1', success: true });
    expect(b).toEqual(a);

    // vncua process on the uploaded root: processes the one run (the queue's own directory is skipped).
    const p = await vncua(['process', remote]);
    expect(p.code, p.stderr + p.stdout).toBe(0);
    expect(Object.keys(await treeDigest(join(remote, REL))).length).toBeGreaterThan(Object.keys(want).length);
  });
});
