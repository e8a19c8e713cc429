/** Serves the bench pages (bench/pages/*.html) on 127.0.0.1 with an OS-assigned port. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** Start a static server for bench/pages; `url(name)` gives a page's address. */
export async function servePages(): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const dir = fileURLToPath(new URL('../pages/', import.meta.url));
  const server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0]!.replace(/^\//, '') || 'dashboard.html';
    if (!/^[\w-]+\.html$/.test(name)) {
      res.statusCode = 404;
      res.end();
      return;
    }
    try {
      const body = readFileSync(dir + name);
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(body);
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
