/**
 * Replaying ONE recorded connection: its server stream through an RfbSession in replay mode (the live
 * client's decoders and Framebuffer), fed chunk by chunk in time order; its client stream parsed for the
 * client's choices and the pointer positions.
 *
 * State kept: every FramebufferUpdate that completed at or before the last instant asked for is applied
 * ("committed"); at most ONE more update may be decoded ahead (in part, or wholly but completing later),
 * with the undo log of what it overwrote, so the screen before it can still be produced.
 */
import { VncuaError, type ErrorCode } from '../../harness/errors.ts';
import type { RfbVersion } from '../../harness/rfb/client-messages.ts';
import type { Framebuffer } from '../../harness/rfb/framebuffer.ts';
import { blendCursor } from '../../harness/rfb/screenshot.ts';
import { RfbSession } from '../../harness/rfb/session.ts';
import type { CursorShape } from '../../harness/rfb/sink.ts';
import { ClientStreamParser, describePixelFormat, isClientPixelFormat, type ClientInputEvent, type ClientMessage } from '../../harness/rfb/client-stream.ts';
import type { RecordedConnection, RecordingWarning } from './reader.ts';
import { applyUndo, captureUndo, cursorBefore, touchesPixels, type RgbImage, type UndoEntry } from './undo.ts';

/** The update decoded ahead of the committed state. */
interface Pending {
  undo: UndoEntry[];
  /** True once all its bytes were decoded. */
  complete: boolean;
  /** Time its last byte arrived (Infinity while incomplete). */
  end: number;
}

/** A frame of one connection: the screen (RGB) as of an instant. */
export interface ConnectionFrame extends RgbImage {
  /** Identifies the picture: equal keys mean identical pixels (same committed state, same cursor). */
  key: string;
  /** When the last update in this picture completed (epoch ms). */
  updateAt: number;
}

/** What the recorded client chose, from its client stream. */
export interface ClientChoices {
  version: RfbVersion | null;
  securityType: number | null;
  encodings: number[] | null;
  /** True when the client sent at least one SetPixelFormat (else the server's own format was in use). */
  setPixelFormat: boolean;
  /** Time of the first SetPixelFormat that vncua cannot decode, or null. */
  badPixelFormatAt: number | null;
  badPixelFormat: string | null;
}

/** Parse a whole client stream: every message, and the parse error if any. */
export function parseClientStream(
  stream: { data: Uint8Array; times: Float64Array; ends: Float64Array },
  security33?: number,
): { messages: ClientMessage[]; error: VncuaError | null } {
  const p = new ClientStreamParser(security33 === undefined ? {} : { security33 });
  const messages: ClientMessage[] = [];
  let start = 0;
  for (let i = 0; i < stream.times.length && !p.failed; i++) {
    const end = stream.ends[i]!;
    if (end > start) messages.push(...p.push(stream.data.subarray(start, end), stream.times[i]!));
    start = end;
  }
  return { messages, error: p.error };
}

/** The client's choices among its messages. */
export function clientChoices(messages: readonly ClientMessage[]): ClientChoices {
  const c: ClientChoices = { version: null, securityType: null, encodings: null, setPixelFormat: false, badPixelFormatAt: null, badPixelFormat: null };
  for (const m of messages) {
    if (m.kind === 'version') {
      const [major, minor] = m.version.split('.').map(Number) as [number, number];
      c.version = major > 3 || minor >= 8 ? '3.8' : minor === 7 ? '3.7' : '3.3';
    } else if (m.kind === 'security') c.securityType = m.type;
    else if (m.kind === 'encodings') c.encodings = [...new Set([...(c.encodings ?? []), ...m.encodings])];
    else if (m.kind === 'pixelFormat') {
      c.setPixelFormat = true;
      if (c.badPixelFormatAt === null && !isClientPixelFormat(m.format)) {
        c.badPixelFormatAt = m.t;
        c.badPixelFormat = describePixelFormat(m.format);
      }
    }
  }
  return c;
}

const shapeIds = new WeakMap<CursorShape, number>();
let nextShapeId = 1;
function shapeId(s: CursorShape): number {
  let id = shapeIds.get(s);
  if (id === undefined) {
    id = nextShapeId++;
    shapeIds.set(s, id);
  }
  return id;
}

/** Replays one connection; ask for instants in non-decreasing order (an earlier one needs a new replayer). */
export class ConnectionReplayer {
  readonly index: number;
  private readonly session: RfbSession;
  private readonly server: { data: Uint8Array; times: Float64Array; ends: Float64Array; damagedAfter?: number };
  /** Pointer events in time order (x, y at t). */
  readonly pointer: Array<{ t: number; x: number; y: number }>;
  /** Pointer and key events of this connection. */
  readonly input: ClientInputEvent[];
  private readonly choices: ClientChoices;
  /** Server chunks at or after this time are not used (a pixel format vncua cannot decode began). */
  private readonly limit: number;
  private next = 0;
  private pushedUntil = -Infinity;
  /** True when the queued bytes cannot make progress without another chunk. */
  private starved = true;
  private building: UndoEntry[] | null = null;
  private pending: Pending | null = null;
  private fb: Framebuffer | null = null;
  private readonly warn: (w: RecordingWarning) => void;
  /** Updates applied for good. */
  committed = 0;
  /** True once a committed update drew pixels (before that the screen is not known, as the live client never shows it). */
  hasPixels = false;
  /** Completion time of the last committed update (-Infinity before the first). */
  lastCommitAt = -Infinity;
  /** Why replay stopped early, if it did. */
  failure: VncuaError | null = null;
  /** Time of the server chunk whose bytes could not be replayed (meaningful once `failure` is set). */
  private failedAt = Infinity;
  private asyncErrors = 0;

  constructor(conn: RecordedConnection, warn: (w: RecordingWarning) => void) {
    if (!conn.server) throw new Error('internal: a ConnectionReplayer needs a server stream');
    this.index = conn.index;
    this.warn = warn;
    this.server = conn.server;
    let messages: ClientMessage[] = [];
    if (conn.client) {
      const security33 = peekSecurity33(conn.server.data);
      const parsed = parseClientStream(conn.client, security33);
      messages = parsed.messages;
      if (parsed.error) warn({ code: 'RECORDING_ERR_CLIENT_STREAM', message: `connection ${conn.index}: ${parsed.error.message}` });
    }
    this.choices = clientChoices(messages);
    this.input = messages.filter((m): m is ClientInputEvent => m.kind === 'pointer' || m.kind === 'key');
    this.pointer = this.input.flatMap((m) => (m.kind === 'pointer' ? [{ t: m.t, x: m.x, y: m.y }] : []));
    this.limit = this.choices.badPixelFormatAt ?? Infinity;
    if (this.choices.badPixelFormatAt !== null) {
      warn({
        code: 'RECORDING_ERR_PIXEL_FORMAT',
        message: `connection ${conn.index}: the client switched to pixel format ${this.choices.badPixelFormat} at ${new Date(this.choices.badPixelFormatAt).toISOString()}; only vncua's (32bpp depth 24 LE true-colour shift 0/8/16) can be replayed, so frames stop there.`,
      });
    }
    this.session = RfbSession.forReplay({
      version: this.choices.version,
      securityType: this.choices.securityType,
      encodings: this.choices.encodings,
      onRectStart: (rect) => {
        const fb = this.session.framebuffer;
        if (!fb) return;
        const e = captureUndo(fb, rect);
        if (e) (this.building ??= []).push(e);
      },
    });
  }

  /** Time of the first server chunk (Infinity when none is usable). */
  get startTime(): number {
    return this.server.times.length > 0 && this.server.times[0]! < this.limit ? this.server.times[0]! : Infinity;
  }

  /** Time of the last usable server chunk (-Infinity when none). */
  get endTime(): number {
    let i = this.server.times.length - 1;
    while (i >= 0 && this.server.times[i]! >= this.limit) i--;
    return i >= 0 ? this.server.times[i]! : -Infinity;
  }

  /**
   * Up to when this connection's screen is known (as far as decoded so far): Infinity for a whole stream;
   * else the instant after which its server stream is damaged ('damage': the files), or cannot be replayed
   * ('undecodable': bytes the decoders reject, or a pixel format vncua cannot decode).
   */
  get known(): { until: number; reason: 'damage' | 'undecodable' } | null {
    let best: { until: number; reason: 'damage' | 'undecodable' } | null = null;
    const consider = (until: number, reason: 'damage' | 'undecodable') => {
      if (best === null || until < best.until) best = { until, reason };
    };
    if (this.server.damagedAfter !== undefined) consider(this.server.damagedAfter, 'damage');
    if (this.failure) consider(this.failedAt, 'undecodable');
    if (Number.isFinite(this.limit)) consider(this.limit, 'undecodable');
    return best;
  }

  /** True when every usable byte has been decoded (or replay stopped). */
  get exhausted(): boolean {
    return this.failure !== null || (this.starved && !this.hasNextChunk(Infinity));
  }

  private hasNextChunk(t: number): boolean {
    const times = this.server.times;
    return this.next < times.length && times[this.next]! <= t && times[this.next]! < this.limit;
  }

  private pushNext(): void {
    const i = this.next++;
    const start = i === 0 ? 0 : this.server.ends[i - 1]!;
    const end = this.server.ends[i]!;
    this.pushedUntil = this.server.times[i]!;
    if (end > start) {
      this.session.push(this.server.data.subarray(start, end));
      this.starved = false;
    }
  }

  /** Decode queued bytes up to the end of the next update (or as far as they go). */
  private async process(): Promise<void> {
    let events: ReturnType<RfbSession['advance']>;
    try {
      events = this.session.advance({ stopAfterUpdate: true });
    } catch (e) {
      this.fail(e);
      return;
    }
    let ended = false;
    for (const ev of events) {
      if (ev.type === 'ready') {
        this.fb = this.session.framebuffer;
        this.fb!.onError = (err) => this.asyncError(err);
        const pf = this.session.serverPixelFormat;
        if (!this.choices.setPixelFormat && pf && !isClientPixelFormat(pf)) {
          this.fail(
            new VncuaError(
              'RECORDING_ERR_PIXEL_FORMAT',
              `connection ${this.index}: the client never sent SetPixelFormat and the server's own format is ${describePixelFormat(pf)}; only vncua's (32bpp depth 24 LE true-colour shift 0/8/16) can be replayed.`,
            ),
          );
          return;
        }
      } else if (ev.type === 'updateEnd') ended = true;
    }
    if (ended) {
      if (this.fb?.busy) await this.fb.whenIdle();
      this.pending = { undo: this.building ?? [], complete: true, end: this.pushedUntil };
      this.building = null;
    } else {
      this.starved = true;
      if (this.session.inUpdate) {
        this.building ??= [];
        this.pending = { undo: this.building, complete: false, end: Infinity };
      }
    }
  }

  private commit(): void {
    this.committed++;
    if (!this.hasPixels && touchesPixels(this.pending!.undo)) this.hasPixels = true;
    this.lastCommitAt = this.pending!.end;
    this.pending = null;
  }

  /** Apply every update that completed at or before `t` (decoding at most one update beyond). */
  async ensure(t: number): Promise<void> {
    for (;;) {
      if (this.failure) return;
      if (this.pending?.complete) {
        if (this.pending.end > t) return;
        this.commit();
        continue;
      }
      if (!this.starved) {
        await this.process();
        continue;
      }
      if (this.hasNextChunk(t)) {
        this.pushNext();
        continue;
      }
      return;
    }
  }

  /**
   * When the next update after `t` completes (decoding it ahead, undo kept), or null when the recording
   * holds no further complete update.
   */
  async nextUpdateAfter(t: number): Promise<number | null> {
    await this.ensure(t);
    for (;;) {
      if (this.failure) return null;
      if (this.pending?.complete) return this.pending.end;
      if (!this.starved) await this.process();
      else if (this.hasNextChunk(Infinity)) this.pushNext();
      else return null;
    }
  }

  /** The last pointer position sent at or before `t`, or null. */
  pointerAt(t: number): { x: number; y: number } | null {
    const p = this.pointer;
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p[mid]!.t <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? p[lo - 1]! : null;
  }

  /**
   * The screen as of `t` (after `ensure(t)`): the committed state, with the cursor drawn at the pointer
   * position when asked. The returned `rgb` is a NEW buffer the caller owns; null before the first complete update.
   */
  async frame(t: number, cursor: boolean): Promise<ConnectionFrame | null> {
    await this.ensure(t);
    const fb = this.fb;
    if (!fb || !this.hasPixels) return null;
    if (fb.busy) await fb.whenIdle();
    const plane = fb.rgbPlane();
    let image: RgbImage = { rgb: plane.slice(), width: fb.width, height: fb.height };
    let shape: CursorShape | null = fb.cursorShape;
    const undo = this.pending?.undo ?? [];
    if (undo.length > 0) {
      image = applyUndo(image, undo);
      const before = cursorBefore(undo);
      if (before !== undefined) shape = before;
    }
    let cursorKey = '';
    if (cursor && shape) {
      const p = this.pointerAt(t);
      if (p) {
        blendCursor(image.rgb, image.width, image.height, shape, p.x, p.y, 3);
        cursorKey = `:${p.x},${p.y},${shapeId(shape)}`;
      }
    }
    return { ...image, key: `${this.index}:${this.committed}${cursorKey}`, updateAt: this.lastCommitAt };
  }

  /** The pointer position (last sent at or before `t`) and the cursor shape shown as of `t` (after ensure(t)). */
  cursorAt(t: number): { pointer: { x: number; y: number } | null; shape: CursorShape | null } {
    const undo = this.pending?.undo ?? [];
    const before = undo.length > 0 ? cursorBefore(undo) : undefined;
    const shape = before !== undefined ? before : (this.fb?.cursorShape ?? null);
    return { pointer: this.pointerAt(t), shape };
  }

  /** Rectangles decoded so far by encoding number (which encodings the server really used). */
  get rectsByEncoding(): ReadonlyMap<number, number> {
    return this.session.rectsByEncoding;
  }

  /** The key the frame at `t` would have, without producing it (after ensure(t)). */
  frameKey(t: number, cursor: boolean): string | null {
    const fb = this.fb;
    if (!fb || !this.hasPixels) return null;
    if (!cursor) return `${this.index}:${this.committed}`;
    const undo = this.pending?.undo ?? [];
    const before = undo.length > 0 ? cursorBefore(undo) : undefined;
    const shape = before !== undefined ? before : fb.cursorShape;
    const p = shape ? this.pointerAt(t) : null;
    return p && shape ? `${this.index}:${this.committed}:${p.x},${p.y},${shapeId(shape)}` : `${this.index}:${this.committed}`;
  }

  private fail(e: unknown): void {
    const err = e instanceof VncuaError ? e : new VncuaError('RECORDING_ERR_DECODE', (e as Error)?.message ?? String(e), { cause: e });
    this.failure = err;
    this.failedAt = this.pushedUntil;
    const at = Number.isFinite(this.pushedUntil) ? ` (data of ${new Date(this.pushedUntil).toISOString()})` : '';
    const code: ErrorCode = err.code === 'RECORDING_ERR_PIXEL_FORMAT' ? 'RECORDING_ERR_PIXEL_FORMAT' : 'RECORDING_ERR_DECODE';
    this.warn({
      code,
      message: `connection ${this.index}: the server stream cannot be replayed past byte ${this.session.offset}${at}: ${err.code}: ${err.message}. Frames up to the last complete update before it are used.`,
    });
  }

  private asyncError(err: VncuaError): void {
    this.asyncErrors++;
    if (this.asyncErrors === 1) {
      this.warn({
        code: 'RECORDING_ERR_DECODE',
        message: `connection ${this.index}: an image rectangle could not be decoded (${err.message}); that area keeps its previous pixels.`,
      });
    }
  }
}

/** The U32 after a server's 12-byte ProtocolVersion: the security type an RFB 3.3 server chose (used only if the client spoke 3.3). */
function peekSecurity33(server: Uint8Array): number | undefined {
  if (server.length < 16) return undefined;
  return ((server[12]! << 24) | (server[13]! << 16) | (server[14]! << 8) | server[15]!) >>> 0;
}
