/**
 * Parsers for the fixed parts of the messages a server sends after ServerInit
 * (RFC 6143 §7.6). Rectangle payloads are decoded by ./encodings; this file only
 * frames messages. Every `tryRead*` consumes nothing and returns null until its
 * whole fixed part has arrived.
 */
import { VncuaError } from '../errors.ts';
import type { ByteQueue } from './bytes.ts';
import type { RectHeader } from './encodings/types.ts';

/** Server-to-client message types (§7.6). */
export const SERVER_MSG = {
  FRAMEBUFFER_UPDATE: 0,
  SET_COLOUR_MAP_ENTRIES: 1,
  BELL: 2,
  SERVER_CUT_TEXT: 3,
} as const;

/**
 * FramebufferUpdate header (§7.6.1):
 *   +-------+-------+----------------------------+
 *   | U8 0  | 1 pad | U16 number-of-rectangles   |
 *   +-------+-------+----------------------------+
 *   Returns the rectangle count (0xFFFF with LastRect means "until the LastRect rectangle").
 */
export function tryReadFramebufferUpdateHeader(q: ByteQueue): number | null {
  if (!q.has(4)) return null;
  q.skip(2);
  return q.u16();
}

/**
 * Rectangle header (§7.6.1), followed by the encoding's payload:
 *   +--------+--------+------------+-------------+--------------------+
 *   | U16 x  | U16 y  | U16 width  | U16 height  | S32 encoding-type  |
 *   +--------+--------+------------+-------------+--------------------+
 */
export function tryReadRectHeader(q: ByteQueue): RectHeader | null {
  if (!q.has(12)) return null;
  return { x: q.u16(), y: q.u16(), width: q.u16(), height: q.u16(), encoding: q.s32() };
}

/**
 * SetColourMapEntries header (§7.6.2); the colours that follow are skipped (the client uses true colour):
 *   +-------+-------+------------------+-------------------------+
 *   | U8 1  | 1 pad | U16 first-colour | U16 number-of-colours n |
 *   +-------+-------+------------------+-------------------------+
 *   then n × (U16 red, U16 green, U16 blue)
 * Returns how many payload bytes follow.
 */
export function tryReadColourMapHeader(q: ByteQueue): number | null {
  if (!q.has(6)) return null;
  q.skip(4);
  return q.u16() * 6;
}

/**
 * Bell (§7.6.3):
 *   +-------+
 *   | U8 2  |
 *   +-------+
 */
export function tryReadBell(q: ByteQueue): true | null {
  if (!q.has(1)) return null;
  q.skip(1);
  return true;
}

/**
 * ServerCutText header (§7.6.4):
 *   +-------+-------+--------------+
 *   | U8 3  | 3 pad | U32 length   |   then U8 text[length], ISO 8859-1
 *   +-------+-------+--------------+
 * Returns the text length. (A negative length means the Extended Clipboard extension, which this
 * client never advertises, so it is a protocol error here.)
 */
export function tryReadCutTextHeader(q: ByteQueue): number | null {
  if (!q.has(8)) return null;
  const len = q.peekU32(4);
  if (len > 0x7fffffff) {
    throw new VncuaError('RFB_ERR_PROTOCOL', 'the server sent an Extended Clipboard message, which this client never asked for', { details: { length: len | 0 } });
  }
  q.skip(8);
  return len;
}

/** Throw RFB_ERR_PROTOCOL for a message type this client does not know. */
export function unknownMessage(type: number, offset: number): never {
  throw new VncuaError('RFB_ERR_PROTOCOL', `the server sent message type ${type}, which this client does not know or never enabled (stream offset ${offset})`, {
    details: { type, offset },
  });
}
