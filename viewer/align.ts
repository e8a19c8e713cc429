/**
 * Aligning the steps of two runs of one task (the compare view of `vncua serve`): an edit-distance
 * alignment (Needleman-Wunsch) of the two action sequences, so a step one run took and the other
 * did not shows as a gap instead of shifting every later pair. Costs: a gap 1; the same action
 * 0 (params roughly equal) up to 0.9 (params all different); different actions 1.6 (cheaper than
 * two gaps: two runs doing different things at the same place in their sequence stay side by side).
 *
 * "Roughly equal" params: positions within 2 % of the screen (compared as fractions of each run's
 * screen, so runs at different resolutions align), the same text or keys (case and outer spaces
 * aside; otherwise similar by edit distance), numbers within 10 %, the same enum values.
 * The page keeps the two timelines in step with viewer/app/warp.ts.
 */

/** What the alignment reads of a trace entry. */
export interface AlignStep {
  action: string;
  params: Record<string, unknown>;
}

/** How a row's two steps relate: same (action and params), similar (same action, other params), different (other actions), or a step of one run only. */
export type RowKind = 'same' | 'similar' | 'different' | 'only_a' | 'only_b';

/** One row of the alignment: an index into each run's steps, or null for a gap. */
export interface AlignedRow {
  a: number | null;
  b: number | null;
  kind: RowKind;
}

/** A screen size, to compare positions as fractions of the screen. */
export interface ScreenSize {
  width: number;
  height: number;
}

const GAP = 1;
const DIFFERENT = 1.6;
const SIMILAR_MAX = 0.9;
/** Positions this close (fraction of the screen's diagonal) are the same; this far apart or more, nothing alike. */
const NEAR = 0.02;
const FAR = 0.25;
/** Above this many cells (steps of a x steps of b) the alignment pairs steps by index instead. */
const MAX_CELLS = 4_000_000;

type Point = { x: number; y: number };
const isPoint = (v: unknown): v is Point => typeof v === 'object' && v !== null && typeof (v as Point).x === 'number' && typeof (v as Point).y === 'number';

/** Levenshtein distance (strings cut to 200 characters). */
function editDistance(s: string, t: string): number {
  const a = s.slice(0, 200);
  const b = t.slice(0, 200);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** How alike two param values are, 0..1. */
function valueSimilarity(x: unknown, y: unknown, sa: ScreenSize | null, sb: ScreenSize | null): number {
  if (isPoint(x) && isPoint(y)) {
    const ax = sa ? x.x / sa.width : x.x / 1280;
    const ay = sa ? x.y / sa.height : x.y / 800;
    const bx = sb ? y.x / sb.width : y.x / 1280;
    const by = sb ? y.y / sb.height : y.y / 800;
    const d = Math.hypot(ax - bx, ay - by) / Math.SQRT2;
    if (d <= NEAR) return 1;
    return Math.max(0, 1 - (d - NEAR) / (FAR - NEAR));
  }
  if (typeof x === 'string' && typeof y === 'string') {
    const a = x.trim().toLowerCase();
    const b = y.trim().toLowerCase();
    if (a === b) return 1;
    const n = Math.max(a.length, b.length);
    return n === 0 ? 1 : Math.max(0, 1 - editDistance(a, b) / n);
  }
  if (typeof x === 'number' && typeof y === 'number') {
    const m = Math.max(Math.abs(x), Math.abs(y));
    if (m === 0 || Math.abs(x - y) <= 0.1 * m) return 1;
    return Math.max(0, 1 - Math.abs(x - y) / m);
  }
  return JSON.stringify(x) === JSON.stringify(y) ? 1 : 0;
}

/** Weight of a param in the similarity: positions count most (where a click lands says what it does). */
const weightOf = (v: unknown) => (isPoint(v) ? 3 : 1);

/**
 * The cost of pairing two steps: 0 for the same action with roughly equal params, up to 0.9 for the
 * same action with other params, 1.6 for different actions.
 */
export function stepCost(x: AlignStep, y: AlignStep, sa: ScreenSize | null = null, sb: ScreenSize | null = null): number {
  if (x.action !== y.action) return DIFFERENT;
  const keys = [...new Set([...Object.keys(x.params ?? {}), ...Object.keys(y.params ?? {})])];
  if (keys.length === 0) return 0;
  let sum = 0;
  let weight = 0;
  for (const k of keys) {
    const a = x.params?.[k];
    const b = y.params?.[k];
    const w = Math.max(weightOf(a), weightOf(b));
    sum += a === undefined || b === undefined ? 0 : w * valueSimilarity(a, b, sa, sb);
    weight += w;
  }
  const sim = sum / weight;
  return sim >= 1 - 1e-9 ? 0 : SIMILAR_MAX * (1 - sim);
}

/**
 * The alignment of steps `a` with steps `b` (optionally each run's screen size): rows in order, every
 * step of each run exactly once. Ties prefer pairing, then a gap in b.
 */
export function alignSteps(a: readonly AlignStep[], b: readonly AlignStep[], screens: { a?: ScreenSize | null; b?: ScreenSize | null } = {}): AlignedRow[] {
  const sa = screens.a ?? null;
  const sb = screens.b ?? null;
  const n = a.length;
  const m = b.length;
  const kindOf = (i: number, j: number): RowKind => {
    const c = stepCost(a[i]!, b[j]!, sa, sb);
    return c === 0 ? 'same' : c < DIFFERENT ? 'similar' : 'different';
  };
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    const rows: AlignedRow[] = [];
    for (let k = 0; k < Math.max(n, m); k++) {
      if (k < n && k < m) rows.push({ a: k, b: k, kind: kindOf(k, k) });
      else if (k < n) rows.push({ a: k, b: null, kind: 'only_a' });
      else rows.push({ a: null, b: k, kind: 'only_b' });
    }
    return rows;
  }
  const w = m + 1;
  const d = new Float64Array((n + 1) * w);
  for (let i = 1; i <= n; i++) d[i * w] = i * GAP;
  for (let j = 1; j <= m; j++) d[j] = j * GAP;
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= m; j++) {
      d[i * w + j] = Math.min(d[(i - 1) * w + j - 1]! + stepCost(a[i - 1]!, b[j - 1]!, sa, sb), d[(i - 1) * w + j]! + GAP, d[i * w + j - 1]! + GAP);
    }
  }
  const rows: AlignedRow[] = [];
  let i = n;
  let j = m;
  const eq = (x: number, y: number) => Math.abs(x - y) < 1e-9;
  while (i > 0 || j > 0) {
    const here = d[i * w + j]!;
    if (i > 0 && j > 0 && eq(here, d[(i - 1) * w + j - 1]! + stepCost(a[i - 1]!, b[j - 1]!, sa, sb))) {
      rows.push({ a: i - 1, b: j - 1, kind: kindOf(i - 1, j - 1) });
      i--;
      j--;
    } else if (i > 0 && eq(here, d[(i - 1) * w + j]! + GAP)) {
      rows.push({ a: i - 1, b: null, kind: 'only_a' });
      i--;
    } else {
      rows.push({ a: null, b: j - 1, kind: 'only_b' });
      j--;
    }
  }
  return rows.reverse();
}
