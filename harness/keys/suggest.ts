/** "Did you mean" helpers: Levenshtein edit distance and the closest candidates. */

/** Levenshtein distance (insert, delete, substitute each cost 1), case-sensitive. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const sub = (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur.push(Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, sub));
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * Up to `max` candidates closest to `word` (compared in lowercase, ignoring `_`, `-` and spaces),
 * nearest first, keeping only those within max(2, ⌈length/3⌉) edits.
 */
export function closestNames(word: string, candidates: readonly string[], max = 3): string[] {
  const norm = (s: string) => s.toLowerCase().replace(/[_\-\s]/g, '');
  const w = norm(word);
  const limit = Math.max(2, Math.ceil(w.length / 3));
  const scored = candidates
    .map((c, i) => ({ c, i, d: editDistance(w, norm(c)) }))
    .filter((s) => s.d <= limit)
    .sort((x, y) => x.d - y.d || x.i - y.i);
  const out: string[] = [];
  for (const s of scored) {
    if (!out.some((o) => norm(o) === norm(s.c))) out.push(s.c);
    if (out.length >= max) break;
  }
  return out;
}
