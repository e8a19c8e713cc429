/**
 * The static server `vncua eval` starts over a task suite: harness/static-server.ts (sirv on
 * node:http; GET and HEAD only, keep-alive, a plain 404 for missing files and for paths leaving
 * the root, a directory serves its index.html, `cache-control: no-store` and a fresh disk lookup
 * per request), on 127.0.0.1 with an OS-assigned port unless `host` says otherwise. A failed start
 * is EVAL_ERR_STATIC_SERVER. It also answers SPARE_PAGE_PATH with an empty page: where a pool's
 * spare desktops wait (on the tasks' own origin, so the task page opens in the renderer already up).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { VncuaError } from '../harness/errors.ts';
import { startStaticServer as startServer, type StaticServer } from '../harness/static-server.ts';

export { contentTypeFor, resolveInside, type StaticServer } from '../harness/static-server.ts';

/** Options of startStaticServer(). */
export interface StaticServerOptions {
  /** Directory whose files are served (the suite directory). */
  root: string;
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Closes the server when it fires (and refuses to start if it already fired). */
  signal?: AbortSignal;
  /** Give up starting after this many ms (default 10 000). */
  timeoutMs?: number;
}

/** The empty page every suite server answers (not a file of the suite): a pool's spares stand at it (runSuite's spareUrl). */
export const SPARE_PAGE_PATH = '/.vncua/spare';

/** Answers SPARE_PAGE_PATH with an empty page; anything else goes to the suite's files. */
function sparePage(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url?.split('?')[0] !== SPARE_PAGE_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : '<!doctype html><meta charset="utf-8"><title></title>');
  return true;
}

/** Serve the files under `root` on 127.0.0.1 (OS-assigned port); resolves once listening. EVAL_ERR_STATIC_SERVER if it cannot. */
export async function startStaticServer(opts: StaticServerOptions): Promise<StaticServer> {
  try {
    return await startServer({ root: opts.root, host: opts.host, signal: opts.signal, timeoutMs: opts.timeoutMs, handle: sparePage });
  } catch (cause) {
    const message = (cause as Error).message;
    const hint = /root/.test(message) ? '; pass the suite directory' : '';
    throw new VncuaError('EVAL_ERR_STATIC_SERVER', `The static server for ${opts.root} could not start: ${message}${hint}.`, { cause, details: { root: opts.root } });
  }
}
