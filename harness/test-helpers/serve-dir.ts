/** Test-only: serve the files of a directory over HTTP on 127.0.0.1:0 (GET; 404 for anything outside it); the byom end-to-end tests serve the basic suite with it. */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.js': 'text/javascript', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml' };

/** Start serving `root`; `url` ends with a slash. */
export async function serveDir(root: string): Promise<{ url: string; close(): Promise<void> }> {
  const base = resolve(root) + sep;
  const server = createServer((req, res) => {
    const path = normalize(join(base, decodeURIComponent((req.url ?? '/').split('?')[0]!)));
    if (req.method !== 'GET' || !path.startsWith(base)) {
      res.writeHead(404).end();
      return;
    }
    readFile(path).then(
      (data) => res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(data),
      () => res.writeHead(404).end(),
    );
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
