import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../harness/prng.ts';
import { UNSTICK_ORDER, Unsticker, emptySpot } from './unstick.ts';

const screen = { width: 1280, height: 800 };

describe('Unsticker', () => {
  it('cycles escape, scroll, click elsewhere, go back, reload; skips go back without a page to go back to; a whole cycle is exhaustion', () => {
    const u = new Unsticker(mulberry32(1));
    const used = [];
    for (let i = 0; i < 4; i++) used.push(u.next({ screen, occupied: [], canGoBack: false }).strategy);
    expect(used).toEqual(['escape', 'scroll', 'click_elsewhere', 'reload']);
    expect(u.exhausted).toBe(true);
    u.progressed();
    expect(u.exhausted).toBe(false);
    const all = [];
    for (let i = 0; i < 5; i++) all.push(u.next({ screen, occupied: [], canGoBack: true }));
    expect(all.map((x) => x.strategy)).toEqual([...UNSTICK_ORDER]);
    expect(all.map((x) => x.move.step.action)).toEqual(['press_keys', 'mouse_scroll', 'mouse_click', 'page_navigation', 'press_keys']);
    expect(all[4]!.move).toMatchObject({ strategy: 'unstick.reload', step: { params: { keys: 'F5' } } });
  });

  it('clicks elsewhere only outside the targets, the same spot for the same seed', () => {
    const occupied = [{ x: 0, y: 0, width: 1280, height: 400 }];
    const a = emptySpot(screen, occupied, mulberry32(5));
    expect(a!.y).toBeGreaterThanOrEqual(400);
    expect(emptySpot(screen, occupied, mulberry32(5))).toEqual(a);
    expect(emptySpot(screen, [{ x: 0, y: 0, width: 1280, height: 800 }], mulberry32(5))).toBeNull();
  });
});
