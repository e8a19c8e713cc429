/**
 * The contract every RFB encoding implements. One file per encoding under
 * harness/rfb/encodings/, registered by encoding number in ./index.ts.
 *
 * A decoder is created per rectangle. Its decode() is called whenever more bytes
 * arrived; it consumes only what it can fully process, keeps its progress in its
 * own fields, and returns false to say "call me again with more bytes" or true
 * when the rectangle is complete. It never does I/O.
 */
import type { ByteQueue } from '../bytes.ts';
import type { InflateStream } from '../zlib.ts';
import type { PixelSink } from '../sink.ts';
import { VncuaError } from '../../errors.ts';

/** A FramebufferUpdate rectangle header (RFC 6143 §7.6.1). */
export interface RectHeader {
  x: number;
  y: number;
  width: number;
  height: number;
  /** Signed encoding number. */
  encoding: number;
}

/** Per-connection state shared by all decoders of one connection. */
export interface DecodeContext {
  /** Where pixels go. */
  sink: PixelSink;
  /** Current framebuffer width (updated by DesktopSize / ExtendedDesktopSize). */
  width: number;
  /** Current framebuffer height. */
  height: number;
  /** The single ZRLE zlib stream. */
  zrleStream: InflateStream;
  /** Tight's four zlib streams. */
  tightStreams: [InflateStream, InflateStream, InflateStream, InflateStream];
  /** Tight / TightPNG rectangles decoded, by kind (fill, jpeg, png, copy, palette, gradient), when given. */
  tightKinds?: Map<string, number>;
}

/** Progress through one rectangle's payload. */
export interface RectDecoder {
  /** Consume what can be processed; true when the rectangle is done, false when more bytes are needed. Throws VncuaError (RFB_ERR_DECODE / RFB_ERR_PROTOCOL) on bad data. */
  decode(q: ByteQueue): boolean;
}

/** One entry of the encoding table. */
export interface EncodingSpec {
  /** Encoding number (signed), as sent in SetEncodings and rectangle headers. */
  id: number;
  /** Human name for errors and logs. */
  name: string;
  /** Pseudo-encodings describe the connection, not pixels of the rectangle area. */
  pseudo: boolean;
  /** Start decoding one rectangle. Throws VncuaError for a header that cannot be valid (e.g. outside the framebuffer). */
  create(rect: RectHeader, ctx: DecodeContext): RectDecoder;
}

/** Encoding numbers used by vncua (RFC 6143 §7.7 and the RFB community registry). */
export const ENC = {
  RAW: 0,
  COPYRECT: 1,
  RRE: 2,
  HEXTILE: 5,
  TIGHT: 7,
  ZRLE: 16,
  TIGHT_PNG: -260,
  DESKTOP_SIZE: -223,
  LAST_RECT: -224,
  CURSOR: -239,
  EXTENDED_DESKTOP_SIZE: -308,
  /** JPEG quality pseudo-encodings: -32 (quality 0) .. -23 (quality 9). */
  JPEG_QUALITY_0: -32,
  /** Compression level pseudo-encodings: -256 (level 0) .. -247 (level 9). */
  COMPRESS_LEVEL_0: -256,
} as const;

/** Throw RFB_ERR_DECODE unless the rectangle lies inside the framebuffer. */
export function assertInBounds(rect: RectHeader, ctx: DecodeContext, name: string): void {
  if (rect.x + rect.width > ctx.width || rect.y + rect.height > ctx.height) {
    throw new VncuaError('RFB_ERR_DECODE', `${name} rectangle ${rect.width}x${rect.height}+${rect.x}+${rect.y} lies outside the ${ctx.width}x${ctx.height} framebuffer`, {
      details: { rect, width: ctx.width, height: ctx.height },
    });
  }
}

/** Largest framebuffer side vncua accepts from a server (ServerInit, DesktopSize, ExtendedDesktopSize). */
export const MAX_FRAMEBUFFER_SIDE = 16384;
/** Largest framebuffer area accepted (64 Mpx = 256 MiB of RGBA). */
export const MAX_FRAMEBUFFER_PIXELS = 64 * 1024 * 1024;

/** Throw RFB_ERR_PROTOCOL unless a server-announced framebuffer size is one we can allocate. */
export function assertSaneSize(width: number, height: number, what: string): void {
  if (width < 1 || height < 1 || width > MAX_FRAMEBUFFER_SIDE || height > MAX_FRAMEBUFFER_SIDE || width * height > MAX_FRAMEBUFFER_PIXELS) {
    throw new VncuaError(
      'RFB_ERR_PROTOCOL',
      `${what} announced a ${width}x${height} framebuffer; sides must be 1..${MAX_FRAMEBUFFER_SIDE} and the area at most ${MAX_FRAMEBUFFER_PIXELS} pixels`,
      { details: { width, height } },
    );
  }
}
