/**
 * The display the model is told about (`display_width_px` × `display_height_px`) and the exact
 * mapping between its pixels and the screen's.
 *
 * Size: Anthropic's guidance is to send screenshots that fit within about 1280×800 (WXGA) and
 * 1.15 megapixels, and to scale the model's coordinates back. `fitDisplay` keeps the aspect ratio
 * and scales down (never up) by s = min(1, 1280 / W, 800 / H, √(1.15 MP / (W·H))), rounding each
 * side: 1920×1080 → 1280×720, 2560×1600 → 1280×800, 1280×800 and smaller stay as they are.
 *
 * Mapping (image w×h scaled from screen W×H, per axis): image pixel x covers screen pixels
 * [x·W/w, (x+1)·W/w); the model's x lands in the screen pixel holding that pixel's centre,
 * floor((x + 0.5)·W/w), clamped to 0..W−1. So image pixel 0 is screen pixel 0 and image pixel w−1
 * is screen pixel W−1 at any ratio, fractional answers go to the nearest pixel, and without scaling
 * the map is the identity. The inverse (screen → image, for `cursor_position`) is the same formula
 * the other way round; for a downscale, image → screen → image gives back the same pixel.
 */
import type { Point } from '../../harness/agent/index.ts';

/** A width and height in pixels: harness's one size type. */
export type { ScreenSize as Size } from '../../harness/desktop/size.ts';
import type { ScreenSize as Size } from '../../harness/desktop/size.ts';

/** Largest display width sent by default (WXGA). */
export const MAX_DISPLAY_WIDTH = 1280;
/** Largest display height sent by default (WXGA). */
export const MAX_DISPLAY_HEIGHT = 800;
/** Largest display area sent by default (Anthropic: about 1.15 megapixels). */
export const MAX_DISPLAY_PIXELS = 1_150_000;

/** The display size for a screen: scaled down (aspect kept) to fit MAX_DISPLAY_WIDTH × MAX_DISPLAY_HEIGHT and MAX_DISPLAY_PIXELS. */
export function fitDisplay(screen: Size): Size {
  const { width: W, height: H } = screen;
  const s = Math.min(1, MAX_DISPLAY_WIDTH / W, MAX_DISPLAY_HEIGHT / H, Math.sqrt(MAX_DISPLAY_PIXELS / (W * H)));
  if (s >= 1) return { width: W, height: H };
  return {
    width: Math.max(1, Math.min(MAX_DISPLAY_WIDTH, Math.round(W * s))),
    height: Math.max(1, Math.min(MAX_DISPLAY_HEIGHT, Math.round(H * s))),
  };
}

/** One axis from a length of `from` pixels to a length of `to`: the pixel holding the centre of pixel `v`, clamped. */
function axis(v: number, from: number, to: number): number {
  const r = Math.floor(((v + 0.5) * to) / from);
  return Math.min(Math.max(r, 0), to - 1);
}

/** Maps display (image) coordinates to screen pixels and back, for one display size and screen size. */
export class DisplayMap {
  /** The size of the image the model sees. */
  readonly display: Size;
  /** The size of the screen. */
  readonly screen: Size;

  constructor(display: Size, screen: Size) {
    this.display = { width: display.width, height: display.height };
    this.screen = { width: screen.width, height: screen.height };
  }

  /** True when the display is the screen itself (no scaling). */
  get identity(): boolean {
    return this.display.width === this.screen.width && this.display.height === this.screen.height;
  }

  /** The screen pixel of a display point (see the file comment). */
  toScreen(p: Point): Point {
    return { x: axis(p.x, this.display.width, this.screen.width), y: axis(p.y, this.display.height, this.screen.height) };
  }

  /** The display pixel of a screen point (the inverse, for cursor_position). */
  toDisplay(p: Point): Point {
    return { x: axis(p.x, this.screen.width, this.display.width), y: axis(p.y, this.screen.height, this.display.height) };
  }

  /**
   * The screen rectangle of a display region given by its edges [x1, y1, x2, y2] (x2, y2 exclusive:
   * [0, 0, w, h] is the whole screen): left/top = floor(x1·W/w), right/bottom = ceil(x2·W/w), at least 1 px.
   */
  regionToScreen(x1: number, y1: number, x2: number, y2: number): { left: number; top: number; width: number; height: number } {
    const { width: W, height: H } = this.screen;
    const { width: w, height: h } = this.display;
    const left = Math.min(Math.max(Math.floor((x1 * W) / w), 0), W - 1);
    const top = Math.min(Math.max(Math.floor((y1 * H) / h), 0), H - 1);
    const right = Math.min(Math.max(Math.ceil((x2 * W) / w), left + 1), W);
    const bottom = Math.min(Math.max(Math.ceil((y2 * H) / h), top + 1), H);
    return { left, top, width: right - left, height: bottom - top };
  }
}
