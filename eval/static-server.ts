/**
 * A small static file server for task suites: node:http on 127.0.0.1 with an OS-assigned port,
 * serving the files under `root` (GET and HEAD only). Paths that leave `root` (`..`, encoded
 * separators, symlinks pointing outside) and missing files get a plain 404; keep-alive is on.
 * A directory serves its index.html. No caching headers: every request reads the file again.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { VncuaError } from '../harness/errors.ts';

/** Options of startStaticServer(). */
export interface StaticServerOptions {
  /** Directory whose files are served. */
  root: string;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Closes the server when it fires (and refuses to start if it already fired). */
  signal?: AbortSignal;
  /** Give up starting after this many ms (default 10 000). */
  timeoutMs?: number;
}

/** A running static server. */
export interface StaticServer {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ (relative task URLs resolve against it). */
  url: string;
  /** Stop listening and drop open connections. Idempotent. */
  close(): Promise<void>;
}

/** Content types by file extension (text types in UTF-8). */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

const DEFAULT_TIMEOUT_MS = 10_000;

/** The content type for a file name (application/octet-stream when unknown). */
export function contentTypeFor(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** EVAL_ERR_STATIC_SERVER for `root`. */
function serverError(root: string, message: string, cause?: unknown): VncuaError {
  return new VncuaError('EVAL_ERR_STATIC_SERVER', `The static server for ${root} could not start: ${message}.`, { cause, details: { root } });
}

/** Serve the files under `root` on 127.0.0.1 (OS-assigned port); resolves once listening. EVAL_ERR_STATIC_SERVER if it cannot. */
export async function startStaticServer(opts: StaticServerOptions): Promise<StaticServer> {
  const { signal } = opts;
  if (signal?.aborted) throw serverError(opts.root, 'the start was aborted', signal.reason);
  let root: string;
  try {
    root = await realpath(resolve(opts.root));
  } catch (cause) {
    throw serverError(opts.root, 'the root directory does not exist; pass the suite directory', cause);
  }
  if (!(await stat(root)).isDirectory()) throw serverError(opts.root, 'the root is not a directory; pass the suite directory');
  const server = createServer({ keepAlive: true }, (req, res) => {
    void handle(root, req, res);
  });
  server.keepAliveTimeout = 30_000;
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((r) => {
      signal?.removeEventListener('abort', onAbort);
      server.close(() => r());
      server.closeAllConnections();
    });
    return closed;
  };
  const onAbort = () => void close();
  try {
    await listen(server, opts.host ?? '127.0.0.1', opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal);
  } catch (cause) {
    throw serverError(opts.root, (cause as Error).message, cause);
  }
  signal?.addEventListener('abort', onAbort, { once: true });
  const { port, address, family } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return { url: `http://${host}:${port}/`, close };
}

function listen(server: Server, host: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    const done = (e?: unknown) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      server.off('error', done);
      if (e === undefined) resolveListen();
      else {
        server.close();
        reject(e);
      }
    };
    const onAbort = () => done(new Error('the start was aborted', { cause: signal!.reason }));
    const timer = setTimeout(() => done(new Error(`not listening within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    server.once('error', done);
    server.listen(0, host, () => done());
  });
}

/** The file under `root` a request path names, or null when it is not a safe path inside root. */
export function resolveInside(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  // Encoded separators or NUL never name a file of the suite.
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const parts = decoded.split('/');
  if (parts.some((p) => p === '..')) return null;
  const full = resolve(root, '.' + sep + parts.filter((p) => p !== '' && p !== '.').join(sep));
  const rel = relative(root, full);
  if (rel.startsWith('..') || isAbsolute(rel)) return null;
  return full;
}

async function handle(root: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    const urlPath = (req.url ?? '/').split(/[?#]/, 1)[0]!;
    let file = resolveInside(root, urlPath);
    if (file === null) return notFound(res);
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      file = join(file, 'index.html');
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) return notFound(res);
    // A symlink inside root may point outside it.
    const real = await realpath(file).catch(() => null);
    if (real === null || (real !== root && !real.startsWith(root + sep))) return notFound(res);
    res.writeHead(200, { 'content-type': contentTypeFor(real), 'content-length': info.size });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = createReadStream(real);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
  } catch {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
    else res.destroy();
  }
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
}
