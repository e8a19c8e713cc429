/**
 * Small statistics and table helpers shared by the bench scripts. Benchmarks run us
 * and the peer in the same process run and report medians and ratios, since these
 * machines are noisy.
 */

/** Median of a sample (ms). */
export function median(xs: number[]): number {
  return quantile(xs, 0.5);
}

/** Linear-interpolated quantile q in [0, 1]. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/** Time `fn` n times (after `warmup` untimed runs); returns the durations in ms. */
export async function sample(n: number, fn: () => Promise<unknown> | unknown, warmup = 2): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

/** Format a number of ms for tables. */
export function ms(x: number): string {
  return Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(1)) : 'n/a';
}

/** Render a markdown table. */
export function table(header: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
