import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
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

  it('hands WebSocket upgrades to the upgrade hook; without one they are refused', async () => {
    const plain = new WebSocket(`${server.url.replace('http:', 'ws:')}ws`);
    const refused = await new Promise<string>((r) => {
      plain.once('error', (e) => r(e.message));
      plain.once('open', () => r('open'));
    });
    expect(refused).not.toBe('open');
    const wss = new WebSocketServer({ noServer: true });
    const hooked = await startStaticServer({
      root: dir,
      upgrade: (req, socket, head) => {
        if (req.url !== '/echo') return void socket.destroy();
        wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (d) => ws.send(`echo ${d}`)));
      },
    });
    try {
      const ws = new WebSocket(`${hooked.url.replace('http:', 'ws:')}echo`);
      await new Promise((r, j) => {
        ws.once('open', r);
        ws.once('error', j);
      });
      const answer = new Promise<string>((r) => ws.once('message', (d) => r(String(d))));
      ws.send('hi');
      expect(await answer).toBe('echo hi');
      ws.terminate();
    } finally {
      wss.close();
      await hooked.close();
    }
  });
});
