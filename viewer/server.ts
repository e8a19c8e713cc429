/**
 * The `vncua serve` web app: harness/static-server.ts (sirv) serving viewer/app/ (index.html, the
 * stylesheet), with a request hook for the app's script (viewer/app/app.ts, compiled once by esbuild)
 * and the JSON / frame API:
 *
 *   GET api/runs?agent=&resolution=&group=&status=&suite=&q=   the run list (viewer/runs.ts)
 *   GET api/run?dir=DIR                                        one run: trace entries, result, recording extent, damage
 *   GET api/index?dir=DIR                                      the seek index's state (complete, damage found by decoding)
 *   GET api/frame?dir=DIR&t=MS                                 the frame at t as raw RGB (headers: x-width, x-height, ...)
 *   GET api/frame.png?dir=DIR&t=MS                             the same frame as PNG (to save or share)
 *   GET api/compare?a=DIR&b=DIR, api/related?dir=DIR            two runs of one task aligned (viewer/compare-api.ts)
 *   api/live/...                                               live runs: status, steps, takeover, the desktop (viewer/live/routes.ts)
 *
 * Bound to 127.0.0.1 by default. With `host` anything else, a random token is the first path segment of
 * every URL (`http://HOST:PORT/<token>/`): other requests get 403 (SERVE_ERR_FORBIDDEN), compared in
 * constant time as docker/ws-bridge.py does. Nothing under ROOT is written except each opened run's
 * `.vncua-viewer/` cache (viewer/keyframes.ts).
 *
 * Seams for later work: `sessions` holds the open runs by dir (a compare view opens two), and the hook
 * dispatches by path. The page's scripts are one esbuild bundle (viewer/app-bundle.ts) built once.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { VncuaError, isVncuaError } from '../harness/errors.ts';
import { startStaticServer } from '../harness/static-server.ts';
import { type AppBundle, bundleApp } from './app-bundle.ts';
import { KeyframeIndex } from './keyframes.ts';
import { compareApi } from './compare-api.ts';
import { LiveHub } from './live/hub.ts';
import { liveRoutes } from './live/routes.ts';
import { RunCatalog, type RunDetail, damageMessage, readRunDetail } from './runs.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** viewer/app/ (index.html, style.css, app.ts): beside this file in a checkout; the shipped sources' copy when running from dist/. */
const APP_DIR = existsSync(join(HERE, 'app', 'index.html')) ? join(HERE, 'app') : join(HERE, '..', '..', 'viewer', 'app');

/** Options of startViewerServer(). */
export interface ViewerServerOptions {
  root: string;
  /** Default 127.0.0.1; any other address requires the token in every URL. */
  host?: string;
  /** Default 0 (OS-chosen). */
  port?: number;
  /** Force a token (or none) whatever the host (tests); default: a token exactly when host is not loopback. */
  token?: string | null;
  /** Keep seek indexes in memory only (default: cached in each run's .vncua-viewer/). */
  cache?: boolean;
  /** One line per notable live event (a run asking for help, an endpoint not answering, a refused takeover; coded). */
  log?: (line: string) => void;
}

/** A running viewer. */
export interface ViewerServer {
  /** The app's URL (with the token when there is one), trailing slash. */
  url: string;
  token: string | null;
  catalog: RunCatalog;
  /** The live runs under ROOT (viewer/live/hub.ts). */
  live: LiveHub;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
const MAX_OPEN = 4;

/** Start the viewer; SERVE_ERR_ROOT, SERVE_ERR_PORT_IN_USE or SERVE_ERR_LISTEN when it cannot. */
export async function startViewerServer(opts: ViewerServerOptions): Promise<ViewerServer> {
  const root = resolve(opts.root);
  if (!(await stat(root).catch(() => null))?.isDirectory()) {
    throw new VncuaError('SERVE_ERR_ROOT', `${root} does not exist or is not a directory; give the --out directory of vncua eval.`, { details: { root } });
  }
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token !== undefined ? opts.token : LOOPBACK.has(host) ? null : randomBytes(18).toString('base64url');
  const catalog = new RunCatalog(root);
  const live = new LiveHub(root, { log: opts.log, onChange: () => catalog.invalidate() });
  const liveApi = liveRoutes(live, { loopbackOnly: token === null && LOOPBACK.has(host) });
  const sessions = new Map<string, { index: Promise<KeyframeIndex>; used: number }>();
  let bundle: Promise<AppBundle> | null = null;
  const script = () => (bundle ??= bundleApp(APP_DIR));

  /** The run's seek index, opened once (concurrent requests share the one being opened). */
  const openIndex = (dir: string): Promise<KeyframeIndex> => {
    const s = sessions.get(dir);
    if (s) {
      s.used = performance.now();
      return s.index;
    }
    const index = catalog.resolveRun(dir).then((abs) => KeyframeIndex.open(abs, { cache: opts.cache ?? true }));
    index.catch(() => sessions.delete(dir));
    sessions.set(dir, { index, used: performance.now() });
    if (sessions.size > MAX_OPEN) {
      const [oldest] = [...sessions].sort((a, b) => a[1].used - b[1].used);
      sessions.delete(oldest![0]);
      void oldest![1].index.then((i) => i.close()).catch(() => {});
    }
    return index;
  };

  /** One run as api/run gives it; its seek index starts as the page opens, and reads the recording once for the extent and the frames. */
  const runDetail = async (dir: string): Promise<RunDetail> =>
    readRunDetail(await catalog.resolveRun(dir), dir, await catalog.row(dir), () => openIndex(dir).then((i) => i.extent()));

  const api = async (path: string, q: URLSearchParams, res: ServerResponse): Promise<void> => {
    const dir = q.get('dir') ?? '';
    if (path === 'api/runs') {
      const f = Object.fromEntries(['agent', 'resolution', 'group', 'status', 'suite', 'q'].flatMap((k) => (q.get(k) ? [[k, q.get(k)!]] : [])));
      return json(res, 200, await catalog.list(f));
    }
    if (path === 'api/run') return json(res, 200, await runDetail(dir));
    if (path === 'api/index') {
      const idx = await openIndex(dir);
      const known = idx.summary.known.slice().sort((a, b) => a.until - b.until)[0];
      return json(res, 200, {
        complete: idx.complete,
        source: idx.source,
        records: idx.records.length,
        keyframes: idx.records.filter((r) => r.key).length,
        summary: idx.complete ? idx.summary : null,
        damage: known
          ? { code: 'SERVE_ERR_RECORDING_DAMAGED', until: known.until, reason: known.reason, message: damageMessage(known.until, known.reason, idx.summary.warnings) }
          : null,
        cache: idx.cachePath ? { path: idx.cachePath, problem: idx.cacheProblem } : { path: null, problem: idx.cacheProblem },
      });
    }
    if (path === 'api/frame' || path === 'api/frame.png') {
      const t = Number(q.get('t'));
      if (!Number.isFinite(t)) return json(res, 400, { code: 'SERVE_ERR_BAD_REQUEST', message: 't must be epoch milliseconds' });
      const idx = await openIndex(dir);
      const f = await idx.frameAt(t, { cursor: q.get('cursor') !== '0' });
      if (!f) {
        res.writeHead(204, { 'x-frame': 'none', 'cache-control': 'no-store' }).end();
        return;
      }
      const headers: Record<string, string> = {
        'x-width': String(f.width),
        'x-height': String(f.height),
        'x-t': String(f.t),
        'x-update-at': String(f.updateAt),
        'x-connection': String(f.connection),
        'cache-control': 'no-store',
      };
      if (f.stale) {
        headers['x-stale-reason'] = f.stale.reason;
        headers['x-known-until'] = String(f.stale.knownUntil);
      }
      if (path === 'api/frame.png') {
        const png = await sharp(f.rgb, { raw: { width: f.width, height: f.height, channels: 3 } })
          .png({ compressionLevel: 1 })
          .toBuffer();
        res.writeHead(200, { ...headers, 'content-type': 'image/png', 'content-length': String(png.length) }).end(png);
        return;
      }
      res
        .writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(f.rgb.length) })
        .end(Buffer.from(f.rgb.buffer, f.rgb.byteOffset, f.rgb.length));
      return;
    }
    const compared = await compareApi(path, q, catalog, runDetail);
    if (compared) return json(res, compared[0], compared[1]);
    return json(res, 404, { code: 'SERVE_ERR_BAD_REQUEST', message: `no API ${path}` });
  };

  /** The request's path without the token segment (null when the token is wrong: refused). */
  const pathOf = (url: URL): string | null => {
    if (token === null) return url.pathname;
    const seg = url.pathname.split('/')[1] ?? '';
    return sameToken(seg, token) ? url.pathname.slice(1 + seg.length) || '/' : null;
  };
  const FORBIDDEN = 'SERVE_ERR_FORBIDDEN: this viewer needs the token its URL carries; use the URL vncua serve printed.\n';

  const handle = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = pathOf(url);
    if (path === null) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(FORBIDDEN);
      return true;
    }
    if (token !== null) {
      if (url.pathname === `/${token}`) {
        res.writeHead(302, { location: `/${token}/${url.search}` }).end();
        return true;
      }
      req.url = path + url.search;
    }
    const rel = path.replace(/^\/+/, '');
    if (/^[\w-]+\.js$/.test(rel)) {
      void script().then(
        (files) => {
          const js = files.get(rel);
          if (js === undefined) return void res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
          res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' }).end(js);
        },
        (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`${rel}: ${(e as Error).message}\n`),
      );
      return true;
    }
    if (liveApi.http(rel, url, req, res)) return true;
    if (rel.startsWith('api/')) {
      api(rel, url.searchParams, res).catch((e: unknown) => {
        const code = isVncuaError(e) ? e.code : 'SERVE_ERR_INTERNAL';
        const status = code === 'SERVE_ERR_RUN_NOT_FOUND' ? 404 : 500;
        if (!res.headersSent) json(res, status, { code, message: (e as Error).message });
        else res.destroy();
      });
      return true;
    }
    return false;
  };

  let server: Awaited<ReturnType<typeof startStaticServer>>;
  try {
    const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const path = pathOf(url);
      if (path === null) return void socket.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${FORBIDDEN}`);
      if (!liveApi.upgrade(path.replace(/^\/+/, ''), url, req, socket, head)) socket.destroy();
    };
    server = await startStaticServer({ root: APP_DIR, host, port: opts.port ?? 0, handle, upgrade });
  } catch (e) {
    const cause = (e as Error).cause as NodeJS.ErrnoException | undefined;
    const code = cause?.code ?? (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      throw new VncuaError('SERVE_ERR_PORT_IN_USE', `Port ${opts.port} is already in use on ${host}: choose another --port, or leave it out for an OS-chosen one.`, {
        cause: e,
        details: { host, port: opts.port },
      });
    }
    throw new VncuaError('SERVE_ERR_LISTEN', `Cannot listen on ${host}:${opts.port ?? 0}: ${code ?? ''} ${(e as Error).message}`.replace(/\s+/g, ' '), {
      cause: e,
      details: { host, port: opts.port ?? 0 },
    });
  }
  // Warm the catalogue and the script so the first page load does not pay for them.
  void catalog.list().catch(() => {});
  void script().catch(() => {});
  return {
    url: token ? `${server.url}${token}/` : server.url,
    token,
    catalog,
    live,
    async close() {
      liveApi.close();
      await live.close();
      await server.close();
      await Promise.all([...sessions.values()].map((s) => s.index.then((i) => i.close()).catch(() => {})));
      sessions.clear();
    },
  };
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(text);
}
