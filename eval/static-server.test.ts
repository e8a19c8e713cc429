import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { request, Agent as HttpAgent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { contentTypeFor, resolveInside, SPARE_PAGE_PATH, startStaticServer, type StaticServer } from './static-server.ts';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Local port of the socket that carried the request (equal ports = the connection was reused). */
  localPort: number | undefined;
}

/** Send a raw request path (not normalized by URL parsing, so traversal attempts reach the server as written). */
function get(base: string, path: string, opts: { method?: string; agent?: HttpAgent } = {}): Promise<Reply> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: opts.method ?? 'GET', agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), localPort: req.socket?.localPort }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('startStaticServer', () => {
  let dir: string;
  let outside: string;
  let server: StaticServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-static-'));
    outside = await mkdtemp(join(tmpdir(), 'vncua-static-outside-'));
    await mkdir(join(dir, 'pages', 'sub'), { recursive: true });
    await writeFile(join(dir, 'pages', 'a.html'), '<!doctype html><p>Grüße 東京</p>');
    await writeFile(join(dir, 'pages', 'app.js'), 'console.log("é");');
    await writeFile(join(dir, 'pages', 'style.css'), 'body{}');
    await writeFile(join(dir, 'tasks.json'), '[{"id":"ü"}]');
    await writeFile(join(dir, 'blob.bin'), Buffer.from([0, 1, 2, 3]));
    await writeFile(join(dir, 'pages', 'sub', 'index.html'), '<p>index</p>');
    await writeFile(join(dir, 'with space.html'), '<p>space</p>');
    await writeFile(join(outside, 'secret.txt'), 'top secret');
    await symlink(join(outside, 'secret.txt'), join(dir, 'link.txt'));
    server = await startStaticServer({ root: dir });
  });

  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 with an OS-assigned port and a base URL ending in /', () => {
    const u = new URL(server.url);
    expect(u.hostname).toBe('127.0.0.1');
    expect(Number(u.port)).toBeGreaterThan(0);
    expect(u.pathname).toBe('/');
  });

  it("answers the spares' empty page (SPARE_PAGE_PATH) on the suite's origin, beside the suite's files", async () => {
    const spare = await get(server.url, `${SPARE_PAGE_PATH}?x=1`);
    expect(spare.status).toBe(200);
    expect(spare.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(spare.headers['cache-control']).toBe('no-store');
    expect(spare.body).toMatch(/^<!doctype html>/);
    expect(spare.body).not.toMatch(/<body|<p/);
    expect((await get(server.url, '/.vncua/other')).status).toBe(404);
    expect((await get(server.url, '/pages/a.html')).status).toBe(200);
  });

  it('serves files with their content types (UTF-8 for text) and exact bytes', async () => {
    const html = await get(server.url, '/pages/a.html');
    expect(html.status).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.body).toBe('<!doctype html><p>Grüße 東京</p>');
    expect(html.headers['content-length']).toBe(String(Buffer.byteLength(html.body)));
    expect((await get(server.url, '/pages/app.js')).headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect((await get(server.url, '/pages/style.css')).headers['content-type']).toBe('text/css; charset=utf-8');
    const json = await get(server.url, '/tasks.json');
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.body).toBe('[{"id":"ü"}]');
    expect((await get(server.url, '/blob.bin')).headers['content-type']).toBe('application/octet-stream');
  });

  it("ignores the query string, decodes %-escapes and serves a directory's index.html", async () => {
    expect((await get(server.url, '/pages/a.html?x=1#f')).status).toBe(200);
    expect((await get(server.url, '/with%20space.html')).body).toBe('<p>space</p>');
    expect((await get(server.url, '/pages/sub/')).body).toBe('<p>index</p>');
    expect((await get(server.url, '/pages/./a.html')).status).toBe(200);
  });

  it('answers HEAD without a body and refuses other methods with 405', async () => {
    const head = await get(server.url, '/pages/a.html', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    const post = await get(server.url, '/pages/a.html', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('404s missing files and directories without an index', async () => {
    for (const path of ['/nope.html', '/pages/', '/pages/a.html/x', '/%E0%A4%A']) {
      const r = await get(server.url, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).toBe('not found\n');
    }
  });

  it('never serves anything outside the root (.., encoded separators, symlinks)', async () => {
    const name = outside.split('/').pop()!;
    const attempts = [
      `/../${name}/secret.txt`,
      `/pages/../../${name}/secret.txt`,
      `/%2e%2e/${name}/secret.txt`,
      `/pages/%2e%2e%2f%2e%2e%2f${name}%2fsecret.txt`,
      `/..%5c${name}%5csecret.txt`,
      '/pages/..%2f..%2fetc%2fpasswd',
      '/../../../../etc/passwd',
      '//etc/passwd',
      '/pages/a.html%00.png',
      '/link.txt',
    ];
    for (const path of attempts) {
      const r = await get(server.url, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain('top secret');
      expect(r.body, path).not.toContain('root:');
    }
    // Dots inside a name are not traversal.
    expect(resolveInside(dir, '/pages/a..html')).toBe(join(dir, 'pages', 'a..html'));
    expect(resolveInside(dir, '/a/../b')).toBeNull();
  });

  it('keeps connections alive between requests', async () => {
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    try {
      const a = await get(server.url, '/pages/a.html', { agent });
      const b = await get(server.url, '/pages/style.css', { agent });
      const c = await get(server.url, '/nope', { agent });
      expect(a.headers.connection).toBe('keep-alive');
      expect(a.localPort).toBeDefined();
      expect(b.localPort).toBe(a.localPort);
      expect(c.localPort).toBe(a.localPort);
    } finally {
      agent.destroy();
    }
  });

  it('maps extensions case-insensitively', () => {
    expect(contentTypeFor('X.HTML')).toBe('text/html; charset=utf-8');
    expect(contentTypeFor('a.json')).toBe('application/json; charset=utf-8');
    expect(contentTypeFor('noext')).toBe('application/octet-stream');
  });
});

describe('startStaticServer errors and close', () => {
  it('rejects a missing root with EVAL_ERR_STATIC_SERVER', async () => {
    const err = await startStaticServer({ root: join(tmpdir(), `vncua-no-such-dir-${process.pid}`) }).catch((e: unknown) => e);
    expect(isVncuaError(err, 'EVAL_ERR_STATIC_SERVER')).toBe(true);
  });

  it('rejects a file as root, and an already aborted signal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-static-'));
    try {
      await writeFile(join(dir, 'f.txt'), 'x');
      const notDir = await startStaticServer({ root: join(dir, 'f.txt') }).catch((e: unknown) => e);
      expect(isVncuaError(notDir, 'EVAL_ERR_STATIC_SERVER')).toBe(true);
      const aborted = await startStaticServer({ root: dir, signal: AbortSignal.abort() }).catch((e: unknown) => e);
      expect(isVncuaError(aborted, 'EVAL_ERR_STATIC_SERVER')).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('close() stops listening (idempotent), and so does the signal', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-static-'));
    try {
      await writeFile(join(dir, 'a.txt'), 'a');
      const s = await startStaticServer({ root: dir });
      expect((await get(s.url, '/a.txt')).body).toBe('a');
      await s.close();
      await s.close();
      await expect(get(s.url, '/a.txt')).rejects.toThrow(/ECONNREFUSED/);

      const ac = new AbortController();
      const t = await startStaticServer({ root: dir, signal: ac.signal });
      expect((await get(t.url, '/a.txt')).status).toBe(200);
      ac.abort();
      // No close() call: the signal alone stops the server.
      let refused = false;
      for (let i = 0; i < 100 && !refused; i++) {
        refused = await get(t.url, '/a.txt').then(
          () => false,
          (e: Error) => /ECONNREFUSED/.test(e.message),
        );
        if (!refused) await new Promise((r) => setTimeout(r, 20));
      }
      expect(refused).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
