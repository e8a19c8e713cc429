import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { MAX_SCREEN_SIDE, MIN_SCREEN_SIDE, parseScreenSize } from './size.ts';

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return isVncuaError(e) ? e.code : 'not a VncuaError';
  }
  return undefined;
}

describe('parseScreenSize', () => {
  it('reads WxH strings and { width, height }', () => {
    expect(parseScreenSize('1280x800')).toEqual({ width: 1280, height: 800 });
    expect(parseScreenSize(' 1920x1080 ')).toEqual({ width: 1920, height: 1080 });
    expect(parseScreenSize('1001x777')).toEqual({ width: 1001, height: 777 });
    expect(parseScreenSize({ width: 640, height: 480 })).toEqual({ width: 640, height: 480 });
    expect(parseScreenSize(`${MIN_SCREEN_SIDE}x${MAX_SCREEN_SIDE}`)).toEqual({ width: MIN_SCREEN_SIDE, height: MAX_SCREEN_SIDE });
  });

  it.each(['10x', 'x10', '1280', '1280x800x2', '1280*800', '-5x10', '12.5x10', '', 'axb'])('rejects "%s" with DESKTOP_ERR_BAD_SIZE', (s) => {
    expect(code(() => parseScreenSize(s))).toBe('DESKTOP_ERR_BAD_SIZE');
  });

  it('rejects sides out of bounds or not whole', () => {
    expect(code(() => parseScreenSize(`${MIN_SCREEN_SIDE - 1}x600`))).toBe('DESKTOP_ERR_BAD_SIZE');
    expect(code(() => parseScreenSize(`800x${MAX_SCREEN_SIDE + 1}`))).toBe('DESKTOP_ERR_BAD_SIZE');
    expect(code(() => parseScreenSize({ width: 800.5, height: 600 }))).toBe('DESKTOP_ERR_BAD_SIZE');
    expect(code(() => parseScreenSize({ width: Number.NaN, height: 600 }))).toBe('DESKTOP_ERR_BAD_SIZE');
  });
});
