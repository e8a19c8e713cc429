import { describe, expect, it } from 'vitest';
import { Framebuffer } from './framebuffer.ts';
import { packRgb } from './sink.ts';
import { expectPlanesInStep } from './test-helpers/decode.ts';
import { mulberry32 } from '../prng.ts';

describe('Framebuffer RGB plane', () => {
  it('stays equal to the RGBA pixels through fills, blits, copies and resizes, synced at random moments', () => {
    const rnd = mulberry32(42);
    const int = (n: number) => Math.floor(rnd() * n);
    const fb = new Framebuffer(37, 23);
    for (let step = 0; step < 400; step++) {
      const w = fb.width;
      const h = fb.height;
      const x = int(w);
      const y = int(h);
      const rw = 1 + int(w - x);
      const rh = 1 + int(h - y);
      switch (int(5)) {
        case 0:
          fb.fill(x, y, rw, rh, packRgb(int(256), int(256), int(256)));
          break;
        case 1: {
          const bpp = rnd() < 0.5 ? 3 : 4;
          const src = Uint8Array.from({ length: rw * rh * bpp }, () => int(256));
          fb.blit(x, y, rw, rh, src, 0, rw * bpp, bpp);
          break;
        }
        case 2:
          fb.copyRect(int(w - rw + 1), int(h - rh + 1), x, y, rw, rh);
          break;
        case 3:
          if (rnd() < 0.1) fb.resize(10 + int(40), 10 + int(30));
          break;
        default:
          expectPlanesInStep(fb);
      }
    }
    expectPlanesInStep(fb);
    expect(fb.rgbPlane().length).toBe(fb.width * fb.height * 3);
  });
});
