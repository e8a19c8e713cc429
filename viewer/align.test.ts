import { describe, expect, it } from 'vitest';
import { type AlignStep, type AlignedRow, alignSteps, stepCost } from './align.ts';
import { warpPoints, warpTime } from './app/warp.ts';

const click = (x: number, y: number): AlignStep => ({ action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' } });
const type = (text: string): AlignStep => ({ action: 'type_text', params: { text } });
const keys = (k: string): AlignStep => ({ action: 'press_keys', params: { keys: k } });
const wait = (seconds: number): AlignStep => ({ action: 'wait', params: { seconds } });
const move = (x: number, y: number): AlignStep => ({ action: 'mouse_move', params: { position: { x, y } } });
const finish: AlignStep = { action: 'finish', params: {} };

/** Rows as compact strings: "a:b kind", "-" for a gap. */
const show = (rows: AlignedRow[]) => rows.map((r) => `${r.a ?? '-'}:${r.b ?? '-'} ${r.kind}`);

/** Every step of each side exactly once, in order. */
function expectComplete(rows: AlignedRow[], n: number, m: number): void {
  expect(rows.flatMap((r) => (r.a === null ? [] : [r.a]))).toEqual(Array.from({ length: n }, (_, i) => i));
  expect(rows.flatMap((r) => (r.b === null ? [] : [r.b]))).toEqual(Array.from({ length: m }, (_, i) => i));
}

describe('stepCost', () => {
  it('same action with roughly equal params costs nothing; other params cost less than other actions', () => {
    expect(stepCost(click(290, 140), click(290, 140))).toBe(0);
    expect(stepCost(click(290, 140), click(300, 146))).toBe(0); // within 2 % of the screen
    const far = stepCost(click(290, 140), click(1000, 700));
    expect(far).toBeGreaterThan(0);
    expect(far).toBeLessThan(stepCost(click(290, 140), type('x')));
    expect(stepCost(type('Wireless Mouse '), type('wireless mouse'))).toBe(0);
    const typo = stepCost(type('wireless mouse'), type('wireles mouse'));
    expect(typo).toBeGreaterThan(0);
    expect(typo).toBeLessThan(stepCost(type('wireless mouse'), type('zzz')));
    expect(stepCost(wait(1), wait(1.05))).toBe(0);
    expect(stepCost(finish, finish)).toBe(0);
  });

  it('positions compare as fractions of each run screen: the same place at 1280x800 and 1920x1200 is the same', () => {
    expect(stepCost(click(640, 400), click(960, 600), { width: 1280, height: 800 }, { width: 1920, height: 1200 })).toBe(0);
    expect(stepCost(click(640, 400), click(960, 600))).toBeGreaterThan(0);
  });
});

describe('alignSteps', () => {
  it('identical runs pair every step as same', () => {
    const s = [click(290, 140), type('wireless mouse'), keys('Return'), finish];
    const rows = alignSteps(s, s);
    expect(show(rows)).toEqual(['0:0 same', '1:1 same', '2:2 same', '3:3 same']);
  });

  it('an extra step shows as a gap, and the steps after it stay paired (not shifted by one)', () => {
    const a = [click(290, 140), type('wireless mouse'), keys('Return'), finish];
    const b = [move(10, 10), click(291, 141), type('wireless mouse'), wait(0.5), keys('Return'), finish];
    const rows = alignSteps(a, b);
    expect(show(rows)).toEqual(['-:0 only_b', '0:1 same', '1:2 same', '-:3 only_b', '2:4 same', '3:5 same']);
    expectComplete(rows, a.length, b.length);
    // And the other way round: the gaps are on b's side.
    expect(show(alignSteps(b, a))).toEqual(['0:- only_a', '1:0 same', '2:1 same', '3:- only_a', '4:2 same', '5:3 same']);
  });

  it('a missing step in the middle; a different action at the same place is paired as different', () => {
    const a = [click(100, 100), type('abc'), keys('Tab'), type('def'), finish];
    const b = [click(100, 100), type('abc'), type('def'), finish];
    expect(show(alignSteps(a, b))).toEqual(['0:0 same', '1:1 same', '2:- only_a', '3:2 same', '4:3 same']);
    const c = [click(100, 100), keys('Return'), finish];
    const d = [click(100, 100), wait(2), finish];
    expect(show(alignSteps(c, d))).toEqual(['0:0 same', '1:1 different', '2:2 same']);
  });

  it('a retried click lands near the first one: paired with the closer click, the other is the gap', () => {
    const a = [click(100, 100), click(500, 300), finish];
    const b = [click(100, 100), click(900, 700), click(502, 301), finish];
    expect(show(alignSteps(a, b))).toEqual(['0:0 same', '-:1 only_b', '1:2 same', '2:3 same']);
  });

  it('empty sides, and long random sequences: complete, in order, and never worse than pairing by index', () => {
    expect(alignSteps([], [])).toEqual([]);
    expect(show(alignSteps([finish], []))).toEqual(['0:- only_a']);
    expect(show(alignSteps([], [finish, finish]))).toEqual(['-:0 only_b', '-:1 only_b']);
    let seed = 3;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = (): AlignStep =>
      [click(Math.floor(rnd() * 1280), Math.floor(rnd() * 800)), type(rnd() < 0.5 ? 'a' : 'b'), keys('Return'), wait(1), finish][Math.floor(rnd() * 5)]!;
    for (let trial = 0; trial < 30; trial++) {
      const a = Array.from({ length: Math.floor(rnd() * 40) }, pick);
      const b = Array.from({ length: Math.floor(rnd() * 40) }, pick);
      const rows = alignSteps(a, b);
      expectComplete(rows, a.length, b.length);
      const cost = (rs: AlignedRow[]) => rs.reduce((s, r) => s + (r.a === null || r.b === null ? 1 : stepCost(a[r.a]!, b[r.b]!)), 0);
      const byIndex: AlignedRow[] = Array.from({ length: Math.max(a.length, b.length) }, (_, k) => ({
        a: k < a.length ? k : null,
        b: k < b.length ? k : null,
        kind: 'same' as const,
      }));
      expect(cost(rows)).toBeLessThanOrEqual(cost(byIndex) + 1e-9);
    }
  });
});

describe('warpTime / warpPoints', () => {
  it('maps linearly between aligned instants and keeps the offset outside them', () => {
    const pts: Array<[number, number]> = [
      [1000, 5000],
      [2000, 7000],
      [4000, 7500],
    ];
    expect(warpTime(pts, 1000)).toBe(5000);
    expect(warpTime(pts, 1500)).toBe(6000);
    expect(warpTime(pts, 3000)).toBe(7250);
    expect(warpTime(pts, 500)).toBe(4500);
    expect(warpTime(pts, 5000)).toBe(8500);
    expect(warpTime([], 42)).toBe(42);
    // Two points at one instant (a step of no duration on one side): past it, the later one counts.
    const dup: Array<[number, number]> = [
      [0, 0],
      [10, 10],
      [10, 20],
      [30, 40],
    ];
    expect(warpTime(dup, 10)).toBe(20);
    expect(warpTime(dup, 20)).toBe(30);
  });

  it('takes the start and end of each paired step, skipping gaps, unknown times and anything that would go back', () => {
    const rows: AlignedRow[] = [
      { a: 0, b: null, kind: 'only_a' },
      { a: 1, b: 0, kind: 'same' },
      { a: 2, b: 1, kind: 'similar' },
      { a: null, b: 2, kind: 'only_b' },
      { a: 3, b: 3, kind: 'same' },
    ];
    const a = [{ started_at: 0, ended_at: 5 }, { started_at: 10, ended_at: 20 }, { started_at: 30, ended_at: 40 }, { started_at: 50 }];
    const b = [
      { started_at: 100, ended_at: 110 },
      { started_at: 90, ended_at: 130 },
      { started_at: 140, ended_at: 150 },
      { started_at: 160, ended_at: 170 },
    ];
    expect(warpPoints(rows, a, b)).toEqual([
      [10, 100],
      [20, 110],
      [40, 130],
      [50, 160],
    ]);
  });
});
