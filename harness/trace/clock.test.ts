import { expect, it } from 'vitest';
import { now, roundMs } from './clock.ts';

it('now() is epoch milliseconds, never decreasing, with sub-millisecond values', () => {
  const samples = Array.from({ length: 20_000 }, () => now());
  expect(samples.every((t, i) => i === 0 || t >= samples[i - 1]!)).toBe(true);
  // epoch ms: same order of magnitude as Date.now() (this is a sanity check of the origin, not a timing assertion)
  expect(Math.abs(samples[0]! - Date.now())).toBeLessThan(60_000);
  expect(samples.some((t) => !Number.isInteger(t))).toBe(true);
  // rounded to the microsecond
  for (const t of samples.slice(0, 100)) expect(roundMs(t)).toBe(t);
});

it('roundMs rounds to 3 decimals', () => {
  expect(roundMs(7.4999999)).toBe(7.5);
  expect(roundMs(1763780000130.9 - 1763780000123.4)).toBe(7.5);
  expect(roundMs(0.0004)).toBe(0);
});
