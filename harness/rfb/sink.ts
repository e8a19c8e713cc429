/**
 * What decoders write into. The live client's Framebuffer and the recording
 * post-processor both implement PixelSink, so both share the decoders exactly.
 *
 * Colours are packed as little-endian RGBA in one uint32: r | g << 8 | b << 16 | 0xff << 24.
 */

/** A cursor image from the Cursor pseudo-encoding, already expanded to RGBA (alpha 0 or 255 from the bitmask). */
export interface CursorShape {
  /** Hotspot x, relative to the image's left edge. */
  hotX: number;
  /** Hotspot y, relative to the image's top edge. */
  hotY: number;
  width: number;
  height: number;
  /** width * height * 4 bytes, RGBA. */
  rgba: Uint8Array;
}

/** The operations a decoder can perform on a framebuffer. Calls arrive in protocol order. */
export interface PixelSink {
  /** Fill a rectangle with one packed RGBA colour (see packRgb). */
  fill(x: number, y: number, w: number, h: number, rgba: number): void;
  /**
   * Copy w*h pixels from `src` (bpp 3 = R,G,B or 4 = R,G,B,X; the 4th byte is ignored)
   * starting at `offset`, rows `stride` bytes apart. `src` may be a transient view: copy it if kept.
   */
  blit(x: number, y: number, w: number, h: number, src: Uint8Array, offset: number, stride: number, bpp: 3 | 4): void;
  /** CopyRect: copy a w*h block from (srcX, srcY) to (x, y) of the framebuffer itself. */
  copyRect(srcX: number, srcY: number, x: number, y: number, w: number, h: number): void;
  /** A compressed image (Tight JPEG, TightPNG) of exactly w*h pixels to decode and draw at (x, y). `data` may be transient. */
  image(x: number, y: number, w: number, h: number, format: 'jpeg' | 'png', data: Uint8Array): void;
  /** The server changed the framebuffer size (DesktopSize / ExtendedDesktopSize). */
  resize(width: number, height: number): void;
  /** The server sent a new cursor shape; null means an empty (invisible) cursor. */
  cursor(shape: CursorShape | null): void;
}

/** Pack r, g, b (0..255) into the sink's uint32 colour form (alpha forced to 255). */
export function packRgb(r: number, g: number, b: number): number {
  return (r | (g << 8) | (b << 16) | 0xff000000) >>> 0;
}
