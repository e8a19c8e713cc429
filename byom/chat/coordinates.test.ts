import { describe, expect, it } from 'vitest';
import { coordinateProblem, toScreen, type CoordinateFrame } from './coordinates.ts';

const screen = { width: 1280, height: 800 };
const frame = (space: CoordinateFrame['space'], image = screen): CoordinateFrame => ({ space, screen, image });

describe('toScreen', () => {
  it('absolute: pixel indices, fractions to the nearest pixel, edges kept, beyond clamped', () => {
    const f = frame('absolute');
    expect(toScreen(f, 0, 0)).toEqual({ x: 0, y: 0 });
    expect(toScreen(f, 1279, 799)).toEqual({ x: 1279, y: 799 });
    expect(toScreen(f, 640.49, 400.5)).toEqual({ x: 640, y: 401 });
    expect(toScreen(f, 1280, 800)).toEqual({ x: 1279, y: 799 });
  });

  it('normalized1000: the pixel containing the position; 1000 is the last pixel', () => {
    const f = frame('normalized1000');
    expect(toScreen(f, 0, 0)).toEqual({ x: 0, y: 0 });
    expect(toScreen(f, 1000, 1000)).toEqual({ x: 1279, y: 799 });
    expect(toScreen(f, 500, 500)).toEqual({ x: 640, y: 400 });
    // 999.3 * 1.28 = 1279.1 → 1279; 0.78 * 1.28 = 0.998 → 0; 0.79 → 1.011 → 1
    expect(toScreen(f, 999.3, 998.9)).toEqual({ x: 1279, y: 799 });
    expect(toScreen(f, 0.78, 0)).toEqual({ x: 0, y: 0 });
    expect(toScreen(f, 0.79, 0)).toEqual({ x: 1, y: 0 });
    // Every screen pixel is reachable: the centre of pixel p in normalized units maps back to p.
    for (let p = 0; p < 1280; p++) expect(toScreen(f, ((p + 0.5) * 1000) / 1280, 0).x).toBe(p);
    for (let p = 0; p < 800; p++) expect(toScreen(f, 0, ((p + 0.5) * 1000) / 800).y).toBe(p);
  });

  it('resized: image pixel centres; first and last image pixels map to first and last screen pixels at any ratio', () => {
    for (const image of [
      { width: 1024, height: 640 },
      { width: 1000, height: 700 },
      { width: 1366, height: 768 },
      { width: 1280, height: 800 },
    ]) {
      const f = frame('resized', image);
      expect(toScreen(f, 0, 0)).toEqual({ x: 0, y: 0 });
      expect(toScreen(f, image.width - 1, image.height - 1)).toEqual({ x: 1279, y: 799 });
      expect(toScreen(f, image.width, image.height)).toEqual({ x: 1279, y: 799 });
      // Monotonic, and each image pixel lands inside the screen span it covers.
      let last = -1;
      for (let i = 0; i < image.width; i++) {
        const x = toScreen(f, i, 0).x;
        expect(x).toBeGreaterThanOrEqual(last);
        expect(x).toBeGreaterThanOrEqual(Math.floor((i * 1280) / image.width));
        expect(x).toBeLessThan(Math.ceil(((i + 1) * 1280) / image.width));
        last = x;
      }
    }
    expect(toScreen(frame('resized', { width: 1024, height: 640 }), 512, 320)).toEqual({ x: 640, y: 400 });
  });
});

describe('coordinateProblem', () => {
  it('accepts 0..extent inclusive and rejects what lies outside or is not finite', () => {
    expect(coordinateProblem(frame('absolute'), 1280, 800)).toBeNull();
    expect(coordinateProblem(frame('absolute'), 1281, 0)).toMatch(/0\.\.1280/);
    expect(coordinateProblem(frame('absolute'), -1, 0)).not.toBeNull();
    expect(coordinateProblem(frame('normalized1000'), 1000, 1000)).toBeNull();
    expect(coordinateProblem(frame('normalized1000'), 1001, 5)).not.toBeNull();
    expect(coordinateProblem(frame('resized', { width: 1024, height: 640 }), 1024, 641)).not.toBeNull();
    expect(coordinateProblem(frame('resized', { width: 1024, height: 640 }), Number.NaN, 1)).not.toBeNull();
  });
});
