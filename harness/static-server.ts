/**
 * The one static file server of vncua: node:http serving the files under `root` with `sirv`
 * (GET and HEAD only; keep-alive on). `vncua eval` serves a task suite with it (eval/static-server.ts
 * adds EVAL_ERR_STATIC_SERVER), and the test and bench helpers serve their pages with it.
 *
 * sirv runs in dev mode: it looks every request up on disk again (no file table built at start),
 * so pages edited between runs are served as they are now, and it answers `cache-control: no-store`.
 * In front of sirv, resolveInside() and a realpath check turn paths that leave `root` (`..`,
 * encoded separators, NUL, symlinks pointing outside: sirv's dev mode follows them) into a plain
 * 404, and a directory is served as its index.html (sirv's `/x` → `/x.html` guessing is off).
 * Content types come from sirv's table (mrmime), with `; charset=utf-8` on text types.
 */
import { realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { lookup } from 'mrmime';
import sirv from 'sirv';

/** Options of startStaticServer(). */
export interface StaticServerOptions {
  /** Directory whose files are served. */
  root: string;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Port to listen on (default 0: OS-assigned). A port in use rejects with an Error whose cause has code EADDRINUSE. */
  port?: number;
  /** Closes the server when it fires (and refuses to start if it already fired). */
  signal?: AbortSignal;
  /** Give up starting after this many ms (default 10 000). */
  timeoutMs?: number;
  /**
   * Called first for every request (any method): return true once it has answered the request.
   * Otherwise the file under `root` that `req.url` names is served (the hook may rewrite `req.url`).
   * For test pages with dynamic parts (counters); a throw answers 500.
   */
  handle?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Called for every HTTP upgrade request (WebSocket); it owns the socket. Without it, upgrades are refused (the socket is destroyed). */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** A running static server. */
export interface StaticServer {
  /** Base URL with a trailing slash, e.g. http://127.0.0.1:41234/ (relative URLs resolve against it). */
  url: string;
  /** Stop listening and drop open connections. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const UTF8_TYPES = /^(text\/|application\/(json|javascript|xml)$|image\/svg\+xml$)/;

/** The content type served for a file name (application/octet-stream when unknown; text types in UTF-8). */
export function contentTypeFor(path: string): string {
  const type = lookup(extname(path).toLowerCase()) ?? 'application/octet-stream';
  return UTF8_TYPES.test(type) ? `${type}; charset=utf-8` : type;
}

/**
 * Serve the files under `root` (OS-assigned port); resolves once listening. Rejects with a plain
 * Error (message says why: missing root, not a directory, listen failure, timeout, abort).
 */
export async function startStaticServer(opts: StaticServerOptions): Promise<StaticServer> {
  const { signal } = opts;
  if (signal?.aborted) throw new Error('the start was aborted', { cause: signal.reason });
  let root: string;
  try {
    root = await realpath(resolve(opts.root));
  } catch (cause) {
    throw new Error('the root directory does not exist', { cause });
  }
  if (!(await stat(root)).isDirectory()) throw new Error('the root is not a directory');
  const serve = sirv(root, {
    dev: true,
    extensions: [],
    dotfiles: true,
    setHeaders: (res, pathname) => res.setHeader('content-type', contentTypeFor(pathname)),
  });
  const server = createServer({ keepAlive: true }, (req, res) => {
    void handle(root, serve, opts.handle, req, res);
  });
  server.keepAliveTimeout = 30_000;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!opts.upgrade) return void socket.destroy();
    try {
      opts.upgrade(req, socket, head);
    } catch {
      socket.destroy();
    }
  });
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
  await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 0, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, signal);
  signal?.addEventListener('abort', onAbort, { once: true });
  const { port, address, family } = server.address() as AddressInfo;
  const host = family === 'IPv6' ? `[${address}]` : address;
  return { url: `http://${host}:${port}/`, close };
}

function listen(server: Server, host: string, port: number, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
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
    server.listen(port, host, () => done());
  });
}

/**
 * The file under `root` a request path names, or null when it is not a safe path inside root.
 * The server hands sirv this path re-encoded (see handle()), so sirv opens the file checked here.
 */
export function resolveInside(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  // Encoded separators or NUL never name a served file.
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const parts = decoded.split('/');
  if (parts.some((p) => p === '..')) return null;
  const full = resolve(root, `.${sep}${parts.filter((p) => p !== '' && p !== '.').join(sep)}`);
  const rel = relative(root, full);
  if (rel.startsWith('..') || isAbsolute(rel)) return null;
  return full;
}

type Sirv = ReturnType<typeof sirv>;

async function handle(root: string, serve: Sirv, hook: StaticServerOptions['handle'], req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    if (hook?.(req, res)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    const raw = req.url ?? '/';
    const cut = raw.search(/[?#]/);
    let urlPath = cut === -1 ? raw : raw.slice(0, cut);
    let file = resolveInside(root, urlPath);
    if (file === null) return notFound(res);
    let info = await stat(file).catch(() => null);
    if (info?.isDirectory()) {
      urlPath += urlPath.endsWith('/') ? 'index.html' : '/index.html';
      file = resolveInside(root, urlPath)!;
      info = await stat(file).catch(() => null);
    }
    if (!info?.isFile()) return notFound(res);
    // A symlink inside root may point outside it (sirv follows symlinks).
    const real = await realpath(file).catch(() => null);
    if (real === null || (real !== root && !real.startsWith(root + sep))) return notFound(res);
    // The checked file, normalized (no `.` or empty segments, directory resolved), so sirv opens exactly
    // `file`: encodeURI, as sirv decodes with decodeURI (which would leave %2C, %40, ... as written).
    // A name with `?` or `#` cannot survive this and gets sirv's 404.
    req.url = `/${relative(root, file).split(sep).map(encodeURI).join('/')}`;
    serve(req, res, () => notFound(res));
  } catch {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
    else res.destroy();
  }
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
}
