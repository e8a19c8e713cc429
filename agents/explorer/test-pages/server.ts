/**
 * The explorer test app's server: app/ served by the static server (harness/static-server.ts) on 127.0.0.1 with an
 * OS-assigned port, plus the route the app's broken link needs: GET /broken answers 500. Tests and the bench start
 * it; `vncua run --agent explorer --url <url>` explores it.
 */
import { fileURLToPath } from 'node:url';
import { startStaticServer, type StaticServer } from '../../../harness/static-server.ts';

/** The app's directory. */
export const TEST_APP_DIR = fileURLToPath(new URL('./app/', import.meta.url));

/** A running test app. */
export interface TestApp {
  /** The start page (…/index.html). */
  url: string;
  /** The server's base URL (trailing slash). */
  origin: string;
  /** Stop the server. Idempotent. */
  close(): Promise<void>;
}

/** Start the test app's server. */
export async function serveTestApp(opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<TestApp> {
  const server: StaticServer = await startStaticServer({
    root: TEST_APP_DIR,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    handle: (req, res) => {
      if (req.url?.split('?')[0] !== '/broken') return false;
      res.writeHead(500, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end('<!doctype html><meta charset="utf-8"><title>Error</title><h1>Internal Server Error</h1><p>planted 500</p>');
      return true;
    },
  });
  return { url: new URL('index.html', server.url).href, origin: server.url, close: () => server.close() };
}
