/**
 * The page's scripts: viewer/app/app.ts bundled by esbuild (in memory, once per server) with what it imports,
 * split so that the live view (viewer/app/live.ts and noVNC, `@novnc/novnc`'s core/rfb.js) loads only when a
 * page shows a live run. Served as `app.js` and the chunks it imports (`live-HASH.js`, `chunk-HASH.js`), relative
 * to the page, so a token path segment stays in front of them.
 */
import { basename, join } from 'node:path';

/** The bundle: file name → JavaScript text. */
export type AppBundle = ReadonlyMap<string, string>;

/** Bundle the app found in `appDir` (its app.ts). */
export async function bundleApp(appDir: string): Promise<AppBundle> {
  const { build } = await import('esbuild');
  const out = await build({
    entryPoints: [join(appDir, 'app.ts')],
    bundle: true,
    splitting: true,
    format: 'esm',
    target: 'es2022',
    outdir: join(appDir, '.bundle'),
    write: false,
    logLevel: 'silent',
    chunkNames: '[name]-[hash]',
    legalComments: 'inline',
  });
  return new Map(out.outputFiles.map((f) => [basename(f.path), f.text]));
}
