/** Test-only: serve the files of a directory on 127.0.0.1:0 with harness/static-server.ts; the byom end-to-end tests serve the basic suite with it. */
import { startStaticServer, type StaticServer } from '../static-server.ts';

/** Start serving `root`; `url` ends with a slash. */
export function serveDir(root: string): Promise<StaticServer> {
  return startStaticServer({ root });
}
