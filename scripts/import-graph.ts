/**
 * The top-level folder import graph: which folders' files import which other folders.
 * The README's architecture section draws the allowed graph; architecture.test.ts
 * checks the code against it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Top-level source folders and the folders each may import from. */
export const ALLOWED_IMPORTS: Readonly<Record<string, readonly string[]>> = {
  harness: [],
  recorder: ['harness'],
  agents: ['harness'],
  byom: ['harness'],
  eval: ['harness', 'recorder'],
  viewer: ['harness', 'recorder', 'eval'],
  cli: ['harness', 'recorder', 'agents', 'byom', 'eval', 'viewer'],
  bench: ['harness', 'recorder', 'agents', 'byom', 'eval', 'viewer', 'cli'],
  scripts: ['harness', 'recorder', 'agents', 'byom', 'eval'],
  '.': ['harness', 'recorder', 'agents', 'byom', 'eval'],
};

const SKIP = new Set(['node_modules', 'dist', '.git', 'runs', 'out']);

function walk(dir: string, out: string[]): void {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
}

/** Every relative import between top-level folders: `{ from, to, file, spec }`. */
export function folderImports(root: string): Array<{ from: string; to: string; file: string; spec: string }> {
  const files: string[] = [];
  walk(root, files);
  const edges: Array<{ from: string; to: string; file: string; spec: string }> = [];
  const re = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  for (const file of files) {
    const rel = relative(root, file);
    const from = rel.includes(sep) ? rel.split(sep)[0]! : '.';
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(re)) {
      const spec = (m[1] ?? m[2])!;
      const target = relative(root, resolve(dirname(file), spec));
      const to = target.includes(sep) ? target.split(sep)[0]! : '.';
      if (to !== from) edges.push({ from, to, file: rel, spec });
    }
  }
  return edges;
}
