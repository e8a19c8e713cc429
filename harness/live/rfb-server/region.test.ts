import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../prng.ts';
import { DirtyRegion, type Rect, subtract } from './region.ts';

const covered = (rects: readonly Rect[], x: number, y: number) => rects.some((r) => x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h);

describe('DirtyRegion', () => {
  it('merges neighbouring tiles of a row, then rows of the same span, into one rectangle', () => {
    const r = new DirtyRegion();
    for (let y = 0; y < 32; y += 16) for (let x = 0; x < 64; x += 16) r.add(x, y, 16, 16);
    expect(r.rects).toEqual([{ x: 0, y: 0, w: 64, h: 32 }]);
  });

  it('drops a rectangle inside another, swallows those inside a new one, keeps apart ones apart', () => {
    const r = new DirtyRegion();
    r.add(10, 10, 20, 20);
    r.add(12, 12, 2, 2);
    r.add(100, 100, 5, 5);
    expect(r.rects).toEqual([
      { x: 10, y: 10, w: 20, h: 20 },
      { x: 100, y: 100, w: 5, h: 5 },
    ]);
    r.add(0, 0, 50, 50);
    expect(r.rects).toEqual([
      { x: 100, y: 100, w: 5, h: 5 },
      { x: 0, y: 0, w: 50, h: 50 },
    ]);
    r.add(5, 5, 0, 3); // empty: ignored
    expect(r.rects).toHaveLength(2);
  });

  it('past its bound, a new rectangle joins the one it grows least', () => {
    const r = new DirtyRegion(3);
    r.add(0, 0, 10, 10);
    r.add(100, 0, 10, 10);
    r.add(0, 100, 10, 10);
    r.add(104, 12, 4, 4); // nearest to the second
    expect(r.rects).toEqual([
      { x: 0, y: 0, w: 10, h: 10 },
      { x: 100, y: 0, w: 10, h: 16 },
      { x: 0, y: 100, w: 10, h: 10 },
    ]);
  });

  it('take() hands out the parts inside the area and keeps the rest; clip() cuts to a size', () => {
    const r = new DirtyRegion();
    r.add(0, 0, 100, 10);
    expect(r.take({ x: 20, y: 0, w: 30, h: 100 })).toEqual([{ x: 20, y: 0, w: 30, h: 10 }]);
    expect([...r.rects].sort((a, b) => a.x - b.x)).toEqual([
      { x: 0, y: 0, w: 20, h: 10 },
      { x: 50, y: 0, w: 50, h: 10 },
    ]);
    r.clip(60, 5);
    expect([...r.rects].sort((a, b) => a.x - b.x)).toEqual([
      { x: 0, y: 0, w: 20, h: 5 },
      { x: 50, y: 0, w: 10, h: 5 },
    ]);
    expect(r.take({ x: 0, y: 0, w: 60, h: 5 })).toHaveLength(2);
    expect(r.empty).toBe(true);
  });

  it('subtract() leaves exactly the pixels of the rectangle outside the cut', () => {
    const r = { x: 2, y: 3, w: 10, h: 8 };
    const cut = { x: 5, y: 1, w: 4, h: 5 };
    const parts = subtract(r, cut);
    for (let y = 0; y < 14; y++) {
      for (let x = 0; x < 14; x++) {
        const want = covered([r], x, y) && !covered([cut], x, y);
        expect(parts.filter((p) => covered([p], x, y)).length, `(${x},${y})`).toBe(want ? 1 : 0);
      }
    }
  });

  it('whatever is added, every added pixel stays covered until taken, within the bound', () => {
    const rnd = mulberry32(3);
    const int = (n: number) => Math.floor(rnd() * n);
    for (let round = 0; round < 40; round++) {
      const r = new DirtyRegion(6);
      const added: Rect[] = [];
      for (let i = 0; i < 25; i++) {
        const a = { x: int(40), y: int(30), w: 1 + int(12), h: 1 + int(9) };
        added.push(a);
        r.add(a.x, a.y, a.w, a.h);
        expect(r.rects.length).toBeLessThanOrEqual(6);
      }
      const area = { x: int(20), y: int(15), w: 5 + int(30), h: 5 + int(20) };
      const out = r.take(area);
      for (const a of added) {
        for (let y = a.y; y < a.y + a.h; y++) {
          for (let x = a.x; x < a.x + a.w; x++) {
            const inArea = covered([area], x, y);
            if (inArea && !covered(out, x, y)) throw new Error(`(${x},${y}) inside the area was not handed out`);
            if (!inArea && !covered(r.rects, x, y)) throw new Error(`(${x},${y}) outside the area was lost`);
          }
        }
      }
      for (const o of out) expect(covered([area], o.x, o.y) && covered([area], o.x + o.w - 1, o.y + o.h - 1)).toBe(true);
    }
  });
});
