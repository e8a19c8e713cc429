/**
 * Test pages for the eval runner, served on 127.0.0.1 (OS-assigned port):
 * - /ok/<name>.html: one button filling the window; a click shows `code#1` (the uitask sentinel);
 * - /never/<name>.html: the same button, but a click shows nothing;
 * - /flaky/<name>.html?succeed=2,3: the same button; a click asks the server (synchronously) and shows
 *   `code#1` only when it is the n-th click on that page name with n in `succeed`: a task that
 *   succeeds on some runs only, decided by a counter the server keeps (`clicks(name)`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const STYLE = '<style>html,body{margin:0;height:100%}button{width:100vw;height:100vh;font-size:40px;border:0;background:#cde}</style>';
const shell = (onclick: string) => `<!doctype html><html><head><meta charset="utf-8"><title>eval test</title>
${STYLE}</head>
<body><button id="b" onclick="${onclick}">click me</button><p id="r"></p></body></html>`;

const page = (succeed: boolean) => shell(succeed ? "document.getElementById('r').textContent='code#1'" : "document.getElementById('r').textContent='nothing'");
// A synchronous request: the answer is on the page before the click's success check runs.
const flakyPage = (name: string, succeed: string) =>
  shell(`var x=new XMLHttpRequest();x.open('GET','/flaky/${name}/click?succeed=${encodeURIComponent(succeed)}',false);x.send();document.getElementById('r').textContent=x.responseText`);

/** The test page server; `url` ends with '/'. */
export interface TestPages {
  url: string;
  /** Clicks so far on /flaky/<name>.html. */
  clicks(name: string): number;
  close(): Promise<void>;
}

/** Serve the test pages. */
export async function serveTestPages(): Promise<TestPages> {
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);
    const m = /^\/(ok|never)\/[\w-]+\.html$/.exec(url.pathname);
    if (m) return html(page(m[1] === 'ok'));
    const f = /^\/flaky\/([\w-]+)\.html$/.exec(url.pathname);
    if (f) return html(flakyPage(f[1]!, url.searchParams.get('succeed') ?? ''));
    const c = /^\/flaky\/([\w-]+)\/click$/.exec(url.pathname);
    if (c) {
      const n = (counts.get(c[1]!) ?? 0) + 1;
      counts.set(c[1]!, n);
      const succeed = (url.searchParams.get('succeed') ?? '').split(',').map(Number);
      return res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(succeed.includes(n) ? 'code#1' : `click ${n}`);
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    clicks: (name) => counts.get(name) ?? 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
