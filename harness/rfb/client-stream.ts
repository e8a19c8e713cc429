/**
 * An I/O-free parser of the client → server half of an RFB connection (RFC 6143 §7.1–§7.5, plus the
 * common extensions other viewers send), as a recording holds it. Bytes go in with the time they were
 * relayed; complete messages come out, each stamped with the time of the chunk that completed it.
 *
 * The post-processor takes the client's choices from here (protocol version, security type, pixel
 * format, encodings) and the pointer / key events (cursor position, uitask trace alignment).
 */
import { VncuaError } from '../errors.ts';
import { ByteQueue } from './bytes.ts';
import { CLIENT_PIXEL_FORMAT, type PixelFormat } from './client-messages.ts';

/** A pointer or key event the client sent (what the uitask alignment and the cursor overlay use). */
export type ClientInputEvent =
  /** PointerEvent: position and button mask (bit 0 left, 1 middle, 2 right, 3/4 wheel up/down, 5/6 wheel left/right). */
  | { kind: 'pointer'; t: number; x: number; y: number; mask: number }
  /** KeyEvent (or the QEMU extended key event): an X11 keysym going down or up. */
  | { kind: 'key'; t: number; keysym: number; down: boolean };

/** Every message the parser recognises; `t` is the time (epoch ms) of the chunk that completed it. */
export type ClientMessage =
  | ClientInputEvent
  /** ProtocolVersion the client answered with, e.g. "003.008". */
  | { kind: 'version'; t: number; version: string }
  /** The security type the client chose (3.7 and later). */
  | { kind: 'security'; t: number; type: number }
  /** The 16-byte VNC Authentication response (its content is not kept). */
  | { kind: 'authResponse'; t: number }
  | { kind: 'clientInit'; t: number; shared: boolean }
  | { kind: 'pixelFormat'; t: number; format: PixelFormat }
  | { kind: 'encodings'; t: number; encodings: number[] }
  | { kind: 'updateRequest'; t: number; incremental: boolean; x: number; y: number; width: number; height: number }
  /** ClientCutText; `length` is the text's byte length (the Extended Clipboard form has a negative length on the wire). */
  | { kind: 'cutText'; t: number; length: number }
  /** A message the replay does not need (EnableContinuousUpdates, ClientFence, SetDesktopSize, xvp): type and total size. */
  | { kind: 'other'; t: number; type: number; size: number };

/** Client-to-server message types (§7.5 and the registry's extensions). */
export const CLIENT_MSG = {
  SET_PIXEL_FORMAT: 0,
  SET_ENCODINGS: 2,
  FRAMEBUFFER_UPDATE_REQUEST: 3,
  KEY_EVENT: 4,
  POINTER_EVENT: 5,
  CLIENT_CUT_TEXT: 6,
  ENABLE_CONTINUOUS_UPDATES: 150,
  CLIENT_FENCE: 248,
  XVP: 250,
  SET_DESKTOP_SIZE: 251,
  QEMU: 255,
} as const;

/** Longest ClientCutText accepted; anything longer means the stream is not what we think it is. */
export const MAX_CLIENT_CUT_TEXT = 64 * 1024 * 1024;

type Phase = 'version' | 'security' | 'auth' | 'init' | 'messages' | 'failed';

/** Options of the parser. */
export interface ClientStreamOptions {
  /**
   * For RFB 3.3 only, where the SERVER picks the security type and the client stream alone cannot
   * tell whether a 16-byte VNC Authentication response follows: the type the server sent (default 1, None).
   */
  security33?: number;
  /** Longest ClientCutText accepted (default MAX_CLIENT_CUT_TEXT); a live server bounds what one watcher can make it buffer. */
  maxCutText?: number;
  /**
   * The error for bytes that cannot be parsed, from what is wrong and the stream offset (default a
   * RECORDING_ERR_CLIENT_STREAM about the recorded stream; a live server reports its own code).
   */
  error?: (problem: string, offset: number) => VncuaError;
}

/** True when `pf` is the pixel format vncua decodes (32 bpp, depth 24, true colour, little-endian, shifts 0/8/16, max 255). */
export function isClientPixelFormat(pf: PixelFormat): boolean {
  const want = CLIENT_PIXEL_FORMAT;
  return (
    pf.bitsPerPixel === want.bitsPerPixel &&
    pf.depth === want.depth &&
    pf.bigEndian === want.bigEndian &&
    pf.trueColour === want.trueColour &&
    pf.redMax === want.redMax &&
    pf.greenMax === want.greenMax &&
    pf.blueMax === want.blueMax &&
    pf.redShift === want.redShift &&
    pf.greenShift === want.greenShift &&
    pf.blueShift === want.blueShift
  );
}

/** A pixel format as text, for messages: "32bpp depth 24 LE true-colour max 255/255/255 shift 0/8/16". */
export function describePixelFormat(pf: PixelFormat): string {
  return `${pf.bitsPerPixel}bpp depth ${pf.depth} ${pf.bigEndian ? 'BE' : 'LE'} ${pf.trueColour ? 'true-colour' : 'colour-map'} max ${pf.redMax}/${pf.greenMax}/${pf.blueMax} shift ${pf.redShift}/${pf.greenShift}/${pf.blueShift}`;
}

/**
 * PIXEL_FORMAT (§7.4), 16 bytes:
 *   U8 bits-per-pixel, U8 depth, U8 big-endian-flag, U8 true-colour-flag,
 *   U16 red-max, U16 green-max, U16 blue-max,
 *   U8 red-shift, U8 green-shift, U8 blue-shift, 3 bytes padding
 * Reads it `offset` bytes ahead without consuming.
 */
export function peekPixelFormat(q: ByteQueue, offset: number): PixelFormat {
  return {
    bitsPerPixel: q.peekU8(offset),
    depth: q.peekU8(offset + 1),
    bigEndian: q.peekU8(offset + 2) !== 0,
    trueColour: q.peekU8(offset + 3) !== 0,
    redMax: q.peekU16(offset + 4),
    greenMax: q.peekU16(offset + 6),
    blueMax: q.peekU16(offset + 8),
    redShift: q.peekU8(offset + 10),
    greenShift: q.peekU8(offset + 11),
    blueShift: q.peekU8(offset + 12),
  };
}

/** Parses a recorded client stream incrementally; feed it chunk by chunk with `push`. */
export class ClientStreamParser {
  private readonly q = new ByteQueue();
  private phase: Phase = 'version';
  private minor = 8;
  private readonly security33: number;
  private readonly maxCutText: number;
  private readonly makeError: ((problem: string, offset: number) => VncuaError) | undefined;

  constructor(options: ClientStreamOptions = {}) {
    this.security33 = options.security33 ?? 1;
    this.maxCutText = options.maxCutText ?? MAX_CLIENT_CUT_TEXT;
    this.makeError = options.error;
  }

  /** Bytes consumed so far (the stream offset of the next message). */
  get offset(): number {
    return this.q.consumed;
  }

  /** The parse error that stopped the parser, or null (push then returns nothing more). */
  error: VncuaError | null = null;

  /** True once a message could not be parsed. */
  get failed(): boolean {
    return this.phase === 'failed';
  }

  /**
   * Feed the bytes of one chunk relayed at `t` (epoch ms); returns the messages it completed. At the first
   * message that cannot be parsed the parser stops: `error` holds a RECORDING_ERR_CLIENT_STREAM and the
   * messages before it are still returned.
   */
  push(bytes: Uint8Array, t: number): ClientMessage[] {
    if (this.phase === 'failed') return [];
    this.q.push(bytes);
    const out: ClientMessage[] = [];
    try {
      for (;;) {
        const m = this.next(t);
        if (!m) break;
        out.push(m);
      }
    } catch (e) {
      this.phase = 'failed';
      this.error =
        e instanceof VncuaError
          ? e
          : new VncuaError('RECORDING_ERR_CLIENT_STREAM', `The recorded client stream cannot be parsed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    }
    return out;
  }

  private next(t: number): ClientMessage | null {
    switch (this.phase) {
      case 'version':
        return this.readVersion(t);
      case 'security':
        return this.readSecurity(t);
      case 'auth':
        if (!this.q.has(16)) return null;
        this.q.skip(16);
        this.phase = 'init';
        return { kind: 'authResponse', t };
      case 'init':
        if (!this.q.has(1)) return null;
        this.phase = 'messages';
        return { kind: 'clientInit', t, shared: this.q.u8() !== 0 };
      case 'messages':
        return this.readMessage(t);
      default:
        return null;
    }
  }

  /**
   * ProtocolVersion (§7.1.1), 12 bytes: "RFB 003.00x\n".
   * 3.3 has no security-type byte (the server chose it); 3.7 and 3.8 have one.
   */
  private readVersion(t: number): ClientMessage | null {
    if (!this.q.has(12)) return null;
    const offset = this.q.consumed;
    const text = Buffer.from(this.q.readBytes(12)).toString('latin1');
    const m = /^RFB (\d{3})\.(\d{3})\n$/.exec(text);
    if (!m) throw this.bad(`it does not start with an RFB ProtocolVersion but with ${JSON.stringify(text)}`, offset);
    const minor = Number(m[2]);
    this.minor = Number(m[1]) > 3 ? 8 : minor;
    if (this.minor >= 7) this.phase = 'security';
    else this.phase = this.security33 === 2 ? 'auth' : 'init';
    return { kind: 'version', t, version: `${m[1]}.${m[2]}` };
  }

  /**
   * Security type choice (§7.1.2, 3.7 onwards):
   *   +---------------+
   *   | U8 sec-type   |   1 = None, 2 = VNC Authentication (16-byte response follows)
   *   +---------------+
   */
  private readSecurity(t: number): ClientMessage | null {
    if (!this.q.has(1)) return null;
    const offset = this.q.consumed;
    const type = this.q.u8();
    if (type === 1) this.phase = 'init';
    else if (type === 2) this.phase = 'auth';
    else throw this.bad(`the client chose security type ${type}, whose handshake cannot be followed (only 1, None, and 2, VNC Authentication)`, offset);
    return { kind: 'security', t, type };
  }

  private readMessage(t: number): ClientMessage | null {
    const q = this.q;
    if (!q.has(1)) return null;
    const type = q.peekU8(0);
    switch (type) {
      /**
       * SetPixelFormat (§7.5.1), 20 bytes:
       *   +-------+---------+------------------------+
       *   | U8 0  | 3 pad   | PIXEL_FORMAT (16)      |
       *   +-------+---------+------------------------+
       */
      case CLIENT_MSG.SET_PIXEL_FORMAT: {
        if (!q.has(20)) return null;
        const format = peekPixelFormat(q, 4);
        q.skip(20);
        return { kind: 'pixelFormat', t, format };
      }
      /**
       * SetEncodings (§7.5.2):
       *   +-------+-------+-------------------+---------------------------+
       *   | U8 2  | 1 pad | U16 n-encodings   | S32 encoding-type [n]     |
       *   +-------+-------+-------------------+---------------------------+
       */
      case CLIENT_MSG.SET_ENCODINGS: {
        if (!q.has(4)) return null;
        const n = q.peekU16(2);
        if (!q.has(4 + 4 * n)) return null;
        q.skip(4);
        const encodings: number[] = [];
        for (let i = 0; i < n; i++) encodings.push(q.s32());
        return { kind: 'encodings', t, encodings };
      }
      /**
       * FramebufferUpdateRequest (§7.5.3), 10 bytes:
       *   +-------+----------------+--------+--------+------------+-------------+
       *   | U8 3  | U8 incremental | U16 x  | U16 y  | U16 width  | U16 height  |
       *   +-------+----------------+--------+--------+------------+-------------+
       */
      case CLIENT_MSG.FRAMEBUFFER_UPDATE_REQUEST: {
        if (!q.has(10)) return null;
        q.skip(1);
        const incremental = q.u8() !== 0;
        return { kind: 'updateRequest', t, incremental, x: q.u16(), y: q.u16(), width: q.u16(), height: q.u16() };
      }
      /**
       * KeyEvent (§7.5.4), 8 bytes:
       *   +-------+---------------+-------+-------------+
       *   | U8 4  | U8 down-flag  | 2 pad | U32 keysym  |
       *   +-------+---------------+-------+-------------+
       */
      case CLIENT_MSG.KEY_EVENT: {
        if (!q.has(8)) return null;
        q.skip(1);
        const down = q.u8() !== 0;
        q.skip(2);
        return { kind: 'key', t, keysym: q.u32(), down };
      }
      /**
       * PointerEvent (§7.5.5), 6 bytes:
       *   +-------+------------------+--------+--------+
       *   | U8 5  | U8 button-mask   | U16 x  | U16 y  |
       *   +-------+------------------+--------+--------+
       */
      case CLIENT_MSG.POINTER_EVENT: {
        if (!q.has(6)) return null;
        q.skip(1);
        const mask = q.u8();
        return { kind: 'pointer', t, x: q.u16(), y: q.u16(), mask };
      }
      /**
       * ClientCutText (§7.5.6):
       *   +-------+-------+--------------+------------------------+
       *   | U8 6  | 3 pad | S32 length   | U8 text[|length|]      |
       *   +-------+-------+--------------+------------------------+
       *   A negative length is the Extended Clipboard form: |length| bytes follow.
       */
      case CLIENT_MSG.CLIENT_CUT_TEXT: {
        if (!q.has(8)) return null;
        const raw = q.peekU32(4) | 0;
        const length = Math.abs(raw);
        if (length > this.maxCutText) throw this.bad(`a ClientCutText announces ${length} bytes (limit ${this.maxCutText})`, q.consumed);
        if (!q.has(8 + length)) return null;
        q.skip(8 + length);
        return { kind: 'cutText', t, length };
      }
      /**
       * EnableContinuousUpdates (registry), 10 bytes:
       *   U8 150, U8 enable-flag, U16 x, U16 y, U16 width, U16 height
       */
      case CLIENT_MSG.ENABLE_CONTINUOUS_UPDATES:
        return this.fixed(t, type, 10);
      /**
       * xvp (registry), 4 bytes: U8 250, 1 pad, U8 xvp-version, U8 xvp-message-code
       */
      case CLIENT_MSG.XVP:
        return this.fixed(t, type, 4);
      /**
       * ClientFence (registry):
       *   U8 248, 3 pad, U32 flags, U8 length, U8 payload[length]   (length ≤ 64)
       */
      case CLIENT_MSG.CLIENT_FENCE: {
        if (!q.has(9)) return null;
        return this.fixed(t, type, 9 + q.peekU8(8));
      }
      /**
       * SetDesktopSize (registry):
       *   U8 251, 1 pad, U16 width, U16 height, U8 number-of-screens n, 1 pad,
       *   n × (U32 id, U16 x, U16 y, U16 width, U16 height, U32 flags)
       */
      case CLIENT_MSG.SET_DESKTOP_SIZE: {
        if (!q.has(8)) return null;
        return this.fixed(t, type, 8 + 16 * q.peekU8(6));
      }
      /**
       * QEMU client message (registry): U8 255, U8 submessage-type. Extended key event (submessage 0), 12 bytes:
       *   U8 255, U8 0, U16 down-flag, U32 keysym, U32 keycode
       */
      case CLIENT_MSG.QEMU: {
        if (!q.has(2)) return null;
        const sub = q.peekU8(1);
        if (sub !== 0) throw this.bad(`a QEMU client message of subtype ${sub}, which this parser does not know`, q.consumed);
        if (!q.has(12)) return null;
        q.skip(2);
        const down = q.u16() !== 0;
        const keysym = q.u32();
        q.skip(4);
        return { kind: 'key', t, keysym, down };
      }
      default:
        throw this.bad(`message type ${type}, which no RFB client sends (or which this parser does not know)`, q.consumed);
    }
  }

  private fixed(t: number, type: number, size: number): ClientMessage | null {
    if (!this.q.has(size)) return null;
    this.q.skip(size);
    return { kind: 'other', t, type, size };
  }

  private bad(what: string, offset: number): VncuaError {
    if (this.makeError) return this.makeError(what, offset);
    return new VncuaError('RECORDING_ERR_CLIENT_STREAM', `The recorded client stream cannot be parsed at byte ${offset}: ${what}. Client events after that point are unknown.`, {
      details: { offset },
    });
  }
}

/** Only the pointer and key events of a list of client messages. */
export function inputEvents(messages: readonly ClientMessage[]): ClientInputEvent[] {
  return messages.filter((m): m is ClientInputEvent => m.kind === 'pointer' || m.kind === 'key');
}
