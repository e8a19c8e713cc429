/**
 * The queue over TLS (`rediss://`), with Debian's redis-server speaking TLS only and a certificate from a test CA:
 * a worker and a coordinator that trust the CA (NODE_EXTRA_CA_CERTS) run a suite to the end, every run once; one
 * that does not trust it is refused with QUEUE_ERR_TLS (one line, exit 2, nothing queued); and the two scheme
 * mix-ups (redis:// to the TLS port, rediss:// to a plain Redis) are QUEUE_ERR_UNREACHABLE naming the other scheme.
 * The results receiver over HTTPS (--results-tls-cert/--results-tls-key, a certificate of a second CA): a worker
 * that does not see --out and does not trust that CA stops with QUEUE_ERR_TLS before running anything; one that
 * trusts it uploads the run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCerts, type TestRedis, type VncuaChild, makeTestCerts, runDirs, spawnVncua, startRedis, waitFor } from '../eval/queue/test-helpers.ts';
import { codeLine, runVncua } from './test-helpers/child.ts';

const BASIC = new URL('../eval/suites/basic/tasks.json', import.meta.url).pathname;
let dir: string;
let certs: TestCerts;
let tls: TestRedis;
const children: VncuaChild[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-queue-tls-'));
  certs = makeTestCerts(dir);
  tls = await startRedis({ tls: certs });
}, 60_000);

afterAll(async () => {
  for (const c of children) await c.kill();
  await tls?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('vncua eval --queue rediss://', () => {
  it('runs a suite over TLS when worker and coordinator trust the CA (NODE_EXTRA_CA_CERTS): every run once', async () => {
    expect(tls.url).toMatch(/^rediss:\/\/127\.0\.0\.1:\d+\/0$/);
    const env = { NODE_EXTRA_CA_CERTS: certs.ca };
    const worker = spawnVncua('worker', ['--queue', tls.url, '--name', 'tls-w1'], env);
    children.push(worker);
    await waitFor(
      () => worker.output().includes('takes jobs'),
      60_000,
      'the worker did not take jobs over TLS',
      () => worker.output(),
    );
    const out = join(dir, 'out');
    const coordinator = spawnVncua('eval', ['--queue', tls.url, '--tasks', BASIC, '--agent', 'replay', '--only', 'click-button,hover-menu', '--out', out], env);
    children.push(coordinator);
    const code = await Promise.race([coordinator.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 240_000))]);
    expect(code, `${coordinator.output()}\n--- worker ---\n${worker.output()}`).toBe(0);
    expect(coordinator.output()).toContain('2/2 done');
    expect(runDirs(out)).toEqual(['replay/1280_800/click-button', 'replay/1280_800/hover-menu']);
    for (const rel of runDirs(out)) expect(JSON.parse(readFileSync(join(out, rel, 'result.json'), 'utf8')).status, rel).toBe('finished');
    const committed = [...worker.output().matchAll(/vncua worker: (\S+@\d+x\d+): [a-z_]+(?: \(success\))?, committed/g)].map((m) => m[1]);
    expect(committed.sort()).toEqual(['click-button@1280x800', 'hover-menu@1280x800']);
    await worker.kill('SIGTERM');
  }, 300_000);

  it('QUEUE_ERR_TLS: a certificate this machine does not trust is refused, by the coordinator and by a worker; nothing is queued', async () => {
    const out = join(dir, 'untrusted');
    const r = await runVncua('eval', ['--queue', tls.url, '--tasks', BASIC, '--agent', 'replay', '--only', 'click-button', '--out', out], { deadlineMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(codeLine(r, 'eval')).toBe('QUEUE_ERR_TLS');
    expect(r.stderr).toMatch(/self-signed certificate/);
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(existsSync(out) ? runDirs(out) : [], 'runs under the results root').toEqual([]);
    const w = await runVncua('worker', ['--queue', tls.url], { deadlineMs: 60_000 });
    expect(w.code, w.stderr).toBe(2);
    expect(codeLine(w, 'worker')).toBe('QUEUE_ERR_TLS');
  }, 150_000);

  it('uploads over HTTPS to a receiver with its own certificate; a worker that does not trust its CA stops with QUEUE_ERR_TLS', async () => {
    const recvDir = join(dir, 'receiver-ca');
    await mkdir(recvDir);
    const recv = makeTestCerts(recvDir);
    const both = join(dir, 'both-cas.pem');
    await writeFile(both, `${await readFile(certs.ca, 'utf8')}${await readFile(recv.ca, 'utf8')}`);
    const out = join(dir, 'https-out');
    await mkdir(out);
    const coordinator = spawnVncua(
      'eval',
      [
        '--queue',
        tls.url,
        '--results-listen',
        '127.0.0.1:0',
        '--results-tls-cert',
        recv.cert,
        '--results-tls-key',
        recv.key,
        '--tasks',
        BASIC,
        '--agent',
        'replay',
        '--only',
        'click-button',
        '--out',
        out,
      ],
      { NODE_EXTRA_CA_CERTS: certs.ca },
    );
    children.push(coordinator);
    await waitFor(
      () => /eval: receiving the results of workers that do not see .* at https:\/\/127\.0\.0\.1:\d+\//.test(coordinator.output()),
      60_000,
      'the coordinator did not start its HTTPS receiver',
      () => coordinator.output(),
    );
    // Workers in their own mount namespace, a fresh tmpfs over --out: they upload.
    const hide = ['unshare', '-m', 'sh', '-c', `mount -t tmpfs vncua-hidden "${out}" && exec "$@"`, 'sh'];
    const untrusting = spawnVncua('worker', ['--queue', tls.url, '--name', 'no-recv-ca'], { NODE_EXTRA_CA_CERTS: certs.ca }, { prefix: hide });
    children.push(untrusting);
    const code = await Promise.race([untrusting.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 120_000))]);
    expect(code, untrusting.output()).toBe(2);
    expect(untrusting.output()).toMatch(
      /QUEUE_ERR_TLS: The results receiver at https:\/\/127\.0\.0\.1:\d+ presented a TLS certificate this machine does not accept \(unable to verify the first certificate\)/,
    );
    expect(untrusting.output()).not.toMatch(/committed/);
    const trusting = spawnVncua('worker', ['--queue', tls.url, '--name', 'both-cas'], { NODE_EXTRA_CA_CERTS: both }, { prefix: hide });
    children.push(trusting);
    const done = await Promise.race([coordinator.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 240_000))]);
    expect(done, `${coordinator.output()}\n--- worker ---\n${trusting.output()}`).toBe(0);
    expect(coordinator.output()).toContain('1/1 done');
    expect(trusting.output()).toMatch(/click-button@1280x800: [a-z_]+(?: \(success\))?, committed/);
    expect(runDirs(out)).toEqual(['replay/1280_800/click-button']);
    await trusting.kill('SIGTERM');
  }, 400_000);

  it('QUEUE_ERR_UNREACHABLE names the other scheme: redis:// to the TLS port, rediss:// to a plain Redis', async () => {
    const plainToTls = await runVncua('worker', ['--queue', tls.url.replace(/^rediss:/, 'redis:')], { deadlineMs: 60_000 });
    expect(plainToTls.code, plainToTls.stderr).toBe(2);
    expect(codeLine(plainToTls, 'worker')).toBe('QUEUE_ERR_UNREACHABLE');
    expect(plainToTls.stderr).toContain('If that port speaks TLS, use rediss://');
    const plain = await startRedis();
    try {
      const tlsToPlain = await runVncua('worker', ['--queue', plain.url.replace(/^redis:/, 'rediss:')], { deadlineMs: 60_000, env: { NODE_EXTRA_CA_CERTS: certs.ca } });
      expect(tlsToPlain.code, tlsToPlain.stderr).toBe(2);
      expect(codeLine(tlsToPlain, 'worker')).toBe('QUEUE_ERR_UNREACHABLE');
      expect(tlsToPlain.stderr).toContain('If that port does not speak TLS, use redis:// instead of rediss://');
    } finally {
      await plain.close();
    }
  }, 150_000);
});
