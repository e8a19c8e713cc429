/**
 * The time warp of the compare view (viewer/app/compare.ts): an instant of one run's timeline mapped
 * to the other's, piecewise linear between the instants of aligned steps (viewer/align.ts pairs them),
 * so dragging one timeline moves the other to the same point of its own sequence.
 */

/** What warpPoints() reads of an aligned row: an index into each run's steps, or null for a gap. */
export interface RowPair {
  a: number | null;
  b: number | null;
}

/**
 * Map instant `t` of one timeline to the other through `points` ([t in this, t in the other], both
 * non-decreasing): linear between neighbouring points, shifted by the nearest point's offset outside
 * them; `t` itself when there is no point.
 */
export function warpTime(points: ReadonlyArray<readonly [number, number]>, t: number): number {
  if (points.length === 0) return t;
  const first = points[0]!;
  const last = points[points.length - 1]!;
  if (t <= first[0]) return t - first[0] + first[1];
  if (t >= last[0]) return t - last[0] + last[1];
  let lo = 0;
  let hi = points.length - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (points[mid]![0] <= t) lo = mid;
    else hi = mid;
  }
  const [x0, y0] = points[lo]!;
  const [x1, y1] = points[hi]!;
  return x1 === x0 ? y0 : y0 + ((t - x0) / (x1 - x0)) * (y1 - y0);
}

/** The points of warpTime() from aligned rows: the start and the end of each pair of steps whose times are known, kept non-decreasing on both sides. */
export function warpPoints(
  rows: readonly RowPair[],
  a: ReadonlyArray<{ started_at?: number; ended_at?: number }>,
  b: ReadonlyArray<{ started_at?: number; ended_at?: number }>,
): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const push = (x: number | undefined, y: number | undefined) => {
    if (typeof x !== 'number' || typeof y !== 'number') return;
    const prev = out[out.length - 1];
    if (prev && (x < prev[0] || y < prev[1])) return;
    out.push([x, y]);
  };
  for (const r of rows) {
    if (r.a === null || r.b === null) continue;
    const ea = a[r.a];
    const eb = b[r.b];
    push(ea?.started_at, eb?.started_at);
    push(ea?.ended_at, eb?.ended_at);
  }
  return out;
}
