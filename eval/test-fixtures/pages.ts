/**
 * Test pages for the eval runner (the files in ./pages/), served on 127.0.0.1 (OS-assigned port)
 * by harness/static-server.ts, with a small hook for the dynamic routes:
 * - /ok/<name>.html (ok.html): one button filling the window; a click shows `code#1` (the uitask sentinel);
 * - /never/<name>.html (never.html): the same button, but a click shows nothing;
 * - /flaky/<name>.html?succeed=2,3 (flaky.html): the same button; a click asks the server
 *   (synchronously, GET /flaky/<name>/click?succeed=2,3) and shows `code#1` only when it is the n-th
 *   click on that page name with n in `succeed`: a task that succeeds on some runs only, decided by a
 *   counter the server keeps (`clicks(name)`).
 */
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../harness/static-server.ts';

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
  const server = await startStaticServer({
    root: fileURLToPath(new URL('./pages/', import.meta.url)),
    handle: (req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const page = /^\/(ok|never|flaky)\/[\w-]+\.html$/.exec(url.pathname);
      if (page) {
        req.url = `/${page[1]}.html`;
        return false;
      }
      const click = /^\/flaky\/([\w-]+)\/click$/.exec(url.pathname);
      if (!click) return false;
      const n = (counts.get(click[1]!) ?? 0) + 1;
      counts.set(click[1]!, n);
      const succeed = (url.searchParams.get('succeed') ?? '').split(',').map(Number);
      res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(succeed.includes(n) ? 'code#1' : `click ${n}`);
      return true;
    },
  });
  return { url: server.url, clicks: (name) => counts.get(name) ?? 0, close: server.close };
}
