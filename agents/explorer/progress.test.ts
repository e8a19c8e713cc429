import { describe, expect, it } from 'vitest';
import { StateTracker, changedRegions, frameHash, greyGrid, hamming, type RgbaFrame } from './progress.ts';

/** A `w` x `h` frame of grey `bg` with filled rectangles of grey `v`. */
function frame(w: number, h: number, bg: number, rects: Array<{ x: number; y: number; w: number; h: number; v: number }> = []): RgbaFrame {
  const data = new Uint8Array(w * h * 4);
  const px = new Uint32Array(data.buffer);
  const grey = (v: number) => (0xff000000 | (v << 16) | (v << 8) | v) >>> 0;
  px.fill(grey(bg));
  for (const r of rects) for (let y = r.y; y < r.y + r.h; y++) px.fill(grey(r.v), y * w + r.x, y * w + r.x + r.w);
  return { width: w, height: h, data };
}

describe('greyGrid', () => {
  it('gives each cell its grey mean and a contrast only where something is drawn', () => {
    const g = greyGrid(
      frame(320, 200, 200, [
        { x: 0, y: 0, w: 160, h: 100, v: 0 },
        { x: 250, y: 150, w: 30, h: 40, v: 0 },
      ]),
      2,
      2,
    );
    expect(g.mean[0]).toBe(0);
    expect(g.mean[1]).toBeCloseTo(200);
    expect(g.std[0]).toBe(0);
    expect(g.std[3]).toBeGreaterThan(10);
  });
});

describe('frameHash and hamming', () => {
  it('is 64 hex digits, equal for equal frames, near for a small change and far for another screen', () => {
    const a = frameHash(frame(1280, 800, 255, [{ x: 100, y: 100, w: 300, h: 40, v: 30 }]));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(frameHash(frame(1280, 800, 255, [{ x: 100, y: 100, w: 300, h: 40, v: 30 }]))).toBe(a);
    const moved = frameHash(frame(1280, 800, 255, [{ x: 104, y: 100, w: 300, h: 40, v: 30 }]));
    expect(hamming(a, moved)).toBeLessThanOrEqual(6);
    const other = frameHash(
      frame(1280, 800, 255, [
        { x: 700, y: 500, w: 500, h: 200, v: 30 },
        { x: 0, y: 0, w: 1280, h: 60, v: 90 },
      ]),
    );
    expect(hamming(a, other)).toBeGreaterThan(6);
    expect(hamming('f0', '0f')).toBe(8);
    expect(hamming('0', '00')).toBe(4);
  });
});

describe('changedRegions', () => {
  it('names the cells that changed, with their boxes', () => {
    const before = greyGrid(frame(320, 200, 255), 4, 2);
    const after = greyGrid(frame(320, 200, 255, [{ x: 250, y: 120, w: 60, h: 60, v: 0 }]), 4, 2);
    const changed = changedRegions(before, after, { width: 320, height: 200 });
    expect(changed).toEqual([{ col: 3, row: 1, box: { x: 240, y: 100, width: 80, height: 100 } }]);
    expect(changedRegions(before, before, { width: 320, height: 200 })).toEqual([]);
    expect(() => changedRegions(before, greyGrid(frame(320, 200, 255), 2, 2), { width: 320, height: 200 })).toThrow(/shapes/);
  });
});

describe('StateTracker', () => {
  it('counts a frame within the tolerance on the same URL as the same state, and a new URL or a far frame as new', () => {
    const t = new StateTracker(4);
    expect(t.visit('http://a/', 'ff00', 0)).toMatchObject({ isNew: true, state: { key: 'http://a/#ff00', visits: 1, firstStep: 0 } });
    expect(t.visit('http://a/', 'ff01', 1)).toMatchObject({ isNew: false, state: { key: 'http://a/#ff00', visits: 2 } });
    expect(t.visit('http://b/', 'ff00', 2).isNew).toBe(true);
    expect(t.visit('http://a/', '00ff', 3).isNew).toBe(true);
    expect(t.visit(null, '00ff', 4)).toMatchObject({ isNew: true, state: { key: '#00ff', url: null } });
    expect(t.states.map((s) => s.firstStep)).toEqual([0, 2, 3, 4]);
  });
});
