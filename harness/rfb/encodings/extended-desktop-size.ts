/**
 * ExtendedDesktopSize pseudo-encoding (rfbproto "ExtendedDesktopSize Pseudo-encoding"), encoding number -308.
 *
 *   rectangle header: x = reason (0 server-side change, 1 this client's request, 2 another client's request;
 *                     unknown values count as 0), y = status (0 ok, 1 prohibited, 2 out of resources,
 *                     3 invalid layout, 4 forwarded; defined only for reason 1),
 *                     width, height = the framebuffer size
 *   payload:
 *   +----------------------+----------------+
 *   | U8 number-of-screens | 3 bytes padding|
 *   +----------------------+----------------+
 *   then number-of-screens times (16 bytes):
 *   | U32 id | U16 x | U16 y | U16 width | U16 height | U32 flags |
 *
 * The framebuffer is resized unless this answers our own request with a failure
 * (reason 1, status != 0: the rectangle then carries the unchanged size; not an error).
 * The status is ignored for other reasons, as the spec asks. A layout with the same
 * size does not touch the framebuffer. Resumable: the payload is consumed in one go
 * once the screen count has been peeked and all screens have arrived.
 */
import type { ByteQueue } from '../bytes.ts';
import type { DecodeContext, EncodingSpec, RectDecoder, RectHeader } from './types.ts';
import { ENC, assertSaneSize } from './types.ts';

/** One screen of an ExtendedDesktopSize layout. */
export interface DesktopScreen {
  id: number;
  x: number;
  y: number;
  width: number;
  height: number;
  flags: number;
}

/** A parsed ExtendedDesktopSize rectangle. */
export interface DesktopLayout {
  /** 0 server-side change, 1 answer to this client's SetDesktopSize, 2 another client's change. */
  reason: number;
  /** 0 ok; otherwise why this client's request failed (meaningful only for reason 1). */
  status: number;
  width: number;
  height: number;
  screens: DesktopScreen[];
  /** False when this is a failed answer to our own request (the size did not change). */
  applied: boolean;
}

/** ExtendedDesktopSize reason: changed on the server. */
export const EDS_REASON_SERVER = 0;
/** ExtendedDesktopSize reason: answer to this client's SetDesktopSize. */
export const EDS_REASON_THIS_CLIENT = 1;
/** ExtendedDesktopSize reason: another client changed the layout. */
export const EDS_REASON_OTHER_CLIENT = 2;

/** Payload length for `screens` screens. */
function payloadLength(screens: number): number {
  return 4 + screens * 16;
}

/** Parse a complete ExtendedDesktopSize payload (header fields come from the rectangle). */
export function parseExtendedDesktopSize(rect: RectHeader, payload: Uint8Array): DesktopLayout {
  const count = payload[0]!;
  const v = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const screens: DesktopScreen[] = [];
  for (let i = 0, o = 4; i < count; i++, o += 16) {
    screens.push({ id: v.getUint32(o), x: v.getUint16(o + 4), y: v.getUint16(o + 6), width: v.getUint16(o + 8), height: v.getUint16(o + 10), flags: v.getUint32(o + 12) });
  }
  const reason = rect.x;
  const status = rect.y;
  return { reason, status, width: rect.width, height: rect.height, screens, applied: !(reason === EDS_REASON_THIS_CLIENT && status !== 0) };
}

/** Decoder for one ExtendedDesktopSize rectangle; `layout` is set once it is done. */
export class ExtendedDesktopSizeDecoder implements RectDecoder {
  /** The parsed layout, once decode() returned true. */
  layout: DesktopLayout | null = null;

  constructor(
    private readonly rect: RectHeader,
    private readonly ctx: DecodeContext,
  ) {}

  decode(q: ByteQueue): boolean {
    if (!q.has(4)) return false;
    const len = payloadLength(q.peekU8(0));
    if (!q.has(len)) return false;
    const layout = parseExtendedDesktopSize(this.rect, q.readBytes(len));
    if (layout.applied) {
      assertSaneSize(layout.width, layout.height, 'ExtendedDesktopSize');
      if (layout.width !== this.ctx.width || layout.height !== this.ctx.height) {
        this.ctx.width = layout.width;
        this.ctx.height = layout.height;
        this.ctx.sink.resize(layout.width, layout.height);
      }
    }
    this.layout = layout;
    return true;
  }
}

/** ExtendedDesktopSize: framebuffer size and screen layout, or the answer to SetDesktopSize. */
export const extendedDesktopSizeEncoding: EncodingSpec = {
  id: ENC.EXTENDED_DESKTOP_SIZE,
  name: 'ExtendedDesktopSize',
  pseudo: true,
  create(rect, ctx) {
    return new ExtendedDesktopSizeDecoder(rect, ctx);
  },
};
