/**
 * uploadSink against a real results receiver (127.0.0.1, OS ports), with a staged run holding an 8 MiB
 * recording: the tree lands byte for byte and scores; a link cut mid-file is retried; a worker that stops
 * or dies mid-upload leaves nothing scored (and a retry elsewhere succeeds); a wrong token, a finished
 * run at the target, a bad run dir give their codes.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDir } from '../../../harness/test-helpers/files.ts';
import { findRunDirs, scoreRoot } from '../../score.ts';
import { newUploadToken, type ResultsReceiver, startResultsReceiver } from './receiver.ts';
import { type UploadSink, uploadSink } from './sink.ts';
import { type FaultyProxy, faultyProxy, treeDigest, writeStagedRun } from './test-helpers.ts';

const TOKEN = newUploadToken();
const REL = 'clicker/64_48/t1';
let base: string;
let n = 0;
let out: string;
let tmpRoot: string;
let rx: ResultsReceiver | undefined;
let proxy: FaultyProxy | undefined;
const sinks: UploadSink[] = [];

/** A fresh results root with a receiver, and a sink (through `via` when given). */
async function setup(o: { via?: (url: string) => Promise<FaultyProxy>; token?: string; attempts?: number } = {}) {
  n++;
  out = join(base, `out-${n}`);
  tmpRoot = join(base, `tmp-${n}`);
  rx = await startResultsReceiver({ out, token: TOKEN });
  proxy = o.via ? await o.via(rx.url) : undefined;
  const sink = uploadSink({ url: proxy?.url ?? rx.url, token: o.token ?? TOKEN, tmpRoot, attempts: o.attempts, backoffMs: 20 });
  sinks.push(sink);
  return sink;
}

/** A staged attempt of job `job` holding the test run; its tree digest. */
async function stage(sink: UploadSink, job = 'suite.t1@64x48#1', token = 'a1') {
  const dir = await sink.staging(job, token);
  expect(await readdir(dir)).toEqual([]);
  await writeStagedRun(dir);
  return { dir, tree: await treeDigest(dir) };
}

const incoming = () => readdir(join(out, '.vncua-queue', 'incoming'));

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'vncua-sink-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));
afterEach(async () => {
  for (const s of sinks.splice(0)) s.close();
  await proxy?.close();
  await rx?.close();
  proxy = undefined;
  rx = undefined;
});

describe('uploadSink', () => {
  it('lands the staged tree at <out>/<rel> byte for byte (names, sizes, sha256, empty dirs), scores it, and removes the staging dir', async () => {
    const sink = await setup();
    const { dir, tree } = await stage(sink);
    expect(Object.keys(tree)).toContain('recording/server.1.rfb.bin');
    await sink.commit(dir, REL);
    expect(await treeDigest(join(out, REL))).toEqual(tree);
    expect(existsSync(dir)).toBe(false);
    expect(await incoming()).toEqual([]);
    const report = await scoreRoot(out);
    expect(report.runs.map((r) => [r.agent, r.resolution, r.task_id, r.success])).toEqual([['clicker', '64x48', 't1', true]]);
  });

  it('retries a file whose connection is cut mid-upload: the retry lands it whole and no part file is left', async () => {
    const sink = await setup({ via: (url) => faultyProxy(url, { afterBytes: 3 * 1024 * 1024, mode: 'cut', times: 1 }) });
    const { dir, tree } = await stage(sink);
    await sink.commit(dir, REL);
    expect(proxy!.cuts).toBe(1);
    expect(await treeDigest(join(out, REL))).toEqual(tree);
    expect(await incoming()).toEqual([]);
  });

  it('a worker stopped mid-upload (abort) leaves nothing scored; the upload is dropped and a later commit succeeds', async () => {
    const sink = await setup({ via: (url) => faultyProxy(url, { afterBytes: 3 * 1024 * 1024, mode: 'stall', times: 1 }) });
    const { dir, tree } = await stage(sink);
    const ac = new AbortController();
    const p = sink.commit(dir, REL, { signal: ac.signal }).catch((e) => e);
    await waitFor(() => proxy!.stalls === 1, 'the upload to stall mid-file');
    // Mid-upload: the run is not in the results root; scoring sees nothing.
    expect(await findRunDirs(out)).toEqual([]);
    expect((await incoming()).length).toBeGreaterThan(0);
    ac.abort();
    const e = await p;
    expect(e).toMatchObject({ code: 'QUEUE_ERR_UPLOAD', details: { aborted: true } });
    expect(await treeDigest(dir)).toEqual(tree); // staging kept
    await expect(scoreRoot(out)).rejects.toMatchObject({ code: 'EVAL_ERR_NO_RUNS' });
    await waitFor(async () => (await incoming()).length === 0, 'the dropped upload to be removed');
    await sink.commit(dir, REL);
    expect(await treeDigest(join(out, REL))).toEqual(tree);
  });

  it('a worker that dies mid-upload leaves its upload under incoming/ (never scored, swept later); another worker commits the run', async () => {
    const sink = await setup({ via: (url) => faultyProxy(url, { afterBytes: 3 * 1024 * 1024, mode: 'stall', times: 1 }), attempts: 2 });
    const { dir, tree } = await stage(sink);
    const p = sink.commit(dir, REL).catch((e) => e);
    await waitFor(() => proxy!.stalls === 1, 'the upload to stall mid-file');
    proxy!.kill(); // the worker's host is gone: no retry, no drop reaches the receiver
    const e = await p;
    expect(e).toMatchObject({ code: 'QUEUE_ERR_UPLOAD' });
    expect(e.message).toMatch(/after 2 tries/);
    const left = await incoming();
    expect(left.filter((x) => !x.endsWith('.part'))).toHaveLength(1);
    expect(await findRunDirs(out)).toEqual([]);
    await expect(scoreRoot(out)).rejects.toMatchObject({ code: 'EVAL_ERR_NO_RUNS' });
    // The receiver learns that the dead worker's connection is gone on its own time (a loaded machine:
    // later); until then the upload counts as active and the sweep leaves it.
    let swept = 0;
    await waitFor(async () => (swept += await rx!.sweep(0)) > 0, 'the dead upload to be swept');
    expect(swept).toBe(1);
    expect(await incoming()).toEqual([]);
    // The job runs again on another worker, which uploads straight to the receiver.
    const other = uploadSink({ url: rx!.url, token: TOKEN, tmpRoot: join(base, 'other') });
    sinks.push(other);
    const again = await stage(other, 'suite.t1@64x48#1', 'a2');
    await other.commit(again.dir, REL);
    expect(await treeDigest(join(out, REL))).toEqual(again.tree);
    expect(again.tree).not.toEqual(tree); // its own attempt (another random recording) landed
    expect((await scoreRoot(out)).runs).toHaveLength(1);
  });

  it('a wrong token: QUEUE_ERR_UPLOAD saying the token is wrong, before any file is sent; the staging dir is kept', async () => {
    const sink = await setup({ token: newUploadToken() });
    const { dir, tree } = await stage(sink);
    const e = await sink.commit(dir, REL).catch((x) => x);
    expect(e).toMatchObject({ code: 'QUEUE_ERR_UPLOAD', details: { status: 401, step: 'begin' } });
    expect(e.message).toMatch(/token is wrong/);
    expect(await treeDigest(dir)).toEqual(tree);
    expect(await incoming()).toEqual([]);
    expect((await readdir(out)).sort()).toEqual(['.vncua-queue']);
  });

  it('refuses to commit over a finished run (QUEUE_ERR_ALREADY_FINISHED), touching nothing there, but replaces a leftover', async () => {
    const sink = await setup();
    const target = join(out, REL);
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'result.json'), JSON.stringify({ status: 'finished', steps: 1, durationMs: 5 }));
    await writeFile(join(target, 'execution.json'), '[]');
    const before = await snapshotDir(target);
    const { dir, tree } = await stage(sink);
    const e = await sink.commit(dir, REL).catch((x) => x);
    expect(e).toMatchObject({ code: 'QUEUE_ERR_ALREADY_FINISHED', details: { status: 409 } });
    expect(await snapshotDir(target)).toEqual(before);
    expect(await treeDigest(dir)).toEqual(tree);
    await waitFor(async () => (await incoming()).length === 0, 'the refused upload to be dropped');

    // A leftover (a partial trace of a dead attempt, a stray file): replaced whole.
    const rel2 = 'clicker/64_48/t2';
    await mkdir(join(out, rel2, 'recording'), { recursive: true });
    await writeFile(join(out, rel2, 'partial_execution.json'), '[]');
    await writeFile(join(out, rel2, 'recording', 'stray.bin'), 'x');
    await sink.commit(dir, rel2);
    expect(await treeDigest(join(out, rel2))).toEqual(tree);
  });

  it('two attempts of one job committing at once: exactly one lands, the other gets QUEUE_ERR_ALREADY_FINISHED', async () => {
    const sink = await setup();
    const a = await stage(sink, 'suite.t1@64x48#1', 'a1');
    const b = await stage(sink, 'suite.t1@64x48#1', 'a2');
    const results = await Promise.allSettled([sink.commit(a.dir, REL), sink.commit(b.dir, REL)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'QUEUE_ERR_ALREADY_FINISHED' });
    const landed = await treeDigest(join(out, REL));
    expect([a.tree, b.tree]).toContainEqual(landed);
    expect((await scoreRoot(out)).runs).toHaveLength(1);
  });

  it('checks the run dir before sending (QUEUE_ERR_BAD_PATH), refuses a symlink in the staging dir, and a bad URL', async () => {
    const sink = await setup();
    const { dir } = await stage(sink);
    await expect(sink.commit(dir, '../escape')).rejects.toMatchObject({ code: 'QUEUE_ERR_BAD_PATH' });
    await expect(sink.commit(dir, '.vncua-queue/x')).rejects.toMatchObject({ code: 'QUEUE_ERR_BAD_PATH' });
    const { symlink } = await import('node:fs/promises');
    await symlink('/etc/passwd', join(dir, 'link'));
    await expect(sink.commit(dir, REL)).rejects.toMatchObject({ code: 'QUEUE_ERR_UPLOAD' });
    expect(await incoming()).toEqual([]);
    expect(() => uploadSink({ url: 'redis://127.0.0.1:1', token: TOKEN })).toThrow(expect.objectContaining({ code: 'QUEUE_ERR_UPLOAD' }));
    await sink.discard(dir);
    expect(existsSync(dir)).toBe(false);
  });

  it('an unreachable receiver: QUEUE_ERR_UPLOAD after the retries, naming the address', async () => {
    const sink = await setup({ attempts: 2 });
    const url = rx!.url;
    await rx!.close();
    const dead = uploadSink({ url, token: TOKEN, tmpRoot, attempts: 2, backoffMs: 10 });
    sinks.push(dead);
    const { dir } = await stage(sink);
    const e = await dead.commit(dir, REL).catch((x) => x);
    expect(e).toMatchObject({ code: 'QUEUE_ERR_UPLOAD', details: { step: 'begin' } });
    expect(e.message).toContain(new URL(url).host);
  });
});

/** Wait until `cond` holds (polled), failing with `what` after 20 s. */
async function waitFor(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
