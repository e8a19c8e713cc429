/** Serves the bench pages (bench/pages/*.html) on 127.0.0.1 with an OS-assigned port (harness/static-server.ts). */
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../harness/static-server.ts';

/** Start a static server for bench/pages; `url(name)` gives a page's address. */
export async function servePages(): Promise<{ url(name: string): string; close(): Promise<void> }> {
  const server = await startStaticServer({ root: fileURLToPath(new URL('../pages/', import.meta.url)) });
  return { url: (name) => new URL(name, server.url).href, close: server.close };
}
