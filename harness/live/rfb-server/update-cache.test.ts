import { describe, expect, it } from 'vitest';
import { CLIENT_PIXEL_FORMAT } from '../../rfb/client-messages.ts';
import { packRgb } from '../../rfb/sink.ts';
import type { UpdateRect } from './messages.ts';
import { pixelWriter } from './pixel-format.ts';
import { patternFramebuffer } from './test-helpers.ts';
import { UpdateCache } from './update-cache.ts';

describe('UpdateCache', () => {
  it('builds an update once for the same framebuffer version, rectangles and format; anew when any differs', () => {
    const cache = new UpdateCache();
    const fb = patternFramebuffer(20, 10);
    const native = pixelWriter(CLIENT_PIXEL_FORMAT);
    const bgr = pixelWriter({ ...CLIENT_PIXEL_FORMAT, redShift: 16, blueShift: 0 });
    const rects: UpdateRect[] = [{ kind: 'hextile', x: 0, y: 0, w: 5, h: 5 }];
    let builds = 0;
    const build = () => Uint8Array.of(++builds);
    const first = cache.get(rects, fb, native, build);
    expect(cache.get([{ kind: 'hextile', x: 0, y: 0, w: 5, h: 5 }], fb, native, build)).toBe(first);
    expect(builds).toBe(1);
    cache.get(rects, fb, bgr, build); // another format
    cache.get([{ kind: 'raw', x: 0, y: 0, w: 5, h: 5 }], fb, bgr, build); // another encoding
    fb.fill(0, 0, 1, 1, packRgb(1, 1, 1));
    cache.get([{ kind: 'raw', x: 0, y: 0, w: 5, h: 5 }], fb, bgr, build); // another version
    cache.get([{ kind: 'raw', x: 0, y: 0, w: 5, h: 5 }], patternFramebuffer(20, 10), bgr, build); // another framebuffer
    expect(builds).toBe(5);
    expect([cache.hits, cache.misses]).toEqual([1, 5]);
  });

  it('never keeps an update with a cursor shape (the shape has no version)', () => {
    const cache = new UpdateCache();
    const fb = patternFramebuffer(4, 4);
    let builds = 0;
    const rects: UpdateRect[] = [{ kind: 'cursor', shape: null }];
    cache.get(rects, fb, pixelWriter(CLIENT_PIXEL_FORMAT), () => Uint8Array.of(++builds));
    cache.get(rects, fb, pixelWriter(CLIENT_PIXEL_FORMAT), () => Uint8Array.of(++builds));
    expect(builds).toBe(2);
  });
});
