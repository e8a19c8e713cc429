/**
 * Import time of each package entry (package.json `exports`: `vncua`, `vncua/rfb`, …) and which heavy
 * packages each loads. Each sample is a fresh node process timing `await import(entry)` (median of RUNS,
 * the entries taken round-robin so the machine's load drifts evenly over them); one more process per
 * entry, with a resolve hook (node:module `register`) logging every URL resolved, says which of the model
 * SDKs (openai, @anthropic-ai/sdk) and playwright-core (and sharp) the entry loads, and how many modules.
 * Builds dist/ first (`npm run build`, so the figures are of the current sources, never of a stale
 * build) and imports the built files; if the build fails, the .ts sources through tsx (slower: tsx
 * compiles on load); the output says which.
 *
 * Usage: npx tsx bench/import-time.ts [RUNS=10]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, ms, quantile, table } from './stats.ts';

const RUNS = Number(process.argv[2] ?? 10);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Packages whose loading an entry should not pay for unless it needs them. */
const HEAVY = ['openai', '@anthropic-ai/sdk', 'playwright-core', 'sharp'] as const;

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, { import: string }> };
const distEntries = Object.entries(pkg.exports).map(([subpath, t]) => ({
  name: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
  dist: join(ROOT, t.import),
  source: join(ROOT, t.import.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')),
}));
let built = true;
try {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
} catch {
  built = false;
}
const fromDist = built && distEntries.every((e) => existsSync(e.dist));
const entries = distEntries.map((e) => ({ name: e.name, url: pathToFileURL(fromDist ? e.dist : e.source).href }));
const nodeArgs = fromDist ? [] : ['--import', 'tsx'];

/** Module hooks appending every resolved URL to the file their `data` names. */
const HOOKS = pathToFileURL(join(ROOT, 'harness/test-helpers/resolve-log-hooks.mjs')).href;

/** Import `url` in a fresh node process: the import's ms (and with `log`, every URL it resolved, into that file). */
function importOnce(url: string, log?: string): number {
  const hook = log ? `import { register } from 'node:module'; register(${JSON.stringify(HOOKS)}, { data: ${JSON.stringify(log)} });` : '';
  const code = `${hook} const t = performance.now(); await import(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - t));`;
  const out = execFileSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
  return Number(out);
}

/** The heavy packages and the number of modules (files) an import of `url` loads. */
function loads(url: string, dir: string): { heavy: Set<string>; modules: number } {
  const log = join(dir, `${encodeURIComponent(url)}.log`);
  importOnce(url, log);
  const urls = new Set(
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((u) => u.startsWith('file:')),
  );
  const heavy = new Set(HEAVY.filter((p) => [...urls].some((u) => u.includes(`/node_modules/${p}/`))));
  return { heavy, modules: urls.size };
}

const times = new Map(entries.map((e) => [e.name, [] as number[]]));
for (const e of entries) importOnce(e.url); // warm the file cache (and tsx's compile cache)
for (let i = 0; i < RUNS; i++) for (const e of entries) times.get(e.name)!.push(importOnce(e.url));

const dir = mkdtempSync(join(tmpdir(), 'vncua-import-time-'));
try {
  const rows = entries.map((e) => {
    const xs = times.get(e.name)!;
    const { heavy, modules } = loads(e.url, dir);
    return [`\`${e.name}\``, ms(median(xs)), ms(quantile(xs, 0.9)), modules, ...HEAVY.map((p) => (heavy.has(p) ? 'yes' : '–'))];
  });
  const how = fromDist ? 'the built `dist/` files (`npm run build`)' : 'the `.ts` sources through tsx (no complete `dist/`; run `npm run build` for the built files)';
  process.stdout.write(
    `Each entry imported from ${how} in a fresh \`node\` ${process.version} process, ${RUNS} times (median and p90 of \`await import()\` alone, node's own start excluded); modules: the files an ES module import resolved (node_modules included; a CommonJS package's own \`require()\`s, e.g. playwright-core's, are not counted), from one more process with a resolve hook.\n\n` +
      `${table(['entry', 'median ms', 'p90 ms', 'modules', ...HEAVY], rows)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
