/**
 * The live VNC client: a transport (TCP / WebSocket) feeding an RfbSession, with
 * continuous incremental updates, screenshots, input and typed events.
 *
 * Input methods (pointerEvent, keyEvent, cutText) are synchronous: they hand the
 * bytes to the socket immediately (no batching, Nagle off) and throw on bad
 * arguments or a closed connection. Everything that waits is a Promise that takes
 * `{ signal, timeoutMs }` (harness/cancel.ts, errors mapped by deadline.ts) and rejects with
 * RFB_ERR_CLOSED if the connection ends first.
 *
 * The client's life is one `state` (connecting → open → closing → closed, as `ws` keeps readyState)
 * plus the error that ended it, changed only by `moveTo()`, which refuses a move its table does not list.
 */
import { VncuaError } from '../errors.ts';
import { redactUrl } from '../redact.ts';
import { type RfbVersion, writeFramebufferUpdateRequest } from './client-messages.ts';
import { race } from '../cancel.ts';
import { type Cancellable, checkTimeout, rfbCancel, withDeadline } from './deadline.ts';
import { TypedEmitter } from './emitter.ts';
import { ENCODINGS, ENCODING_BY_NAME, type EncodingName } from './encodings/index.ts';
import type { Framebuffer } from './framebuffer.ts';
import type { CursorShape } from './sink.ts';
import { type Capture, type CaptureFormat, type Screenshot, blendCursorReversible, encodeRgbCapture, encodeRgbPng } from './screenshot.ts';
import { RfbSession, type SessionEvent, type SessionOptions } from './session.ts';
import { type TlsOptions, type Transport, type VncTarget, openTransport, parseVncUrl } from './transport.ts';

/**
 * Encodings requested when `connectVnc` is given none, in order of preference. Lossless and cheap:
 * against Xvnc on loopback a full 1280x800 frame of a Chromium page connects in ~19 ms with Hextile
 * (Raw ~17 ms, Tight ~29 ms, ZRLE ~51 ms), while Hextile sends far fewer bytes than Raw for UI content.
 */
export const DEFAULT_ENCODINGS: readonly EncodingName[] = ['copyrect', 'hextile', 'raw'];
/** Default timeout of connectVnc() and of every wait, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Options of connectVnc(). */
export interface ConnectOptions extends Cancellable {
  /** Password for VNC Authentication (only the first 8 bytes count). */
  password?: string;
  /** Encodings to request, in order of preference (default DEFAULT_ENCODINGS). Raw is always accepted. */
  encodings?: EncodingName[];
  /** Tight JPEG quality 0..9, or null for lossless (default null). */
  jpegQuality?: number | null;
  /** zlib compression level 0..9 for Tight/ZRLE (default: the server's). */
  compressLevel?: number;
  /** TLS options for wss:// URLs. */
  tls?: TlsOptions;
  /** Origin header for ws:// / wss:// (default http(s)://host:port of the URL; x11vnc requires one). */
  wsOrigin?: string;
  /** ClientInit shared flag (default true: other viewers stay connected). */
  shared?: boolean;
  /** Highest RFB version to speak (default 3.8); for interoperability tests. */
  maxVersion?: RfbVersion;
}

/** The last pointer state this client sent. */
export interface PointerState {
  x: number;
  y: number;
  buttonMask: number;
}

/** Events of a VncClient. */
export type VncClientEvents = {
  /** A framebuffer update was applied; `version` is the framebuffer version after it. */
  update: [info: { version: number; rects: number }];
  /** The framebuffer size changed. */
  resize: [size: { width: number; height: number }];
  bell: [];
  /** The server's clipboard text (ServerCutText, Latin-1). */
  cutText: [text: string];
  /** Something went wrong (protocol or decode error, server closed the connection). */
  error: [error: VncuaError];
  /** The connection is closed: `error` is null after close(), else why it ended. Emitted once. */
  close: [error: VncuaError | null];
};

/**
 * Where a VncClient is in its life, as `ws` keeps `readyState`: `connecting` until connectVnc()
 * resolves, `open`, `closing` once close() was called or an error ended the connection (the socket
 * is going away), `closed` once it is gone (the `close` event was emitted).
 */
export type ClientState = 'connecting' | 'open' | 'closing' | 'closed';

/** The moves VncClient's one transition function allows; any other throws RFB_ERR_ILLEGAL_STATE. */
const CLIENT_MOVES: Readonly<Record<ClientState, readonly ClientState[]>> = {
  connecting: ['open', 'closing', 'closed'],
  open: ['closing', 'closed'],
  closing: ['closed'],
  closed: [],
};

type Waiter = { check: () => boolean; resolve: () => void; reject: (e: VncuaError) => void };

/** Options of screenshot(). */
export interface ScreenshotOptions extends Cancellable {
  /** Draw the cursor shape (Cursor pseudo-encoding) at the last pointer position sent (default false). */
  cursor?: boolean;
  /** Return the previous PNG when nothing on screen changed since it was taken (default true). */
  cache?: boolean;
}

/** Options of waitForUpdate(). */
export interface WaitForUpdateOptions extends Cancellable {
  /** Resolve once the framebuffer version exceeds this (default: the version when called). */
  after?: number;
}

/** Options of waitForQuiet(). */
export interface WaitForQuietOptions {
  /** The screen is quiet once no update changed pixels for this long (ms, default 300). */
  quietMs?: number;
  /** Give up after this long (ms, default 2000): resolves false. */
  timeoutMs?: number;
  signal?: AbortSignal | undefined;
}

/** A live connection to a VNC server. Create it with connectVnc(). */
export class VncClient extends TypedEmitter<VncClientEvents> {
  /** The URL this client is connected to. */
  readonly url: string;
  private readonly session: RfbSession;
  private transport: Transport | null = null;
  private waiters = new Set<Waiter>();
  #state: ClientState = 'connecting';
  /** Why the connection ended (null while it lives, or when close() ended it); set once, by moveTo(). */
  #error: VncuaError | null = null;
  private closedResolve!: () => void;
  private readonly closedPromise = new Promise<void>((r) => (this.closedResolve = r));
  private pointerState: PointerState | null = null;
  /** Updates applied that carried pixels (not only pseudo-rectangles). */
  private pixelUpdates = 0;
  private rectsInUpdate = 0;
  private pixelRectsInUpdate = 0;
  private serverName = '';
  /** Pixel rectangles seen that covered the screen's bottom-right pixel (what sync() waits for). */
  private cornerRects = 0;
  /** The last screenshot and what it showed, to answer repeated calls on an unchanged screen. */
  private shotCache = new Map<string, { version: number; fb: Uint8Array; shape: CursorShape | null; pointer: string; shot: Promise<unknown> }>();
  /** Resolves when the screenshot encoding now (in place, from the framebuffer's RGB plane) is done. */
  private encoding: Promise<void> | null = null;
  /** The pending idle-time refresh of the framebuffer's RGB plane, if any. */
  private planeRefresh: NodeJS.Immediate | null = null;
  /** Socket data received while a screenshot encodes (decoded once it is done), or null when not holding. */
  private held: Uint8Array[] | null = null;

  /** @internal use connectVnc(). */
  constructor(url: string, session: RfbSession) {
    super();
    this.url = url;
    this.session = session;
  }

  /** The live framebuffer (RGBA). Valid after connectVnc() resolves; keeps the last picture after close. */
  get framebuffer(): Framebuffer {
    return this.session.framebuffer!;
  }

  /** The desktop name from ServerInit. */
  get name(): string {
    return this.serverName;
  }

  /** The negotiated RFB version. */
  get version(): RfbVersion {
    return this.session.version!;
  }

  /** The last pointer position and buttons sent, or null before the first pointerEvent(). */
  get pointer(): PointerState | null {
    return this.pointerState ? { ...this.pointerState } : null;
  }

  /** Where the connection is in its life (see ClientState). */
  get state(): ClientState {
    return this.#state;
  }

  /** True once the connection has ended or is ending (close() or an error): state 'closing' or 'closed'. */
  get closed(): boolean {
    return !this.live;
  }

  /** State 'connecting' or 'open': data is processed and waits may start. */
  private get live(): boolean {
    return this.#state === 'connecting' || this.#state === 'open';
  }

  /** The one transition function: move to `to` (keeping the first error); throws RFB_ERR_ILLEGAL_STATE for a move CLIENT_MOVES does not list. */
  private moveTo(to: ClientState, error: VncuaError | null = null): void {
    const from = this.#state;
    if (!CLIENT_MOVES[from].includes(to)) {
      throw new VncuaError('RFB_ERR_ILLEGAL_STATE', `internal: the VNC client cannot go from '${from}' to '${to}'`, { details: { from, to } });
    }
    this.#state = to;
    this.#error ??= error;
  }

  /** Rectangles received so far by encoding name (e.g. { ZRLE: 12, Cursor: 1 }): which encodings the server really used. */
  rectStats(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [id, n] of this.session.rectsByEncoding) out[ENCODINGS.get(id)?.name ?? String(id)] = n;
    return out;
  }

  /** Tight / TightPNG rectangles received so far by kind (fill, jpeg, png, copy, palette, gradient): what a Tight server really sends. */
  tightStats(): Record<string, number> {
    return Object.fromEntries(this.session.tightKinds);
  }

  /** Current framebuffer size. */
  resolution(): { width: number; height: number } {
    return this.session.size;
  }

  /** @internal open the transport and run the handshake up to the first complete update. */
  async start(target: VncTarget, options: ConnectOptions, signal: AbortSignal): Promise<void> {
    const transport = await openTransport(target, { tls: options.tls, wsOrigin: options.wsOrigin }, signal);
    if (this.#state !== 'connecting') {
      // The deadline fired while the socket was connecting: nothing will use it.
      transport.destroy();
      throw this.#error ?? new VncuaError('RFB_ERR_CLOSED', 'the connection was closed while it was being opened');
    }
    this.transport = transport;
    transport.start({ onData: (c) => this.onData(c), onClose: (e) => this.onTransportClose(e) });
    // TigerVNC answers the first request with pseudo-rectangles only (Cursor, ExtendedDesktopSize)
    // and sends the pixels in the next update: wait for real pixels.
    await this.waitFor(() => this.pixelUpdates > 0, true, signal, `connecting to ${redactUrl(this.url)}`);
    // (An error in the same chunk as the first update may already have moved it to 'closing'.)
    if (this.#state === 'connecting') this.moveTo('open');
  }

  /** Send a PointerEvent now: x, y in 0..65535, buttonMask bits 0..7 (1 = left, 2 = middle, 4 = right, 8/16 = wheel up/down). */
  pointerEvent(x: number, y: number, buttonMask: number): void {
    this.assertOpen('send a pointer event');
    const bytes = this.session.pointerEvent(x, y, buttonMask);
    this.pointerState = { x, y, buttonMask };
    this.transport!.send(bytes);
  }

  /** Send a KeyEvent now (`keysym` is an X11 keysym). */
  keyEvent(keysym: number, down: boolean): void {
    this.assertOpen('send a key event');
    this.transport!.send(this.session.keyEvent(keysym, down));
  }

  /** Send clipboard text (ClientCutText, Latin-1 only) now. */
  cutText(text: string): void {
    this.assertOpen('send clipboard text');
    this.transport!.send(this.session.cutText(text));
  }

  /**
   * Resolve true once no update changed pixels for `quietMs` (animations finished, the page repainted),
   * false if that did not happen within `timeoutMs`. Rejects on abort or when the connection closes.
   */
  async waitForQuiet(options: WaitForQuietOptions = {}): Promise<boolean> {
    const quietMs = options.quietMs ?? 300;
    const timeoutMs = options.timeoutMs ?? 2000;
    if (!(typeof quietMs === 'number' && quietMs > 0 && Number.isFinite(quietMs))) {
      throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `waitForQuiet: quietMs must be a positive number of milliseconds, got ${String(quietMs)}`, { details: { quietMs } });
    }
    checkTimeout(timeoutMs, 'waitForQuiet');
    const end = performance.now() + timeoutMs;
    for (;;) {
      const left = end - performance.now();
      if (left < quietMs) return false;
      try {
        await this.waitForUpdate({ timeoutMs: quietMs, signal: options.signal });
      } catch (e) {
        if (e instanceof VncuaError && e.code === 'RFB_ERR_TIMEOUT') return true;
        throw e;
      }
    }
  }

  /**
   * Resolve with the framebuffer version once an update has been applied that changed pixels
   * after version `after` (default: now). Resolves at once if that already happened and no update is half-applied.
   */
  async waitForUpdate(options: WaitForUpdateOptions = {}): Promise<number> {
    const after = options.after ?? this.framebuffer.version;
    return withDeadline('waiting for a framebuffer update', options, DEFAULT_TIMEOUT_MS, async (signal) => {
      await this.waitFor(() => this.framebuffer.version > after && this.settled(), false, signal, 'waiting for a framebuffer update');
      return this.framebuffer.version;
    });
  }

  /**
   * A round trip: resolves once the server has read every message this client sent before the call.
   * RFB has no ping every server answers, but a non-incremental FramebufferUpdateRequest must be answered
   * and servers read client messages in order; so this asks for the 1x1 region at the bottom-right pixel
   * and waits for a rectangle covering it. (An update already on its way that repaints that very pixel can
   * end the wait early: pages rarely paint there.) Xvnc answers in ~1 ms; x11vnc from its polling loop.
   */
  async sync(options: Cancellable = {}): Promise<void> {
    await withDeadline('waiting for a round trip to the server', options, DEFAULT_TIMEOUT_MS, async (signal) => {
      this.assertOpen('make a round trip');
      const before = this.cornerRects;
      const { width, height } = this.session.size;
      this.transport!.send(writeFramebufferUpdateRequest(false, width - 1, height - 1, 1, 1));
      await this.waitFor(() => this.cornerRects > before, false, signal, 'waiting for a round trip to the server');
    });
  }

  /**
   * A PNG of the screen as of the last complete update (never a half-applied one), optionally with the cursor drawn in.
   * While the screen (and, with `cursor`, the pointer and cursor shape) has not changed, the previous encode is
   * returned again (`cache: false` forces a fresh one). Treat the returned buffers as read-only.
   */
  async screenshot(options: ScreenshotOptions = {}): Promise<Screenshot> {
    return this.encodeScreen(options, 'png', encodeRgbPng);
  }

  /**
   * Like screenshot(), but as PNG or JPEG and optionally scaled to `size` (what a model expects): see CaptureFormat.
   * Repeated calls on an unchanged screen with the same format return the previous encode.
   */
  async capture(options: ScreenshotOptions & CaptureFormat = {}): Promise<Capture> {
    const { format = 'png', quality, size } = options;
    const key = `${format}:${quality ?? ''}:${size ? `${size.width}x${size.height}` : ''}`;
    return this.encodeScreen(options, key, (plane, w, h) => encodeRgbCapture(plane, w, h, { format, quality, size }));
  }

  /** Encode the framebuffer's RGB plane in place (input held meanwhile), with the cursor blended in on request; cached per `key`. */
  private async encodeScreen<T>(options: ScreenshotOptions, key: string, encode: (plane: Uint8Array, width: number, height: number) => Promise<T>): Promise<T> {
    return withDeadline('taking a screenshot', options, DEFAULT_TIMEOUT_MS, async (signal) => {
      let fb: Framebuffer;
      for (;;) {
        this.assertOpen('take a screenshot');
        // One encode at a time: each encodes the framebuffer's RGB plane in place.
        if (this.encoding) {
          await race(this.encoding, { signal, mapError: rfbCancel('taking a screenshot') });
          continue;
        }
        fb = this.framebuffer;
        if (this.settled()) break;
        if (fb.busy) await race(fb.whenIdle(), { signal, mapError: rfbCancel('taking a screenshot') });
        else await this.waitFor(() => this.settled(), false, signal, 'taking a screenshot');
      }
      // Synchronous from here until input is held: no socket data can land in between.
      const shape = options.cursor && this.pointerState ? fb.cursorShape : null;
      const pointer = shape ? `${this.pointerState!.x},${this.pointerState!.y}` : '';
      const cached = this.shotCache.get(key);
      if (options.cache !== false && cached && cached.version === fb.version && cached.fb === fb.data && cached.shape === shape && cached.pointer === pointer) {
        return cached.shot as Promise<T>;
      }
      // Hold incoming data while the encoder reads the plane (no 4 MB copy); draw the cursor in and take it out after.
      this.holdInput();
      let undo: () => void = () => {};
      let shot: Promise<T>;
      try {
        const plane = fb.rgbPlane();
        if (shape) undo = blendCursorReversible(plane, fb.width, fb.height, shape, this.pointerState!.x, this.pointerState!.y);
        shot = encode(plane, fb.width, fb.height);
      } catch (e) {
        undo();
        this.releaseInput();
        throw e;
      }
      this.encoding = shot
        .then(
          () => {},
          () => {},
        )
        .then(() => {
          undo();
          this.encoding = null;
          this.releaseInput();
        });
      const entry = { version: fb.version, fb: fb.data, shape, pointer, shot: shot as Promise<unknown> };
      this.shotCache.set(key, entry);
      shot.catch(() => {
        if (this.shotCache.get(key) === entry) this.shotCache.delete(key);
      });
      return shot;
    });
  }

  /** Queue incoming socket data instead of decoding it (while a screenshot encodes the framebuffer in place). */
  private holdInput(): void {
    this.held ??= [];
  }

  /** Decode the data queued while input was held, in order. */
  private releaseInput(): void {
    const chunks = this.held;
    this.held = null;
    if (chunks) for (const c of chunks) this.onData(c);
  }

  /** Close the connection; idempotent; resolves once the socket is closed. Pending waits reject with RFB_ERR_CLOSED. */
  close(): Promise<void> {
    if (!this.live) return this.closedPromise;
    this.session.close();
    this.rejectWaiters(null);
    if (this.transport) {
      this.moveTo('closing');
      void this.transport.close();
    } else this.finish(null);
    return this.closedPromise;
  }

  /** @internal end the connection with an error (a failed connect attempt). */
  abortWith(error: VncuaError): void {
    if (!this.live) return;
    this.session.close();
    if (this.transport) {
      this.moveTo('closing', error);
      this.rejectWaiters(error);
      this.transport.destroy();
    } else this.finish(error);
  }

  /** No update is half-received and no image is waiting to be decoded. */
  private settled(): boolean {
    return !this.session.inUpdate && !this.framebuffer.busy;
  }

  private assertOpen(action: string): void {
    if (!this.live) {
      throw new VncuaError('RFB_ERR_CLOSED', `cannot ${action}: the connection to ${redactUrl(this.url)} is closed${this.#error ? ` (${this.#error.message})` : ''}`, {
        cause: this.#error ?? undefined,
      });
    }
  }

  /**
   * A promise for `check()` becoming true after an update. It rejects with the signal's error on abort
   * (and forgets the waiter), and with RFB_ERR_CLOSED when the connection ends; `connecting` waits
   * reject with the precise failure (RFB_ERR_AUTH_FAILED, ...) instead.
   */
  private waitFor(check: () => boolean, connecting: boolean, signal: AbortSignal, what: string): Promise<void> {
    if (!this.live) return Promise.reject(this.closedError(connecting));
    if (!signal.aborted && check()) return Promise.resolve();
    let w: Waiter | undefined;
    const woken = new Promise<void>((resolve, reject) => {
      w = {
        check,
        resolve: () => {
          this.waiters.delete(w!);
          resolve();
        },
        reject: (e: VncuaError) => {
          this.waiters.delete(w!);
          reject(connecting ? e : this.closedError(false));
        },
      };
    });
    if (signal.aborted) return race(woken, { signal, mapError: rfbCancel(what) });
    this.waiters.add(w!);
    return race(woken, { signal, mapError: rfbCancel(what), onAbort: () => this.waiters.delete(w!) });
  }

  private closedError(connecting: boolean): VncuaError {
    if (connecting && this.#error) return this.#error;
    return new VncuaError('RFB_ERR_CLOSED', `the connection to ${redactUrl(this.url)} closed${this.#error ? `: ${this.#error.message}` : ''}`, { cause: this.#error ?? undefined });
  }

  private rejectWaiters(error: VncuaError | null): void {
    const err = error ?? new VncuaError('RFB_ERR_CLOSED', `the connection to ${redactUrl(this.url)} was closed`);
    for (const w of [...this.waiters]) w.reject(err);
  }

  private onData(chunk: Uint8Array): void {
    if (!this.live) return;
    if (this.held) {
      this.held.push(chunk);
      return;
    }
    let events: SessionEvent[];
    try {
      events = this.session.receive(chunk);
    } catch (e) {
      this.fail(e);
      return;
    }
    for (const ev of events) {
      if (!this.live) return;
      this.handle(ev);
    }
  }

  private handle(ev: SessionEvent): void {
    switch (ev.type) {
      case 'send':
        this.transport?.send(ev.bytes);
        break;
      case 'ready':
        this.serverName = ev.name;
        this.session.framebuffer!.onError = (e) => this.emit('error', e);
        break;
      case 'updateStart':
        this.rectsInUpdate = 0;
        this.pixelRectsInUpdate = 0;
        break;
      case 'rect': {
        this.rectsInUpdate++;
        if (ENCODINGS.get(ev.rect.encoding)?.pseudo) break;
        this.pixelRectsInUpdate++;
        const { x, y, width, height } = ev.rect;
        const size = this.session.size;
        if (x + width >= size.width && y + height >= size.height && x < size.width && y < size.height) this.cornerRects++;
        break;
      }
      case 'updateEnd': {
        const rects = this.rectsInUpdate;
        const pixels = this.pixelRectsInUpdate > 0;
        const fb = this.session.framebuffer!;
        if (fb.busy) void fb.whenIdle().then(() => this.afterUpdate(rects, pixels));
        else this.afterUpdate(rects, pixels);
        break;
      }
      case 'resize':
        this.emit('resize', { width: ev.width, height: ev.height });
        break;
      case 'bell':
        this.emit('bell');
        break;
      case 'cutText':
        this.emit('cutText', ev.text);
        break;
    }
  }

  /** An update is fully applied: ask for the next one, then tell waiters and listeners. */
  private afterUpdate(rects: number, pixels: boolean): void {
    if (!this.live) return;
    if (pixels) this.pixelUpdates++;
    try {
      this.transport!.send(this.session.updateRequest());
    } catch (e) {
      this.fail(e);
      return;
    }
    for (const w of [...this.waiters]) if (w.check()) w.resolve();
    this.emit('update', { version: this.framebuffer.version, rects });
    if (pixels && !this.planeRefresh) this.planeRefresh = setImmediate(() => this.refreshPlane());
  }

  /**
   * Bring the framebuffer's RGB plane up to date once the event loop is idle after an update, so that a
   * screenshot taken after the screen settled only pays for the PNG encode (~2 ms at 1280x800 saved).
   */
  private refreshPlane(): void {
    this.planeRefresh = null;
    if (this.encoding || !this.live) return;
    this.framebuffer.rgbPlane();
  }

  private fail(e: unknown): void {
    const err =
      e instanceof VncuaError
        ? e
        : new VncuaError('RFB_ERR_PROTOCOL', `internal error while processing the server's data: ${(e as Error)?.message ?? String(e)}; please report it`, { cause: e });
    if (!this.live) return;
    this.moveTo('closing', err);
    this.session.close();
    this.emit('error', err);
    this.rejectWaiters(err);
    this.transport?.destroy();
  }

  private onTransportClose(transportError: Error | null): void {
    if (this.live) {
      // The server (or the network) ended the connection.
      const err = this.session.end();
      const withCause =
        transportError instanceof VncuaError
          ? transportError
          : transportError
            ? new VncuaError(err.code, `${err.message} (${transportError.message})`, { cause: transportError, details: err.details })
            : err;
      this.moveTo('closing', withCause);
      this.emit('error', withCause);
      this.rejectWaiters(withCause);
    }
    this.finish(this.#error);
  }

  private finish(error: VncuaError | null): void {
    if (this.#state === 'closed') return;
    this.moveTo('closed', error);
    if (this.planeRefresh) clearImmediate(this.planeRefresh);
    this.planeRefresh = null;
    this.rejectWaiters(error);
    this.closedResolve();
    this.emit('close', error);
  }
}

/** Turn connectVnc options into session options, validating them (RFB_ERR_BAD_ARGUMENT). */
function sessionOptions(o: ConnectOptions): SessionOptions {
  const names = o.encodings ?? DEFAULT_ENCODINGS;
  if (!Array.isArray(names) || names.length === 0) {
    throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `encodings must be a non-empty array of ${Object.keys(ENCODING_BY_NAME).join(', ')}`, { details: { encodings: names } });
  }
  const encodings = names.map((n) => {
    const id = (ENCODING_BY_NAME as Record<string, number | undefined>)[n as string];
    if (id === undefined) {
      throw new VncuaError('RFB_ERR_BAD_ARGUMENT', `unknown encoding ${JSON.stringify(n)}; use ${Object.keys(ENCODING_BY_NAME).join(', ')}`, { details: { encoding: n } });
    }
    return id;
  });
  if (o.password !== undefined && typeof o.password !== 'string') {
    throw new VncuaError('RFB_ERR_BAD_ARGUMENT', 'password must be a string', { details: { password: typeof o.password } });
  }
  return { encodings, password: o.password, jpegQuality: o.jpegQuality ?? null, compressLevel: o.compressLevel, shared: o.shared, maxVersion: o.maxVersion };
}

/**
 * Connect to a VNC server at `ws://`, `wss://` or `tcp://host:port`. Resolves after ServerInit and the
 * first complete framebuffer update (so the first screenshot is real). Everything must finish within
 * `timeoutMs` (default 10 s). On any failure the socket is closed and nothing is left running.
 */
export async function connectVnc(url: string | URL, options: ConnectOptions = {}): Promise<VncClient> {
  const target = parseVncUrl(url);
  checkTimeout(options.timeoutMs, 'connectVnc');
  const session = new RfbSession(sessionOptions(options));
  const client = new VncClient(target.href, session);
  try {
    await withDeadline(`connecting to ${redactUrl(target.href)}`, options, DEFAULT_TIMEOUT_MS, (signal) => client.start(target, options, signal));
  } catch (e) {
    const err =
      e instanceof VncuaError ? e : new VncuaError('RFB_ERR_CONNECT', `connecting to ${redactUrl(target.href)} failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    client.abortWith(err);
    throw err;
  }
  return client;
}
