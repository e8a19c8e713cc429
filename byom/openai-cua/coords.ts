/**
 * Coordinates between the image the model sees (`screenshotSize`) and the screen.
 *
 * The model answers in image pixels. A screenshot scaled from W×H to w×h (fit: fill, per axis) is
 * mapped back by the line through both edge pixels: x_screen = round(x · (W − 1) / (w − 1)),
 * clamped to 0..W − 1 (likewise y). So image pixel 0 is screen pixel 0, image pixel w − 1 is
 * screen pixel W − 1, every image pixel lands inside the screen area it was scaled from, and for a
 * downscale (w ≤ W) image → screen → image gives back the same pixel. Without downscaling the map
 * is the identity (rounded and clamped).
 */
import type { Point } from '../../harness/agent/index.ts';

/** A width and height in pixels: harness's one size type. */
export type { ScreenSize as Size } from '../../harness/desktop/size.ts';
import type { ScreenSize as Size } from '../../harness/desktop/size.ts';

/** Maps model (image) coordinates to screen coordinates and back, for one image size and screen size. */
export interface CoordinateMap {
  /** Size of the image the model sees. */
  readonly image: Size;
  /** Size of the screen. */
  readonly screen: Size;
  /** Screen pixel of an image point (rounded, clamped to the screen). */
  toScreen(p: Point): Point;
  /** Image pixel of a screen point (rounded, clamped to the image): the inverse, for tests and overlays. */
  toImage(p: Point): Point;
  /** A distance along x / y in image pixels, in screen pixels (for scroll amounts). */
  scaleX(d: number): number;
  scaleY(d: number): number;
}

/** One axis: from a length of `from` pixels to a length of `to` pixels, edge pixel to edge pixel. */
function axis(v: number, from: number, to: number): number {
  const scaled = from > 1 ? (v * (to - 1)) / (from - 1) : 0;
  const r = Math.round(scaled);
  return Math.min(Math.max(r, 0), to - 1);
}

/** The map between an image of `image` size scaled from a screen of `screen` size. */
export function coordinateMap(image: Size, screen: Size): CoordinateMap {
  return {
    image: { width: image.width, height: image.height },
    screen: { width: screen.width, height: screen.height },
    toScreen: (p) => ({ x: axis(p.x, image.width, screen.width), y: axis(p.y, image.height, screen.height) }),
    toImage: (p) => ({ x: axis(p.x, screen.width, image.width), y: axis(p.y, screen.height, image.height) }),
    scaleX: (d) => (d * screen.width) / image.width,
    scaleY: (d) => (d * screen.height) / image.height,
  };
}
