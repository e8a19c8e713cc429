import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
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

describe('Framebuffer observers', () => {
  it('hear a damage rectangle covering every changed pixel of fills, blits and copies; nothing outside them changes', () => {
    const rnd = mulberry32(7);
    const int = (n: number) => Math.floor(rnd() * n);
    const fb = new Framebuffer(41, 29);
    const damage: Array<[number, number, number, number]> = [];
    fb.observe({ damage: (x, y, w, h) => damage.push([x, y, w, h]), resize: () => {} });
    for (let step = 0; step < 300; step++) {
      const before = fb.data.slice();
      damage.length = 0;
      const [w, h] = [fb.width, fb.height];
      const x = int(w);
      const y = int(h);
      const rw = 1 + int(w - x);
      const rh = 1 + int(h - y);
      const op = int(3);
      if (op === 0) fb.fill(x, y, rw, rh, packRgb(int(256), int(256), int(256)));
      else if (op === 1)
        fb.blit(
          x,
          y,
          rw,
          rh,
          Uint8Array.from({ length: rw * rh * 3 }, () => int(256)),
          0,
          rw * 3,
          3,
        );
      else fb.copyRect(int(w - rw + 1), int(h - rh + 1), x, y, rw, rh);
      expect(damage, 'one damage call per operation').toEqual([[x, y, rw, rh]]);
      for (let py = 0; py < h; py++) {
        for (let px = 0; px < w; px++) {
          const inside = px >= x && px < x + rw && py >= y && py < y + rh;
          const o = (py * w + px) * 4;
          if (!inside && fb.data.subarray(o, o + 4).some((v, i) => v !== before[o + i])) throw new Error(`pixel (${px},${py}) changed outside the damage`);
        }
      }
    }
  });

  it('hear a resize (not damage), cursor shapes, and an async image once it is applied; unsubscribing stops them', async () => {
    const fb = new Framebuffer(8, 8);
    const heard: string[] = [];
    const stop = fb.observe({
      damage: (x, y, w, h) => heard.push(`damage ${x},${y},${w},${h}`),
      resize: (w, h) => heard.push(`resize ${w}x${h}`),
      cursor: (s) => heard.push(`cursor ${s ? `${s.width}x${s.height}` : 'none'}`),
    });
    const png = await sharp({ create: { width: 2, height: 3, channels: 3, background: { r: 9, g: 8, b: 7 } } })
      .png()
      .toBuffer();
    fb.image(1, 2, 2, 3, 'png', png);
    fb.fill(0, 0, 1, 1, packRgb(1, 2, 3)); // queued behind the image
    expect(heard, 'nothing before the image is decoded').toEqual([]);
    await fb.whenIdle();
    fb.resize(10, 6);
    fb.resize(10, 6); // same size: nothing
    fb.cursor({ hotX: 0, hotY: 0, width: 2, height: 2, rgba: new Uint8Array(16) });
    fb.cursor(null);
    expect(heard).toEqual(['damage 1,2,2,3', 'damage 0,0,1,1', 'resize 10x6', 'cursor 2x2', 'cursor none']);
    expect(fb.pixel(1, 2)).toEqual([9, 8, 7, 255]);
    stop();
    fb.fill(0, 0, 2, 2, packRgb(4, 5, 6));
    fb.resize(4, 4);
    expect(heard).toHaveLength(5);
    expectPlanesInStep(fb);
  });

  it('let several observers listen, and one may stop while being called', () => {
    const fb = new Framebuffer(4, 4);
    const a: number[] = [];
    const b: number[] = [];
    const stopA = fb.observe({
      damage: (x) => {
        a.push(x);
        stopA();
      },
      resize: () => {},
    });
    fb.observe({ damage: (x) => b.push(x), resize: () => {} });
    fb.fill(1, 0, 1, 1, 0xff000000);
    fb.fill(2, 0, 1, 1, 0xff000000);
    expect(a).toEqual([1]);
    expect(b).toEqual([1, 2]);
  });
});
