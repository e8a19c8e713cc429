import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStaticServer, type StaticServer } from './static-server.ts';

// The path-safety, method, content-type, keep-alive and start-error cases are in eval/static-server.test.ts.
describe('harness startStaticServer (sirv)', () => {
  let dir: string;
  let server: StaticServer;
  let hits = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-static-h-'));
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'page.html'), 'v1');
    await writeFile(join(dir, 'a,b@2x.txt'), 'odd name');
    await writeFile(join(dir, 'sub', 'index.html'), 'sub index');
    await writeFile(join(dir, 'shared.html'), 'shared');
    server = await startStaticServer({
      root: dir,
      handle: (req, res) => {
        if (req.url === '/count') {
          hits++;
          res.writeHead(200, { 'content-type': 'text/plain' }).end(String(hits));
          return true;
        }
        if (req.url?.startsWith('/alias/')) req.url = '/shared.html';
        return false;
      },
    });
  });

  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads files again on every request and says no-store', async () => {
    const first = await fetch(`${server.url}page.html`);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(await first.text()).toBe('v1');
    await writeFile(join(dir, 'page.html'), 'version 2');
    const second = await fetch(`${server.url}page.html`);
    expect(await second.text()).toBe('version 2');
    expect(second.headers.get('content-length')).toBe('9');
  });

  it('serves exact names only (no /x → /x.html guess), a directory as its index.html, and odd names', async () => {
    expect((await fetch(`${server.url}page`)).status).toBe(404);
    expect(await (await fetch(`${server.url}sub`)).text()).toBe('sub index');
    expect(await (await fetch(`${server.url}sub/`)).text()).toBe('sub index');
    expect(await (await fetch(`${server.url}a%2Cb%402x.txt`)).text()).toBe('odd name');
    expect(await (await fetch(`${server.url}a,b@2x.txt`)).text()).toBe('odd name');
  });

  it('lets a handle hook answer or rewrite a request first', async () => {
    expect(await (await fetch(`${server.url}count`)).text()).toBe('1');
    expect(await (await fetch(`${server.url}count`, { method: 'POST' })).text()).toBe('2');
    const aliased = await fetch(`${server.url}alias/anything.html`);
    expect(aliased.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await aliased.text()).toBe('shared');
  });
});
