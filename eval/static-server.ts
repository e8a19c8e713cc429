/**
 * The static server `vncua eval` starts over a task suite: harness/static-server.ts (sirv on
 * node:http; GET and HEAD only, keep-alive, a plain 404 for missing files and for paths leaving
 * the root, a directory serves its index.html, `cache-control: no-store` and a fresh disk lookup
 * per request), on 127.0.0.1 with an OS-assigned port unless `host` says otherwise. A failed start
 * is EVAL_ERR_STATIC_SERVER.
 */
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

/** Serve the files under `root` on 127.0.0.1 (OS-assigned port); resolves once listening. EVAL_ERR_STATIC_SERVER if it cannot. */
export async function startStaticServer(opts: StaticServerOptions): Promise<StaticServer> {
  try {
    return await startServer({ root: opts.root, host: opts.host, signal: opts.signal, timeoutMs: opts.timeoutMs });
  } catch (cause) {
    const message = (cause as Error).message;
    const hint = /root/.test(message) ? '; pass the suite directory' : '';
    throw new VncuaError('EVAL_ERR_STATIC_SERVER', `The static server for ${opts.root} could not start: ${message}${hint}.`, { cause, details: { root: opts.root } });
  }
}
