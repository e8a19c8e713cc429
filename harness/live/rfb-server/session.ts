/**
 * One watcher's RFB server session, free of I/O: the watcher's bytes go in through receive(), the
 * agent's framebuffer through attach(), damage() and cursorChanged(), and what to do comes out as
 * events (bytes to send, a person's input, "hold ServerInit", close with an error). The endpoint's
 * watcher (harness/live/watcher.ts) does the sockets and timers.
 *
 *   new ─► awaitingVersion ─┬─► awaitingSecurity (3.7, 3.8) ─► awaitingClientInit
 *                           └─► awaitingClientInit (3.3: the server picks None)
 *   awaitingClientInit ─┬─► serving (a framebuffer exists: ServerInit at once)
 *                       └─► holdingServerInit ─► serving (ServerInit once attach() gives one)
 *   any state ─► closed
 *
 * Every state change goes through moveTo(); a move its table does not list throws LIVE_ERR_ILLEGAL_STATE.
 *
 * Updates follow the request/response flow: an update request is answered once there is something to
 * send (the dirty region inside the requested area, a new cursor, a new size), or at once with whatever
 * there is when it was non-incremental; so a watcher never has more than one update on its way. Pixels
 * go as Hextile when the watcher lists it (./hextile.ts), else Raw.
 */
import { VncuaError } from '../../errors.ts';
import { type ClientMessage, ClientStreamParser } from '../../rfb/client-stream.ts';
import { ENC } from '../../rfb/encodings/types.ts';
import type { HumanInput } from '../control.ts';
import {
  type PixelSource,
  SECURITY_NONE,
  type UpdateRect,
  writeFramebufferUpdate,
  writeSecurityFailure,
  writeSecurityOk,
  writeSecurityType33,
  writeSecurityTypes,
  writeServerInit,
  writeServerVersion,
} from './messages.ts';
import { type PixelWriter, SERVER_PIXEL_FORMAT, pixelWriter } from './pixel-format.ts';
import { DirtyRegion, MAX_REGION_RECTS, type Rect, intersect, union } from './region.ts';
import { UpdateCache } from './update-cache.ts';

/** Where a watcher's session is. `closed` is final. */
export type LiveSessionState = 'new' | 'awaitingVersion' | 'awaitingSecurity' | 'awaitingClientInit' | 'holdingServerInit' | 'serving' | 'closed';

/** Allowed moves, from each state. */
const MOVES: Readonly<Record<LiveSessionState, readonly LiveSessionState[]>> = {
  new: ['awaitingVersion', 'closed'],
  awaitingVersion: ['awaitingSecurity', 'awaitingClientInit', 'closed'],
  awaitingSecurity: ['awaitingClientInit', 'closed'],
  awaitingClientInit: ['holdingServerInit', 'serving', 'closed'],
  holdingServerInit: ['serving', 'closed'],
  serving: ['closed'],
  closed: [],
};

/** What the session asks its owner to do, in order. */
export type LiveSessionEvent =
  /** Send these bytes to the watcher. */
  | { type: 'send'; bytes: Uint8Array }
  /** A person's pointer or key event (never emitted for a view-only watcher). */
  | { type: 'input'; input: HumanInput }
  /** ServerInit waits for a framebuffer: call attach() when one exists, holdExpired() if none comes in time. */
  | { type: 'hold' }
  /** Close the connection (after sending what came before): `error` says why. */
  | { type: 'close'; error: VncuaError };

/** Longest ClientCutText a watcher may send (it is read and dropped: the run has no clipboard to give it to). */
export const MAX_WATCHER_CUT_TEXT = 1024 * 1024;

/** Options of a session. */
export interface LiveSessionOptions {
  /** The desktop name in ServerInit. */
  name: string;
  /** Drop the watcher's pointer and key events. */
  viewOnly: boolean;
  /** Bound on the dirty region's rectangles (default MAX_REGION_RECTS). */
  maxRects?: number;
  /** The endpoint's cache of the last update built, shared by its sessions (default: one of its own). */
  cache?: UpdateCache;
}

/** One watcher's RFB server (see the file comment). */
export class LiveRfbSession {
  #state: LiveSessionState = 'new';
  private readonly parser = new ClientStreamParser({
    maxCutText: MAX_WATCHER_CUT_TEXT,
    error: (problem, offset) => new VncuaError('LIVE_ERR_PROTOCOL', `the watcher's RFB stream cannot be read at byte ${offset}: ${problem}`, { details: { offset } }),
  });
  /** The negotiated minor version: 3, 7 or 8. */
  private minor = 8;
  /** The framebuffer pixels come from (the last one attached: after the agent's connection ends, its last picture). */
  private fb: PixelSource | null = null;
  /** The size the watcher was told (ServerInit, then each DesktopSize). */
  private size = { width: 0, height: 0 };
  private pixels: PixelWriter = pixelWriter(SERVER_PIXEL_FORMAT);
  private encodings = new Set<number>();
  private readonly dirty: DirtyRegion;
  /** An update request waits for its answer; `requestArea` is what the waiting requests cover (null: nothing inside the screen). */
  private requestPending = false;
  private requestArea: Rect | null = null;
  /** A non-incremental request waits: it is answered even when nothing changed. */
  private mustAnswer = false;
  /** The cursor shape changed since the watcher last got it. */
  private cursorPending = false;
  /** Pointer and key events dropped because the watcher is view-only. */
  droppedInput = 0;

  private readonly cache: UpdateCache;

  constructor(private readonly opts: LiveSessionOptions) {
    this.dirty = new DirtyRegion(opts.maxRects ?? MAX_REGION_RECTS);
    this.cache = opts.cache ?? new UpdateCache();
  }

  /** Where the session is. */
  get state(): LiveSessionState {
    return this.#state;
  }

  /** True once the session has ended. */
  get closed(): boolean {
    return this.#state === 'closed';
  }

  /** True while an update request waits for something to send. */
  get wantsUpdate(): boolean {
    return this.#state === 'serving' && this.requestPending;
  }

  /** The encodings the watcher listed in its last SetEncodings. */
  get listedEncodings(): ReadonlySet<number> {
    return this.encodings;
  }

  /** The one transition function. */
  private moveTo(to: LiveSessionState): void {
    const from = this.#state;
    if (!MOVES[from].includes(to)) {
      throw new VncuaError('LIVE_ERR_ILLEGAL_STATE', `internal: a watcher's RFB session cannot go from '${from}' to '${to}'`, { details: { from, to } });
    }
    this.#state = to;
  }

  /** Begin: the server speaks first, with its ProtocolVersion. */
  start(): LiveSessionEvent[] {
    this.moveTo('awaitingVersion');
    return [{ type: 'send', bytes: writeServerVersion() }];
  }

  /** Bytes from the watcher, in any chunking; returns what to do. */
  receive(bytes: Uint8Array): LiveSessionEvent[] {
    if (this.closed) return [];
    const out: LiveSessionEvent[] = [];
    for (const m of this.parser.push(bytes, 0)) {
      this.handle(m, out);
      if (this.closed) return out;
    }
    if (this.parser.error) out.push(this.fail(this.parser.error));
    return out;
  }

  /** The agent's framebuffer now (a new one after a re-connection); null keeps the last picture. */
  attach(fb: PixelSource | null): LiveSessionEvent[] {
    if (!fb || this.#state === 'closed') return [];
    const previous = this.fb;
    this.fb = fb;
    if (this.#state === 'holdingServerInit') return this.serverInit();
    if (this.#state === 'serving' && previous !== fb) {
      this.dirty.add(0, 0, fb.width, fb.height);
      this.cursorChanged();
    }
    return [];
  }

  /** The rectangle changed on the framebuffer. */
  damage(r: Rect): void {
    if (this.#state === 'serving') this.dirty.add(r.x, r.y, r.w, r.h);
  }

  /** The framebuffer's cursor shape changed. */
  cursorChanged(): void {
    if (this.encodings.has(ENC.CURSOR) && this.fb) this.cursorPending = true;
  }

  /** No framebuffer came while ServerInit was held: close with LIVE_ERR_NO_FRAMEBUFFER. */
  holdExpired(waitedMs: number): LiveSessionEvent[] {
    if (this.#state !== 'holdingServerInit') return [];
    return [
      this.fail(
        new VncuaError('LIVE_ERR_NO_FRAMEBUFFER', `the run had no VNC connection within ${waitedMs} ms, so there is no picture to show yet; connect again once its desktop is up`, {
          details: { waitedMs },
        }),
      ),
    ];
  }

  /** The update to send now, if a request waits and there is something to answer it with. */
  update(): LiveSessionEvent[] {
    const fb = this.fb;
    if (!this.wantsUpdate || !fb) return [];
    const rects: UpdateRect[] = [];
    if (fb.width !== this.size.width || fb.height !== this.size.height) {
      if (!this.encodings.has(ENC.DESKTOP_SIZE)) {
        return [
          this.fail(
            new VncuaError(
              'LIVE_ERR_RESIZE',
              `the desktop is now ${fb.width}x${fb.height} (it was ${this.size.width}x${this.size.height}) and this watcher did not list the DesktopSize pseudo-encoding, so it cannot follow; connect again`,
              { details: { from: { ...this.size }, to: { width: fb.width, height: fb.height } } },
            ),
          ),
        ];
      }
      this.size = { width: fb.width, height: fb.height };
      rects.push({ kind: 'desktopSize', width: fb.width, height: fb.height });
      this.dirty.clear();
      this.dirty.add(0, 0, fb.width, fb.height);
      this.requestArea = { x: 0, y: 0, w: fb.width, h: fb.height };
    }
    this.dirty.clip(this.size.width, this.size.height);
    if (this.cursorPending) rects.push({ kind: 'cursor', shape: fb.cursorShape });
    // Hextile when the watcher takes it (noVNC and vncua's client do): flat areas shrink to a byte a tile.
    const kind = this.encodings.has(ENC.HEXTILE) ? 'hextile' : 'raw';
    if (this.requestArea) for (const r of this.dirty.take(this.requestArea)) rects.push({ kind, ...r });
    if (rects.length === 0 && !this.mustAnswer) return [];
    this.requestPending = false;
    this.requestArea = null;
    this.mustAnswer = false;
    this.cursorPending = false;
    const pixels = this.pixels;
    return [{ type: 'send', bytes: this.cache.get(rects, fb, pixels, () => writeFramebufferUpdate(rects, fb, pixels)) }];
  }

  /** The connection is going away (the endpoint closes, or the socket closed). */
  close(): void {
    if (this.#state !== 'closed') this.moveTo('closed');
  }

  private fail(error: VncuaError): LiveSessionEvent {
    this.close();
    return { type: 'close', error };
  }

  private serverInit(): LiveSessionEvent[] {
    const fb = this.fb!;
    this.size = { width: fb.width, height: fb.height };
    this.moveTo('serving');
    return [{ type: 'send', bytes: writeServerInit(fb.width, fb.height, SERVER_PIXEL_FORMAT, this.opts.name) }];
  }

  private handle(m: ClientMessage, out: LiveSessionEvent[]): void {
    switch (m.kind) {
      case 'version':
        this.onVersion(m.version, out);
        return;
      case 'security':
        this.onSecurity(m.type, out);
        return;
      case 'clientInit':
        if (this.fb) out.push(...this.serverInit());
        else {
          this.moveTo('holdingServerInit');
          out.push({ type: 'hold' });
        }
        return;
      case 'pixelFormat':
        try {
          this.pixels = pixelWriter(m.format);
        } catch (e) {
          out.push(this.fail(e as VncuaError));
        }
        return;
      case 'encodings':
        this.encodings = new Set(m.encodings);
        // A watcher that now takes cursor shapes gets the current one (if there is one) with its next update.
        this.cursorPending = this.encodings.has(ENC.CURSOR) && this.fb?.cursorShape != null;
        return;
      case 'updateRequest':
        this.onUpdateRequest(m.incremental, { x: m.x, y: m.y, w: m.width, h: m.height });
        return;
      case 'pointer':
      case 'key':
        if (this.#state !== 'serving') return;
        if (this.opts.viewOnly) this.droppedInput++;
        else
          out.push({
            type: 'input',
            input: m.kind === 'pointer' ? { type: 'pointer', x: m.x, y: m.y, buttonMask: m.mask } : { type: 'key', keysym: m.keysym, down: m.down },
          });
        return;
      default:
        // ClientCutText (the run has no clipboard to give it to), and extensions never announced: read and dropped.
        return;
    }
  }

  private onVersion(version: string, out: LiveSessionEvent[]): void {
    const [major, minor] = version.split('.').map(Number) as [number, number];
    if (major < 3 || (major === 3 && minor < 3)) {
      out.push(this.fail(new VncuaError('LIVE_ERR_PROTOCOL', `the watcher speaks RFB ${major}.${minor}; the live endpoint speaks 3.3 to 3.8`, { details: { version } })));
      return;
    }
    this.minor = major > 3 || minor >= 8 ? 8 : minor === 7 ? 7 : 3;
    if (this.minor === 3) {
      out.push({ type: 'send', bytes: writeSecurityType33(SECURITY_NONE) });
      this.moveTo('awaitingClientInit');
    } else {
      out.push({ type: 'send', bytes: writeSecurityTypes([SECURITY_NONE]) });
      this.moveTo('awaitingSecurity');
    }
  }

  private onSecurity(type: number, out: LiveSessionEvent[]): void {
    if (type !== SECURITY_NONE) {
      const reason = `the live endpoint offers only security type 1 (None; its URL's token guards it), but the watcher chose ${type}`;
      if (this.minor === 8) out.push({ type: 'send', bytes: writeSecurityFailure(reason) });
      out.push(this.fail(new VncuaError('LIVE_ERR_PROTOCOL', reason, { details: { chosen: type } })));
      return;
    }
    if (this.minor === 8) out.push({ type: 'send', bytes: writeSecurityOk() });
    this.moveTo('awaitingClientInit');
  }

  private onUpdateRequest(incremental: boolean, asked: Rect): void {
    if (this.#state !== 'serving') return;
    const inside = intersect(asked, { x: 0, y: 0, w: this.size.width, h: this.size.height });
    if (!incremental) {
      this.mustAnswer = true;
      if (inside) this.dirty.add(inside.x, inside.y, inside.w, inside.h);
    }
    if (inside) this.requestArea = this.requestArea ? union(this.requestArea, inside) : inside;
    this.requestPending = true;
  }
}
