/**
 * A known, asymmetric root-window pattern for real-server tests: written as an XBM
 * for `xsetroot -bitmap`, and checked pixel by pixel (a flipped, shifted or
 * transposed picture cannot pass).
 */
import type { Framebuffer } from '../framebuffer.ts';

/** Foreground and background colours to pass to xsetroot (-fg '#336699' -bg '#ffcc00'). */
export const PATTERN_FG: [number, number, number] = [0x33, 0x66, 0x99];
export const PATTERN_BG: [number, number, number] = [0xff, 0xcc, 0x00];
/** xsetroot arguments (after the bitmap path). */
export const PATTERN_COLOURS = ['-fg', '#336699', '-bg', '#ffcc00'];
const TILE_W = 16;
const TILE_H = 8;
/** True where the tile is foreground. */
export const tileBit = (x: number, y: number) => (x + 2 * y) % 5 === 0 || (x === 15 && y < 3);

/** The tile as an XBM file (rows of 2 bytes, least significant bit = leftmost pixel). */
export function tileXbm(): string {
  const bytes: string[] = [];
  for (let y = 0; y < TILE_H; y++) {
    for (let bx = 0; bx < TILE_W / 8; bx++) {
      let b = 0;
      for (let i = 0; i < 8; i++) if (tileBit(bx * 8 + i, y)) b |= 1 << i;
      bytes.push(`0x${b.toString(16).padStart(2, '0')}`);
    }
  }
  // Xlib's reader wants the closing brace right after the last value.
  return `#define tile_width ${TILE_W}\n#define tile_height ${TILE_H}\nstatic unsigned char tile_bits[] = {\n   ${bytes.join(', ')}};\n`;
}

/** Fail with the first pixel of `fb` that is not the tiled pattern. */
export function expectPattern(fb: Framebuffer): void {
  for (let y = 0; y < fb.height; y++) {
    for (let x = 0; x < fb.width; x++) {
      const want = tileBit(x % TILE_W, y % TILE_H) ? PATTERN_FG : PATTERN_BG;
      const got = fb.pixel(x, y);
      if (got[0] !== want[0] || got[1] !== want[1] || got[2] !== want[2]) throw new Error(`pixel (${x},${y}) is ${got.join(',')}, expected ${want.join(',')}`);
    }
  }
}
