/** Screen sizes: "WxH" strings or { width, height }, checked against the desktop's bounds. */
import { VncuaError } from '../errors.ts';

/** Smallest and largest screen side a desktop accepts (docker/start.sh uses the same). */
export const MIN_SCREEN_SIDE = 16;
/** Largest screen side (8192 keeps a frame under 64 Mpixels). */
export const MAX_SCREEN_SIDE = 8192;

/** A screen size in pixels. */
export interface ScreenSize {
  width: number;
  height: number;
}

/** The default screen size, 1280x800. */
export const DEFAULT_SCREEN_SIZE: Readonly<ScreenSize> = Object.freeze({ width: 1280, height: 800 });

/** "WxH" (e.g. 1280x800, up to 5 digits a side, spaces around allowed) as numbers, bounds unchecked; null when malformed. */
export function parseWxH(text: string): ScreenSize | null {
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(text.trim());
  return m ? { width: Number(m[1]), height: Number(m[2]) } : null;
}

/** Parse "WxH" (or check a { width, height }); throws DESKTOP_ERR_BAD_SIZE when malformed or out of bounds. */
export function parseScreenSize(size: string | ScreenSize): ScreenSize {
  let width: number;
  let height: number;
  if (typeof size === 'string') {
    const parsed = parseWxH(size);
    if (!parsed) {
      throw new VncuaError('DESKTOP_ERR_BAD_SIZE', `Bad screen size "${size}": expected WxH such as 1280x800.`, {
        details: { size },
      });
    }
    ({ width, height } = parsed);
  } else {
    width = size.width;
    height = size.height;
  }
  const ok = (n: number) => Number.isInteger(n) && n >= MIN_SCREEN_SIDE && n <= MAX_SCREEN_SIDE;
  if (!ok(width) || !ok(height)) {
    throw new VncuaError('DESKTOP_ERR_BAD_SIZE', `Bad screen size ${width}x${height}: each side must be a whole number between ${MIN_SCREEN_SIDE} and ${MAX_SCREEN_SIDE}.`, {
      details: { width, height },
    });
  }
  return { width, height };
}
