/**
 * The results receiver on a real HTTP server (127.0.0.1, OS port), spoken to with raw requests: the token,
 * path traversal attempts, checks of size and sha256, and results roots it cannot write.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { unwritableDir } from '../../../harness/test-helpers/unwritable.ts';
import { makeTestCerts } from '../test-helpers.ts';
import { newUploadToken, type ResultsReceiver, startResultsReceiver } from './receiver.ts';
import { uploadSink } from './sink.ts';

const TOKEN = newUploadToken();
let base: string;
let out: string;
let rx: ResultsReceiver;

/** One raw request: `path` is sent exactly as given (no URL normalisation of `..`). */
function raw(method: string, path: string, o: { token?: string | null; body?: Buffer | string; headers?: Record<string, string | number> } = {}) {
  const u = new URL(rx.url);
  return new Promise<{ status: number; body: any }>((ok, fail) => {
    const body = o.body === undefined ? undefined : Buffer.from(o.body);
    const req = request({
      agent: false,
      host: u.hostname,
      port: u.port,
      method,
      path,
      headers: {
        ...(o.token === null ? {} : { authorization: `Bearer ${o.token ?? TOKEN}` }),
        ...(body ? { 'content-length': body.length } : {}),
        ...o.headers,
      },
    });
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        ok({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
      });
    });
    req.end(body);
  });
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const fileHeaders = (b: Buffer | string) => ({ 'x-vncua-size': Buffer.byteLength(b), 'x-vncua-sha256': sha(b) });

async function begin(): Promise<string> {
  const r = await raw('POST', '/v1/uploads');
  expect(r.status).toBe(201);
  return r.body.id;
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'vncua-receiver-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));
afterEach(async () => {
  await rx?.close();
});

describe('startResultsReceiver', () => {
  it('answers 401 to a wrong or missing token, on every route, and writes nothing', async () => {
    out = join(base, 'auth');
    rx = await startResultsReceiver({ out, token: TOKEN });
    expect(rx.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    for (const token of [null, 'x', `${TOKEN}x`, TOKEN.slice(0, -1)]) {
      const r = await raw('POST', '/v1/uploads', { token });
      expect(r.status).toBe(401);
      expect(r.body.message).toMatch(/token/);
    }
    const id = await begin();
    const r = await raw('PUT', `/v1/uploads/${id}/f/a.txt`, { token: 'nope-nope-nope-nope', body: 'hi', headers: fileHeaders('hi') });
    expect(r.status).toBe(401);
    expect(await readdir(join(out, '.vncua-queue', 'incoming', id))).toEqual([]);
  });

  it('refuses path traversal in file paths and run dirs (400 QUEUE_ERR_BAD_PATH), writing nothing outside', async () => {
    out = join(base, 'trav', 'out');
    const outside = join(base, 'trav', 'outside');
    await mkdir(outside, { recursive: true });
    await mkdir(out, { recursive: true });
    await symlink(outside, join(out, 'evil'));
    rx = await startResultsReceiver({ out, token: TOKEN });
    const id = await begin();
    for (const p of ['../../../x', '%2e%2e/%2e%2e/%2e%2e/%2e%2e/x', 'a/%2e%2e/%2e%2e/%2e%2e/x', 'a%2F..%2F..%2Fx', '/etc/x', 'a//b', '.', 'a%00b']) {
      const r = await raw('PUT', `/v1/uploads/${id}/f/${p}`, { body: 'x', headers: fileHeaders('x') });
      expect([400, 404], p).toContain(r.status);
      if (r.status === 400) expect(r.body.code, p).toBe('QUEUE_ERR_BAD_PATH');
    }
    const ok = await raw('PUT', `/v1/uploads/${id}/f/result.json`, { body: '{}', headers: fileHeaders('{}') });
    expect(ok.status).toBe(201);
    for (const rel of ['../outside/t', '/abs/t', 'a/../../t', '.vncua-queue/incoming/t', 'agent/.x/t', 'evil/1280_800/t', 'evil', '']) {
      const r = await raw('POST', `/v1/uploads/${id}/commit`, { body: JSON.stringify({ rel, files: [{ path: 'result.json', size: 2, sha256: sha('{}') }], dirs: [] }) });
      expect(r.status, rel).toBe(400);
      expect(r.body.code, rel).toBe('QUEUE_ERR_BAD_PATH');
    }
    const r = await raw('POST', `/v1/uploads/${id}/commit`, {
      body: JSON.stringify({ rel: 'a/1_1/t', files: [{ path: 'result.json', size: 2, sha256: sha('{}') }], dirs: ['../up'] }),
    });
    expect([r.status, r.body.code]).toEqual([400, 'QUEUE_ERR_BAD_PATH']);
    expect(await readdir(outside)).toEqual([]);
    expect(existsSync(join(base, 'trav', 'x'))).toBe(false);
    expect((await readdir(out)).sort()).toEqual(['.vncua-queue', 'evil']);
  });

  it('lands a file only when its size and sha256 match the declared ones (422 otherwise; nothing kept)', async () => {
    out = join(base, 'sha');
    rx = await startResultsReceiver({ out, token: TOKEN });
    const id = await begin();
    const up = join(out, '.vncua-queue', 'incoming', id);
    const bad = await raw('PUT', `/v1/uploads/${id}/f/rec/a.bin`, { body: 'hello', headers: { 'x-vncua-size': 5, 'x-vncua-sha256': sha('hellO') } });
    expect([bad.status, bad.body.code]).toEqual([422, 'QUEUE_ERR_UPLOAD']);
    expect(bad.body.message).toMatch(/sha256/);
    const short = await raw('PUT', `/v1/uploads/${id}/f/rec/a.bin`, { body: 'hell', headers: { 'x-vncua-size': 5, 'x-vncua-sha256': sha('hello') } });
    expect(short.status).toBe(422);
    expect(await readdir(up)).toEqual([]);
    expect(await readdir(`${up}.part`)).toEqual([]);
    const good = await raw('PUT', `/v1/uploads/${id}/f/rec/a.bin`, { body: 'hello', headers: fileHeaders('hello') });
    expect(good.status).toBe(201);
    expect(await readFile(join(up, 'rec', 'a.bin'), 'utf8')).toBe('hello');
    // A commit must list exactly what the upload holds.
    const missing = await raw('POST', `/v1/uploads/${id}/commit`, {
      body: JSON.stringify({
        rel: 'a/1_1/t',
        files: [
          { path: 'rec/a.bin', size: 5, sha256: sha('hello') },
          { path: 'result.json', size: 2, sha256: sha('{}') },
        ],
        dirs: [],
      }),
    });
    expect([missing.status, missing.body.code]).toEqual([422, 'QUEUE_ERR_UPLOAD']);
    const unknown = await raw('PUT', '/v1/uploads/0123456789abcdef0123456789abcdef/f/x', { body: 'x', headers: fileHeaders('x') });
    expect(unknown.status).toBe(404);
    const done = await raw('POST', `/v1/uploads/${id}/commit`, {
      body: JSON.stringify({ rel: 'a/1_1/t', files: [{ path: 'rec/a.bin', size: 5, sha256: sha('hello') }], dirs: ['rec', 'empty'] }),
    });
    expect(done.status).toBe(200);
    expect((await readdir(join(out, 'a', '1_1', 't'))).sort()).toEqual(['empty', 'rec']);
    // The same commit again (its answer lost): succeeds without touching anything; the upload is gone.
    const again = await raw('POST', `/v1/uploads/${id}/commit`, {
      body: JSON.stringify({ rel: 'a/1_1/t', files: [{ path: 'rec/a.bin', size: 5, sha256: sha('hello') }], dirs: [] }),
    });
    expect(again.status).toBe(200);
    expect(await readdir(join(out, '.vncua-queue', 'incoming'))).toEqual([]);
  });

  it('takes the sha256 as a trailer after a chunked body, and checks it as a header', async () => {
    out = join(base, 'trailer');
    rx = await startResultsReceiver({ out, token: TOKEN });
    const id = await begin();
    const u = new URL(rx.url);
    const put = (path: string, body: string, trailerSha: string | null) =>
      new Promise<number>((ok, fail) => {
        const req = request({
          agent: false,
          host: u.hostname,
          port: u.port,
          method: 'PUT',
          path: `/v1/uploads/${id}/f/${path}`,
          headers: { authorization: `Bearer ${TOKEN}`, 'transfer-encoding': 'chunked', trailer: 'x-vncua-sha256', 'x-vncua-size': Buffer.byteLength(body) },
        });
        req.on('error', fail);
        req.on('response', (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        });
        req.write(body.slice(0, 3));
        req.write(body.slice(3));
        if (trailerSha !== null) req.addTrailers({ 'x-vncua-sha256': trailerSha });
        req.end();
      });
    expect(await put('a.bin', 'hello world', sha('hello world'))).toBe(201);
    expect(await put('b.bin', 'hello world', sha('hello worlD'))).toBe(422);
    expect(await put('c.bin', 'hello world', null)).toBe(400);
    expect((await readdir(join(out, '.vncua-queue', 'incoming', id))).sort()).toEqual(['a.bin']);
  });

  it('sweeps incoming uploads untouched for the max age, at start and on demand', async () => {
    out = join(base, 'sweep');
    rx = await startResultsReceiver({ out, token: TOKEN });
    const id = await begin();
    await raw('PUT', `/v1/uploads/${id}/f/a`, { body: 'a', headers: fileHeaders('a') });
    expect(await rx.sweep()).toBe(0); // young
    await rx.close();
    rx = await startResultsReceiver({ out, token: TOKEN, incomingMaxAgeMs: 0 });
    expect(await readdir(join(out, '.vncua-queue', 'incoming'))).toEqual([]);
    const id2 = await begin();
    expect(await rx.sweep(0)).toBe(1);
    expect((await raw('PUT', `/v1/uploads/${id2}/f/a`, { body: 'a', headers: fileHeaders('a') })).status).toBe(404);
  });

  it('fails at start with QUEUE_ERR_RESULTS_UNWRITABLE on a results root it cannot write', async () => {
    const file = join(base, 'a-file');
    await writeFile(file, 'x');
    await expect(startResultsReceiver({ out: file, token: TOKEN })).rejects.toMatchObject({ code: 'QUEUE_ERR_RESULTS_UNWRITABLE' });
    await expect(startResultsReceiver({ out: join(file, 'sub'), token: TOKEN })).rejects.toMatchObject({ code: 'QUEUE_ERR_RESULTS_UNWRITABLE' });
    await expect(startResultsReceiver({ out: '/proc/vncua-results', token: TOKEN })).rejects.toMatchObject({ code: 'QUEUE_ERR_RESULTS_UNWRITABLE' });
    const ro = await unwritableDir();
    try {
      if (ro.runAs) return; // root without mounts: the bits do not apply to this process; the cases above still ran
      const e = await startResultsReceiver({ out: join(ro.dir, 'results'), token: TOKEN }).catch((x) => x);
      expect(e).toMatchObject({ code: 'QUEUE_ERR_RESULTS_UNWRITABLE' });
      expect(e.message).toContain(ro.dir);
    } finally {
      await ro.close();
    }
  });

  it('fails with QUEUE_ERR_LISTEN on a short token or a port in use', async () => {
    await expect(startResultsReceiver({ out: join(base, 'l'), token: 'short' })).rejects.toMatchObject({ code: 'QUEUE_ERR_LISTEN' });
    const busy = createServer();
    await new Promise<void>((ok) => busy.listen(0, '127.0.0.1', ok));
    try {
      const port = (busy.address() as { port: number }).port;
      await expect(startResultsReceiver({ out: join(base, 'l'), token: TOKEN, port })).rejects.toMatchObject({ code: 'QUEUE_ERR_LISTEN', details: { port } });
    } finally {
      busy.close();
    }
  });

  it('serves HTTPS with a certificate and key: an https:// URL a client trusting the CA reaches; a sink that does not trust it gets QUEUE_ERR_TLS', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'vncua-rx-tls-'));
    try {
      const certs = makeTestCerts(certDir);
      rx = await startResultsReceiver({ out: join(base, 'tls'), token: TOKEN, tls: { cert: await readFile(certs.cert), key: await readFile(certs.key) } });
      expect(rx.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
      const status = await new Promise<number>((ok, fail) => {
        const req = httpsRequest(new URL('/v1/uploads', rx!.url), { method: 'POST', ca: readFileSync(certs.ca), headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
          res.resume();
          ok(res.statusCode ?? 0);
        });
        req.on('error', fail);
        req.end();
      });
      expect(status).toBe(201);
      const sink = uploadSink({ url: rx.url, token: TOKEN });
      try {
        await expect(sink.check()).rejects.toMatchObject({ code: 'QUEUE_ERR_TLS', message: expect.stringContaining('NODE_EXTRA_CA_CERTS') });
      } finally {
        sink.close();
      }
      // A key that is not the certificate's: QUEUE_ERR_LISTEN before listening.
      const other = makeTestCerts(await mkdtemp(join(certDir, 'other-')));
      await expect(
        startResultsReceiver({ out: join(base, 'tls2'), token: TOKEN, tls: { cert: await readFile(certs.cert), key: await readFile(other.key) } }),
      ).rejects.toMatchObject({
        code: 'QUEUE_ERR_LISTEN',
        message: expect.stringContaining('TLS certificate and key'),
      });
    } finally {
      await rm(certDir, { recursive: true, force: true });
    }
  });

  it('stops answering when its signal aborts', async () => {
    const ac = new AbortController();
    rx = await startResultsReceiver({ out: join(base, 'abort'), token: TOKEN, signal: ac.signal });
    expect((await raw('POST', '/v1/uploads')).status).toBe(201);
    ac.abort();
    await rx.close();
    await expect(raw('POST', '/v1/uploads')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
