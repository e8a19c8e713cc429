import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { ALLOWED_IMPORTS, folderImports } from './import-graph.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('architecture', () => {
  it('top-level folders import only what the README graph allows (no cycles)', () => {
    const bad = folderImports(root).filter((e) => !(ALLOWED_IMPORTS[e.from] ?? []).includes(e.to));
    expect(bad.map((e) => `${e.file} imports ${e.spec} (${e.from} -> ${e.to})`)).toEqual([]);
  });

  it('the allowed graph itself is acyclic', () => {
    const seen = new Set<string>();
    const stack = new Set<string>();
    const visit = (n: string): void => {
      if (stack.has(n)) throw new Error(`cycle through ${n}`);
      if (seen.has(n)) return;
      stack.add(n);
      for (const m of ALLOWED_IMPORTS[n] ?? []) visit(m);
      stack.delete(n);
      seen.add(n);
    };
    for (const n of Object.keys(ALLOWED_IMPORTS)) visit(n);
    expect(seen.size).toBe(Object.keys(ALLOWED_IMPORTS).length);
  });
});
