/**
 * Test and bench helpers for the navigation guard: HTTP "sites" on 127.0.0.1 (OS-assigned ports) that log every
 * request they receive, and the page that tries every kind of request to them.
 *
 * The sites are told apart by port, not by host name: the desktop's start script has no way to add Chromium flags
 * (`--host-resolver-rules`), and ports are part of the pattern grammar, so `127.0.0.1:PORT` patterns exercise the
 * same matcher and interception path a host name would (host name matching is covered by patterns.test.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One logging HTTP server. */
export interface Site {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** `127.0.0.1:PORT`, the pattern naming this site. */
  readonly pattern: string;
  /** Paths (with query) requested so far, in order. */
  readonly log: string[];
  /** Answer `path` with this handler (replaces the default 200 "ok"). */
  route(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = { html: 'text/html; charset=utf-8', js: 'text/javascript', png: 'image/png', css: 'text/css' };

/** A 1×1 transparent PNG. */
export const PIXEL_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Start a site; unknown paths answer 200 with a body fitting their extension (an image for .png). */
export async function startSite(): Promise<Site> {
  const log: string[] = [];
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    log.push(url);
    const path = url.split('?')[0]!;
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('cache-control', 'no-store');
    const r = routes.get(path);
    if (r) return r(req, res);
    const ext = path.split('.').pop() ?? '';
    res.writeHead(200, { 'content-type': TYPES[ext] ?? 'text/plain' });
    res.end(ext === 'png' ? PIXEL_PNG : ext === 'html' ? '<!doctype html><title>ok</title><p>ok</p>' : 'ok');
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    pattern: `127.0.0.1:${port}`,
    log,
    route: (path, handler) => void routes.set(path, handler),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serve `html` at `path` on `site`. */
export function serveHtml(site: Site, path: string, html: string, type = 'text/html; charset=utf-8'): void {
  site.route(path, (_req, res) => {
    res.writeHead(200, { 'content-type': type });
    res.end(html);
  });
}

/** Answer `path` on `site` with a 302 to `location`. */
export function serveRedirect(site: Site, path: string, location: string): void {
  site.route(path, (_req, res) => {
    res.writeHead(302, { location });
    res.end();
  });
}
