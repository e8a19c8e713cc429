/**
 * Coordinate spaces a model may answer in, and their exact mapping back to screen pixels.
 *
 * - `absolute`: screen pixels. The model sees the screen at its own size; `x` is a pixel index,
 *   so a fractional value goes to the nearest pixel: `floor(x + 0.5)`.
 * - `normalized1000`: 0..1000 across the screen on each axis (as UI-TARS answers). `x` is a
 *   position, not an index: it lands in the pixel that contains it, `floor(x * W / 1000)`; 1000
 *   (the right/bottom edge itself) is clamped to the last pixel.
 * - `resized`: pixels of the screenshot the model was given, scaled to `screenshotSize` (w×h). Image pixel
 *   `x` covers screen pixels [x·W/w, (x+1)·W/w); its centre lands in `floor((x + 0.5) * W / w)`.
 *   So image pixel 0 maps to screen pixel 0 and image pixel w-1 to screen pixel W-1, at any ratio.
 *
 * Every result is clamped into the screen (0..W-1, 0..H-1). Values are accepted from 0 up to the
 * space's extent (W, 1000 or w, inclusive); anything else is a validation error for the model.
 */
import type { Point } from '../../harness/agent/index.ts';

/** The coordinate spaces of `ChatAgent` (and of the HTTP planner, which uses `absolute`/`resized`). */
export const COORDINATE_SPACES = ['absolute', 'normalized1000', 'resized'] as const;
/** One of COORDINATE_SPACES. */
export type CoordinateSpace = (typeof COORDINATE_SPACES)[number];

/** A width and height in pixels: harness's one size type. */
export type { ScreenSize as Size } from '../../harness/desktop/size.ts';
import type { ScreenSize as Size } from '../../harness/desktop/size.ts';

/** How the model's numbers relate to the screen: the space, the screen size, and the image size the model saw. */
export interface CoordinateFrame {
  space: CoordinateSpace;
  screen: Size;
  /** The size of the screenshot sent to the model (the screen size for `absolute`). */
  image: Size;
}

/** The largest value the model may give on each axis (inclusive). */
export function coordinateExtent(frame: CoordinateFrame): Size {
  switch (frame.space) {
    case 'absolute':
      return frame.screen;
    case 'normalized1000':
      return { width: 1000, height: 1000 };
    case 'resized':
      return frame.image;
  }
}

function clamp(v: number, max: number): number {
  return Math.min(Math.max(v, 0), max - 1);
}

/** Map one model coordinate on an axis (screen length `screenLen`, image length `imageLen`) to a screen pixel. */
function axis(space: CoordinateSpace, v: number, screenLen: number, imageLen: number): number {
  switch (space) {
    case 'absolute':
      return clamp(Math.floor(v + 0.5), screenLen);
    case 'normalized1000':
      return clamp(Math.floor((v * screenLen) / 1000), screenLen);
    case 'resized':
      return clamp(Math.floor(((v + 0.5) * screenLen) / imageLen), screenLen);
  }
}

/** The screen pixel a model coordinate `(x, y)` designates (see the rules above; clamped into the screen). */
export function toScreen(frame: CoordinateFrame, x: number, y: number): Point {
  return {
    x: axis(frame.space, x, frame.screen.width, frame.image.width),
    y: axis(frame.space, y, frame.screen.height, frame.image.height),
  };
}

/** Why `(x, y)` is not acceptable in `frame` (outside 0..extent or not finite), or null when it is. */
export function coordinateProblem(frame: CoordinateFrame, x: number, y: number): string | null {
  const ext = coordinateExtent(frame);
  const bad = (v: number, max: number) => !Number.isFinite(v) || v < 0 || v > max;
  if (bad(x, ext.width) || bad(y, ext.height)) {
    return `[${x}, ${y}] is outside the coordinate space: x must be 0..${ext.width} and y 0..${ext.height} (${describeSpace(frame)})`;
  }
  return null;
}

/** One sentence saying what the numbers mean, for prompts and error messages. */
export function describeSpace(frame: CoordinateFrame): string {
  switch (frame.space) {
    case 'absolute':
      return `coordinates are screen pixels of the ${frame.screen.width}x${frame.screen.height} screenshot, x from the left edge (0) to the right (${frame.screen.width - 1}), y from the top (0) to the bottom (${frame.screen.height - 1})`;
    case 'normalized1000':
      return 'coordinates are normalized to 0..1000 on each axis: x = 0 is the left edge and 1000 the right edge, y = 0 the top and 1000 the bottom, whatever the image size';
    case 'resized':
      return `coordinates are pixels of the ${frame.image.width}x${frame.image.height} screenshot image, x from 0 to ${frame.image.width - 1}, y from 0 to ${frame.image.height - 1}`;
  }
}
