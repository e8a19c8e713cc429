/**
 * The I/O-free RFB client core. Bytes from the server go in through `receive()`;
 * what happened comes out as events (including `send` events carrying the bytes
 * to write back). No sockets, timers or promises in here, so the same session runs
 * a live connection, a recorded stream in the post-processor, and the fuzzer.
 *
 * Errors are thrown as VncuaError; after one, the session is `failed` for good.
 */
import { VncuaError } from '../errors.ts';
import { ByteQueue } from './bytes.ts';
import {
  type PixelFormat,
  type RfbVersion,
  writeClientCutText,
  writeClientInit,
  writeFramebufferUpdateRequest,
  writeKeyEvent,
  writePointerEvent,
  writeProtocolVersion,
  writeSecurityType,
  writeSetEncodings,
  writeSetPixelFormat,
} from './client-messages.ts';
import { vncAuthResponse } from './des.ts';
import { ENCODINGS } from './encodings/index.ts';
import { ENC, type DecodeContext, type RectDecoder, type RectHeader } from './encodings/types.ts';
import { Framebuffer } from './framebuffer.ts';
import {
  SECURITY_NONE,
  SECURITY_VNC_AUTH,
  chooseSecurityType,
  peekSecurityStatus,
  tryReadChallenge,
  tryReadProtocolVersion,
  tryReadSecurityResult,
  tryReadSecurityType33,
  tryReadSecurityTypes,
  tryReadServerInit,
  type SecurityOffer,
} from './handshake.ts';
import { SERVER_MSG, tryReadBell, tryReadColourMapHeader, tryReadCutTextHeader, tryReadFramebufferUpdateHeader, tryReadRectHeader, unknownMessage } from './server-messages.ts';
import { type ConnectionState, assertState, isFinalState, transition } from './state.ts';
import { InflateStream } from './zlib.ts';

/** Pseudo-encodings the session advertises unless told otherwise. */
export const DEFAULT_PSEUDO_ENCODINGS: readonly number[] = [ENC.DESKTOP_SIZE, ENC.EXTENDED_DESKTOP_SIZE, ENC.LAST_RECT, ENC.CURSOR];

/** ServerCutText longer than this is skipped (not buffered, no event). */
export const MAX_CUT_TEXT_LENGTH = 16 * 1024 * 1024;

/** How a session is configured. Everything but `encodings` is optional. */
export interface SessionOptions {
  /** Real encodings to request, in order of preference (numbers from ENCODINGS). Raw is always accepted, as RFC 6143 requires. */
  encodings: readonly number[];
  /** Password for VNC Authentication. */
  password?: string | undefined;
  /** JPEG quality 0..9 (Tight), sent as pseudo-encoding -32 + q; null/undefined = do not send (lossless). */
  jpegQuality?: number | null | undefined;
  /** zlib compression level 0..9 (Tight/ZRLE), sent as pseudo-encoding -256 + level; undefined = server default. */
  compressLevel?: number | undefined;
  /** Pseudo-encodings to advertise (default DEFAULT_PSEUDO_ENCODINGS); LastRect is handled by the session itself. */
  pseudoEncodings?: readonly number[] | undefined;
  /** Highest protocol version to speak (default 3.8); lower it to exercise 3.3 / 3.7 paths. */
  maxVersion?: RfbVersion | undefined;
  /** ClientInit shared flag (default true: other viewers stay connected). */
  shared?: boolean | undefined;
}

/**
 * Replay mode (see RfbSession.forReplay): the session consumes a RECORDED server stream and takes the
 * client's choices from the recorded client stream instead of making them. It sends nothing: no `send`
 * events, and VNC Authentication's challenge is skipped (no response is computed).
 */
export interface ReplayChoices {
  /** The ProtocolVersion the recorded client answered with; null = negotiate as the live client would. */
  version: RfbVersion | null;
  /** The security type the recorded client chose (3.7+; 3.3 takes the server's); null = None if offered, else VNC Authentication. */
  securityType: number | null;
  /** Every encoding the recorded client advertised (all SetEncodings messages together); null = every encoding vncua decodes. */
  encodings: readonly number[] | null;
  /** Called synchronously before each rectangle's payload is decoded, with its header (lets a replayer save what it will overwrite). */
  onRectStart?: ((rect: RectHeader) => void) | undefined;
}

/** Options of RfbSession.advance(). */
export interface AdvanceOptions {
  /** Return right after a FramebufferUpdate completes (its `updateEnd` is the last event), leaving later bytes queued. */
  stopAfterUpdate?: boolean;
}

/** What the session reports while it consumes server bytes. */
export type SessionEvent =
  /** Write these bytes to the server, in order. */
  | { type: 'send'; bytes: Uint8Array }
  /** ServerInit arrived: the framebuffer exists. */
  | { type: 'ready'; width: number; height: number; name: string; version: RfbVersion; security: 'none' | 'vncAuth' }
  /** A FramebufferUpdate began; `rects` is the announced count (0xFFFF with LastRect = open-ended). */
  | { type: 'updateStart'; rects: number }
  /** One rectangle was fully decoded (pixels may still be in the framebuffer's async image queue). */
  | { type: 'rect'; rect: RectHeader }
  /** The FramebufferUpdate is complete. */
  | { type: 'updateEnd' }
  /** The framebuffer size changed (DesktopSize / ExtendedDesktopSize). */
  | { type: 'resize'; width: number; height: number }
  | { type: 'bell' }
  | { type: 'cutText'; text: string };

/** The server's side of the connection as a state machine over a byte stream. */
export class RfbSession {
  private stateValue: ConnectionState = 'awaitingVersion';
  private readonly q = new ByteQueue();
  private readonly opts: SessionOptions;
  /** Encodings a rectangle may arrive in (requested + Raw + advertised pseudo-encodings). */
  private readonly accepted: Set<number>;
  private readonly advertised: number[];
  /** Negotiated protocol version, once known. */
  version: RfbVersion | null = null;
  /** The server's announced version text, e.g. "003.889". */
  serverVersion: string | null = null;
  /** Chosen security type, once known. */
  securityType: number | null = null;
  /** Desktop name from ServerInit. */
  name = '';
  /** The framebuffer (created at ServerInit). */
  framebuffer: Framebuffer | null = null;
  /** The decoders' shared context (created at ServerInit). */
  ctx: DecodeContext | null = null;
  private update: { remaining: number; decoder: RectDecoder | null; rect: RectHeader | null } | null = null;
  /** Rectangles decoded so far, by encoding number (shows which encodings the server really used). */
  readonly rectsByEncoding = new Map<number, number>();
  /** Tight / TightPNG rectangles decoded so far, by kind (fill, jpeg, png, copy, palette, gradient). */
  readonly tightKinds = new Map<string, number>();
  /** Bytes still to discard (colour map entries, oversized cut text). */
  private skipBytes = 0;
  /** ServerCutText body being collected (copied out as it arrives, so a long text costs linear time). */
  private cutTextBody: { buf: Uint8Array; got: number } | null = null;
  /** The next FramebufferUpdateRequest must be non-incremental (after a resize). */
  private needFullRequest = false;
  private known = { width: 0, height: 0 };
  /** Set when replaying a recording (see forReplay). */
  private readonly replay: ReplayChoices | null = null;
  /** Set by endUpdate, so that advance() can stop right after an update. */
  private updateEnded = false;
  /** The pixel format the server announced in ServerInit (the one in use if the client never sent SetPixelFormat). */
  serverPixelFormat: PixelFormat | null = null;

  /**
   * A session that replays a recorded connection: feed it the recorded server stream (push / advance, or
   * receive); the client's choices come from `choices`. The decoders and the Framebuffer are the live client's.
   */
  static forReplay(choices: ReplayChoices): RfbSession {
    return new RfbSession({ encodings: [] }, choices);
  }

  constructor(options: SessionOptions, replay?: ReplayChoices) {
    this.opts = { ...options };
    if (replay) {
      this.replay = replay;
      const known = replay.encodings ? replay.encodings.filter((e) => ENCODINGS.has(e)) : [...ENCODINGS.keys()];
      this.accepted = new Set([...known, ENC.RAW]);
      this.advertised = replay.encodings ? [...replay.encodings] : [...ENCODINGS.keys()];
      return;
    }
    for (const e of options.encodings) {
      const spec = ENCODINGS.get(e);
      if (!spec || spec.pseudo) {
        throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `encoding ${e} is not a pixel encoding this client decodes`, { details: { encoding: e, known: [...ENCODINGS.keys()] } });
      }
    }
    const pseudo = [...(options.pseudoEncodings ?? DEFAULT_PSEUDO_ENCODINGS)];
    for (const e of pseudo) {
      if (!(e === ENC.LAST_RECT || ENCODINGS.get(e)?.pseudo)) {
        throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `pseudo-encoding ${e} is not one this client handles`, { details: { encoding: e } });
      }
    }
    const jq = options.jpegQuality;
    if (jq !== undefined && jq !== null && !(Number.isInteger(jq) && jq >= 0 && jq <= 9)) {
      throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `jpegQuality must be an integer 0..9 or null, got ${String(jq)}`, { details: { jpegQuality: jq } });
    }
    const cl = options.compressLevel;
    if (cl !== undefined && !(Number.isInteger(cl) && cl >= 0 && cl <= 9)) {
      throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `compressLevel must be an integer 0..9, got ${String(cl)}`, { details: { compressLevel: cl } });
    }
    const real = [...new Set(options.encodings)];
    this.accepted = new Set([...real, ENC.RAW, ...pseudo]);
    this.advertised = [...real, ...pseudo];
    if (jq !== undefined && jq !== null) this.advertised.push(ENC.JPEG_QUALITY_0 + jq);
    if (cl !== undefined) this.advertised.push(ENC.COMPRESS_LEVEL_0 + cl);
  }

  /** Where the connection is. */
  get state(): ConnectionState {
    return this.stateValue;
  }

  /** True between a FramebufferUpdate's header and its last rectangle. */
  get inUpdate(): boolean {
    return this.update !== null;
  }

  /** The encoding list sent in SetEncodings (real encodings in preference order, then pseudo-encodings). */
  get setEncodings(): readonly number[] {
    return this.advertised;
  }

  /** Current framebuffer size (0x0 before ServerInit). */
  get size(): { width: number; height: number } {
    return this.ctx ? { width: this.ctx.width, height: this.ctx.height } : { width: 0, height: 0 };
  }

  /** Every state change goes through here (and so through the one transition function). */
  private go(to: ConnectionState): void {
    this.stateValue = transition(this.stateValue, to);
  }

  /** Feed bytes from the server; returns what happened. Throws VncuaError on a protocol error (the session is then failed). */
  receive(bytes: Uint8Array): SessionEvent[] {
    this.push(bytes);
    return this.advance();
  }

  /** Queue bytes from the server without processing them (advance() processes them). */
  push(bytes: Uint8Array): void {
    if (isFinalState(this.stateValue)) {
      throw new VncuaError('RFB_ERR_ILLEGAL_STATE', `the session is ${this.stateValue}; it cannot take more bytes`, { details: { state: this.stateValue } });
    }
    this.q.push(bytes);
  }

  /** Bytes queued and not yet processed. */
  get pending(): number {
    return this.q.available;
  }

  /** Offset in the server stream of the next byte to process. */
  get offset(): number {
    return this.q.consumed;
  }

  /**
   * Process queued bytes as far as they go (or, with `stopAfterUpdate`, up to the end of the next complete
   * FramebufferUpdate); returns what happened. Throws VncuaError on a protocol error (the session is then failed).
   */
  advance(options: AdvanceOptions = {}): SessionEvent[] {
    if (isFinalState(this.stateValue)) return [];
    const out: SessionEvent[] = [];
    this.updateEnded = false;
    try {
      while (this.step(out)) {
        if (options.stopAfterUpdate && this.updateEnded) break;
      }
    } catch (e) {
      if (!isFinalState(this.stateValue)) this.go('failed');
      throw e;
    }
    return out;
  }

  /**
   * The transport ended. Returns the error that best explains it (a security failure whose reason
   * never arrived is RFB_ERR_AUTH_FAILED; anything else before a clean close is RFB_ERR_CLOSED).
   */
  end(): VncuaError {
    const state = this.stateValue;
    let err: VncuaError;
    const status = state === 'awaitingSecurityResult' ? peekSecurityStatus(this.q) : null;
    if (status !== null && status !== 0 && this.securityType === SECURITY_VNC_AUTH) {
      err = new VncuaError('RFB_ERR_AUTH_FAILED', 'the server rejected the VNC password (it closed the connection before giving a reason)', { details: { status } });
    } else {
      const where = state === 'connected' ? 'the connection' : `the handshake (while ${state})`;
      err = new VncuaError('RFB_ERR_CLOSED', `the server closed ${where}`, { details: { state } });
    }
    if (!isFinalState(state)) this.go(state === 'connected' ? 'closed' : 'failed');
    return err;
  }

  /** The client is closing the connection on purpose. */
  close(): void {
    if (!isFinalState(this.stateValue)) this.go('closed');
  }

  /** Bytes of a FramebufferUpdateRequest for the whole current screen: incremental, unless a resize happened since the last one or `incremental` is false. */
  updateRequest(incremental = true): Uint8Array {
    assertState(this.stateValue, 'connected', 'request a framebuffer update');
    const full = !incremental || this.needFullRequest;
    this.needFullRequest = false;
    return writeFramebufferUpdateRequest(!full, 0, 0, this.ctx!.width, this.ctx!.height);
  }

  /** Bytes of a PointerEvent (x, y 0..65535, buttonMask 0..255; else RFB_ERR_BAD_ARGUMENT). */
  pointerEvent(x: number, y: number, buttonMask: number): Uint8Array {
    assertState(this.stateValue, 'connected', 'send a pointer event');
    return writePointerEvent(x, y, buttonMask);
  }

  /** Bytes of a KeyEvent. */
  keyEvent(keysym: number, down: boolean): Uint8Array {
    assertState(this.stateValue, 'connected', 'send a key event');
    return writeKeyEvent(keysym, down);
  }

  /** Bytes of a ClientCutText (Latin-1 text only). */
  cutText(text: string): Uint8Array {
    assertState(this.stateValue, 'connected', 'send clipboard text');
    return writeClientCutText(text);
  }

  /** One parsing step; false when more bytes are needed. */
  private step(out: SessionEvent[]): boolean {
    switch (this.stateValue) {
      case 'awaitingVersion':
        return this.stepVersion(out);
      case 'awaitingSecurity':
        return this.stepSecurity(out);
      case 'awaitingChallenge':
        return this.stepChallenge(out);
      case 'awaitingSecurityResult':
        return this.stepSecurityResult(out);
      case 'awaitingServerInit':
        return this.stepServerInit(out);
      case 'connected':
        return this.stepMessage(out);
      default:
        return false;
    }
  }

  private stepVersion(out: SessionEvent[]): boolean {
    const v = tryReadProtocolVersion(this.q, this.opts.maxVersion ?? '3.8');
    if (!v) return false;
    this.version = this.replay?.version ?? v.version;
    this.serverVersion = v.announced;
    if (!this.replay) out.push({ type: 'send', bytes: writeProtocolVersion(v.version) });
    this.go('awaitingSecurity');
    return true;
  }

  /** Replay mode: the security type the recorded client used. */
  private replayedSecurityType(offered: readonly number[], v33: boolean): number {
    const r = this.replay!;
    const chosen = v33 ? offered[0]! : (r.securityType ?? (offered.includes(SECURITY_NONE) ? SECURITY_NONE : SECURITY_VNC_AUTH));
    if (chosen !== SECURITY_NONE && chosen !== SECURITY_VNC_AUTH) {
      throw new VncuaError(
        'RFB_ERR_UNSUPPORTED_SECURITY',
        `the recorded connection used security type ${chosen}, whose handshake cannot be replayed (only None and VNC Authentication)`,
        {
          details: { chosen, offered: [...offered] },
        },
      );
    }
    return chosen;
  }

  private stepSecurity(out: SessionEvent[]): boolean {
    const v33 = this.version === '3.3';
    const offer: SecurityOffer | null = v33 ? tryReadSecurityType33(this.q) : tryReadSecurityTypes(this.q);
    if (!offer) return false;
    if ('refused' in offer) {
      throw new VncuaError('RFB_ERR_SERVER_REFUSED', `the server refused the connection: ${offer.refused || '(no reason given)'}`, { details: { reason: offer.refused } });
    }
    const chosen = this.replay ? this.replayedSecurityType(offer.types, v33) : chooseSecurityType(offer.types, this.opts.password !== undefined);
    this.securityType = chosen;
    if (!v33 && !this.replay) out.push({ type: 'send', bytes: writeSecurityType(chosen) });
    if (chosen === SECURITY_VNC_AUTH) this.go('awaitingChallenge');
    else if (this.version === '3.8') this.go('awaitingSecurityResult');
    else this.enterServerInit(out); // 3.3 / 3.7 with None: no SecurityResult (RFC 6143 §7.2.1)
    return true;
  }

  private stepChallenge(out: SessionEvent[]): boolean {
    const challenge = tryReadChallenge(this.q);
    if (!challenge) return false;
    if (!this.replay) out.push({ type: 'send', bytes: vncAuthResponse(this.opts.password ?? '', challenge) });
    this.go('awaitingSecurityResult');
    return true;
  }

  private stepSecurityResult(out: SessionEvent[]): boolean {
    const r = tryReadSecurityResult(this.q, this.version!);
    if (!r) return false;
    if (!r.ok) {
      const reason = r.reason ? `: ${r.reason}` : '';
      if (this.securityType === SECURITY_VNC_AUTH) {
        const tooMany = r.status === 2 ? ' (too many attempts: wait before retrying)' : '';
        throw new VncuaError('RFB_ERR_AUTH_FAILED', `the server rejected the VNC password${tooMany}${reason}`, { details: { status: r.status, reason: r.reason } });
      }
      throw new VncuaError('RFB_ERR_SERVER_REFUSED', `the server refused the connection after the security handshake${reason}`, {
        details: { status: r.status, reason: r.reason },
      });
    }
    this.enterServerInit(out);
    return true;
  }

  private enterServerInit(out: SessionEvent[]): void {
    if (!this.replay) out.push({ type: 'send', bytes: writeClientInit(this.opts.shared ?? true) });
    this.go('awaitingServerInit');
  }

  private stepServerInit(out: SessionEvent[]): boolean {
    const pf = this.q.has(24) ? peekServerPixelFormat(this.q) : null;
    const init = tryReadServerInit(this.q);
    if (!init) return false;
    this.serverPixelFormat = pf;
    this.name = init.name;
    const fb = new Framebuffer(init.width, init.height);
    this.framebuffer = fb;
    this.ctx = {
      sink: fb,
      width: init.width,
      height: init.height,
      zrleStream: new InflateStream('ZRLE'),
      tightStreams: [new InflateStream('Tight stream 0'), new InflateStream('Tight stream 1'), new InflateStream('Tight stream 2'), new InflateStream('Tight stream 3')],
      tightKinds: this.tightKinds,
    };
    this.known = { width: init.width, height: init.height };
    this.go('connected');
    out.push({
      type: 'ready',
      width: init.width,
      height: init.height,
      name: init.name,
      version: this.version!,
      security: this.securityType === SECURITY_VNC_AUTH ? 'vncAuth' : 'none',
    });
    if (this.replay) return true;
    out.push({ type: 'send', bytes: writeSetPixelFormat() });
    out.push({ type: 'send', bytes: writeSetEncodings(this.advertised) });
    out.push({ type: 'send', bytes: this.updateRequest(false) });
    return true;
  }

  private stepMessage(out: SessionEvent[]): boolean {
    const q = this.q;
    if (this.skipBytes > 0) {
      const n = Math.min(this.skipBytes, q.available);
      if (n === 0) return false;
      q.skip(n);
      this.skipBytes -= n;
      return true;
    }
    if (this.cutTextBody) {
      const c = this.cutTextBody;
      const n = Math.min(c.buf.length - c.got, q.available);
      if (n > 0) {
        c.buf.set(q.readBytes(n), c.got);
        c.got += n;
      }
      if (c.got < c.buf.length) return false;
      this.cutTextBody = null;
      out.push({ type: 'cutText', text: Buffer.from(c.buf.buffer, c.buf.byteOffset, c.buf.length).toString('latin1') });
      return true;
    }
    if (this.update) return this.stepRect(out);
    if (!q.has(1)) return false;
    const type = q.peekU8(0);
    switch (type) {
      case SERVER_MSG.FRAMEBUFFER_UPDATE: {
        const n = tryReadFramebufferUpdateHeader(q);
        if (n === null) return false;
        out.push({ type: 'updateStart', rects: n });
        this.update = { remaining: n, decoder: null, rect: null };
        if (n === 0) this.endUpdate(out);
        return true;
      }
      case SERVER_MSG.SET_COLOUR_MAP_ENTRIES: {
        const n = tryReadColourMapHeader(q);
        if (n === null) return false;
        this.skipBytes = n;
        return true;
      }
      case SERVER_MSG.BELL:
        if (!tryReadBell(q)) return false;
        out.push({ type: 'bell' });
        return true;
      case SERVER_MSG.SERVER_CUT_TEXT: {
        const len = tryReadCutTextHeader(q);
        if (len === null) return false;
        if (len > MAX_CUT_TEXT_LENGTH) this.skipBytes = len;
        else this.cutTextBody = { buf: new Uint8Array(len), got: 0 };
        return true;
      }
      default:
        return unknownMessage(type, q.consumed);
    }
  }

  private stepRect(out: SessionEvent[]): boolean {
    const u = this.update!;
    const ctx = this.ctx!;
    if (!u.decoder) {
      const rect = tryReadRectHeader(this.q);
      if (!rect) return false;
      if (rect.encoding === ENC.LAST_RECT && this.accepted.has(ENC.LAST_RECT)) {
        this.endUpdate(out);
        return true;
      }
      const spec = this.accepted.has(rect.encoding) ? ENCODINGS.get(rect.encoding) : undefined;
      if (!spec) {
        throw new VncuaError(
          'RFB_ERR_UNSUPPORTED_ENCODING',
          `the server sent a rectangle in encoding ${rect.encoding}, which this client did not request (requested: ${this.advertised.join(', ')})`,
          { details: { rect, requested: this.advertised } },
        );
      }
      u.rect = rect;
      this.replay?.onRectStart?.(rect);
      u.decoder = spec.create(rect, ctx);
    }
    if (!u.decoder.decode(this.q)) return false;
    const rect = u.rect!;
    u.decoder = null;
    u.rect = null;
    this.rectsByEncoding.set(rect.encoding, (this.rectsByEncoding.get(rect.encoding) ?? 0) + 1);
    if (ctx.width !== this.known.width || ctx.height !== this.known.height) {
      this.known = { width: ctx.width, height: ctx.height };
      this.needFullRequest = true;
      out.push({ type: 'resize', width: ctx.width, height: ctx.height });
    }
    out.push({ type: 'rect', rect });
    u.remaining--;
    if (u.remaining === 0) this.endUpdate(out);
    return true;
  }

  private endUpdate(out: SessionEvent[]): void {
    this.update = null;
    this.updateEnded = true;
    out.push({ type: 'updateEnd' });
  }
}

/** The PIXEL_FORMAT inside a ServerInit at the head of `q` (bytes 4..19; RFC 6143 §7.4 layout), without consuming it. */
function peekServerPixelFormat(q: ByteQueue): PixelFormat {
  return {
    bitsPerPixel: q.peekU8(4),
    depth: q.peekU8(5),
    bigEndian: q.peekU8(6) !== 0,
    trueColour: q.peekU8(7) !== 0,
    redMax: q.peekU16(8),
    greenMax: q.peekU16(10),
    blueMax: q.peekU16(12),
    redShift: q.peekU8(14),
    greenShift: q.peekU8(15),
    blueShift: q.peekU8(16),
  };
}

export { SECURITY_NONE, SECURITY_VNC_AUTH };
