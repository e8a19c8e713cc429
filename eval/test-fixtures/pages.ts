/**
 * Test pages for the eval runner, served on 127.0.0.1 (OS-assigned port):
 * - /ok/<name>.html: one button filling the window; a click shows `code#1` (the uitask sentinel);
 * - /never/<name>.html: the same button, but a click shows nothing.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const page = (succeed: boolean) => `<!doctype html><html><head><meta charset="utf-8"><title>eval test</title>
<style>html,body{margin:0;height:100%}button{width:100vw;height:100vh;font-size:40px;border:0;background:#cde}</style></head>
<body><button id="b" onclick="${succeed ? "document.getElementById('r').textContent='code#1'" : "document.getElementById('r').textContent='nothing'"}">click me</button><p id="r"></p></body></html>`;

/** Serve the test pages; `url` ends with '/'. */
export async function serveTestPages(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const m = /^\/(ok|never)\/[\w-]+\.html$/.exec(path);
    if (!m) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page(m[1] === 'ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
