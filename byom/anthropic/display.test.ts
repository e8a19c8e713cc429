/** Display size and the exact mapping between display (screenshot) pixels and screen pixels. */
import { describe, expect, it } from 'vitest';
import { DisplayMap, MAX_DISPLAY_PIXELS, fitDisplay } from './display.ts';

describe('fitDisplay', () => {
  it.each([
    [1920, 1080, 1280, 720],
    [2560, 1600, 1280, 800],
    [3840, 2160, 1280, 720],
    [1366, 768, 1280, 720],
    [1440, 900, 1280, 800],
    [800, 1280, 500, 800],
    [1280, 800, 1280, 800],
    [1024, 768, 1024, 768],
    [640, 480, 640, 480],
  ])('%ix%i → %ix%i (aspect kept, within 1280x800 and 1.15 MP, never upscaled)', (W, H, w, h) => {
    const d = fitDisplay({ width: W, height: H });
    expect(d).toEqual({ width: w, height: h });
    if (w !== W) {
      expect(d.width * d.height).toBeLessThanOrEqual(MAX_DISPLAY_PIXELS);
      expect(Math.abs(d.width / d.height - W / H)).toBeLessThan(0.01);
    }
  });
});

describe('DisplayMap', () => {
  const map = new DisplayMap({ width: 1280, height: 720 }, { width: 1920, height: 1080 });

  it('maps the edge pixels of a 1280x720 display onto the edge pixels of a 1920x1080 screen', () => {
    expect(map.toScreen({ x: 0, y: 0 })).toEqual({ x: 0, y: 0 });
    expect(map.toScreen({ x: 1279, y: 719 })).toEqual({ x: 1919, y: 1079 });
    expect(map.toScreen({ x: 1279, y: 0 })).toEqual({ x: 1919, y: 0 });
    expect(map.toScreen({ x: 0, y: 719 })).toEqual({ x: 0, y: 1079 });
    // The display's own edge (x = w) is clamped to the last pixel.
    expect(map.toScreen({ x: 1280, y: 720 })).toEqual({ x: 1919, y: 1079 });
    expect(map.toDisplay({ x: 1919, y: 1079 })).toEqual({ x: 1279, y: 719 });
    expect(map.toDisplay({ x: 0, y: 0 })).toEqual({ x: 0, y: 0 });
  });

  it('every display pixel lands inside the screen area it was scaled from, and comes back to itself', () => {
    for (const [w, W] of [
      [1280, 1920],
      [720, 1080],
      [1280, 1366],
      [500, 800],
      [1024, 1024],
    ] as const) {
      const m = new DisplayMap({ width: w, height: 10 }, { width: W, height: 10 });
      let prev = -1;
      for (let x = 0; x < w; x++) {
        const sx = m.toScreen({ x, y: 0 }).x;
        expect(sx).toBeGreaterThanOrEqual(Math.floor((x * W) / w));
        expect(sx).toBeLessThan(Math.ceil(((x + 1) * W) / w));
        expect(sx).toBeGreaterThan(prev);
        prev = sx;
        expect(m.toDisplay({ x: sx, y: 0 }).x).toBe(x);
      }
      expect(m.toScreen({ x: 0, y: 0 }).x).toBe(0);
      expect(m.toScreen({ x: w - 1, y: 0 }).x).toBe(W - 1);
    }
  });

  it('rounds fractional coordinates to the nearest pixel and is the identity without scaling', () => {
    const id = new DisplayMap({ width: 1280, height: 800 }, { width: 1280, height: 800 });
    expect(id.identity).toBe(true);
    expect(map.identity).toBe(false);
    for (const x of [0, 1, 639, 1279]) expect(id.toScreen({ x, y: x % 800 })).toEqual({ x, y: x % 800 });
    expect(id.toScreen({ x: 10.49, y: 10.5 })).toEqual({ x: 10, y: 11 });
    // x = 0.4 is 0.9 px from the display's left edge (pixel centres are at whole numbers), i.e. 1.35 screen px: screen pixel 1.
    expect(map.toScreen({ x: 0.4, y: 0 })).toEqual({ x: 1, y: 0 });
    expect(map.toScreen({ x: -0.4, y: -3 })).toEqual({ x: 0, y: 0 });
  });

  it('regionToScreen: display edges [x1, y1, x2, y2] → the screen rectangle they cover', () => {
    expect(map.regionToScreen(0, 0, 1280, 720)).toEqual({ left: 0, top: 0, width: 1920, height: 1080 });
    expect(map.regionToScreen(100, 100, 200, 150)).toEqual({ left: 150, top: 150, width: 150, height: 75 });
    expect(map.regionToScreen(1279, 719, 1280, 720)).toEqual({ left: 1918, top: 1078, width: 2, height: 2 });
  });
});
