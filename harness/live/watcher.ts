/**
 * One watcher's WebSocket (`/rfb`) driven by its LiveRfbSession: the watcher's bytes go to the
 * session, the session's bytes to the socket, a person's input to control.input(who, ...), and the
 * feed's damage to the session. At most one FramebufferUpdate is on its way to a watcher at a time:
 * the next is built only once the previous one has been written to the socket (ws's send callback)
 * and the watcher asked again, so a slow watcher costs the agent one update's memory, not a queue.
 * Updates are built in the endpoint's pacer's frames (./pacer.ts), which bound what watching costs.
 */
import type WebSocket from 'ws';
import { VncuaError, isVncuaError } from '../errors.ts';
import type { Framebuffer } from '../rfb/framebuffer.ts';
import type { LiveControl } from './control.ts';
import type { FramebufferFeed, FeedListener } from './feed.ts';
import type { Rect } from './rfb-server/region.ts';
import { LiveRfbSession, type LiveSessionEvent } from './rfb-server/session.ts';
import type { UpdateCache } from './rfb-server/update-cache.ts';
import type { Paced, UpdatePacer } from './pacer.ts';

/** Bytes already queued on a watcher's socket past which no update is built (only reachable if the socket is stuck). */
const MAX_BUFFERED = 1024 * 1024;

/** WebSocket close codes a watcher can get (the reason starts with the error code). */
export const WATCHER_CLOSE = {
  /** The endpoint is closing (the run ended). */
  GOING_AWAY: 1001,
  /** The watcher's bytes or choices cannot be served (LIVE_ERR_PROTOCOL, LIVE_ERR_PIXEL_FORMAT, LIVE_ERR_RESIZE, LIVE_ERR_NO_FRAMEBUFFER). */
  POLICY: 1008,
  /** An internal error. */
  INTERNAL: 1011,
} as const;

/** A WebSocket close reason (at most 123 bytes of UTF-8): "CODE: message", cut to fit. */
export function closeReason(code: string, message: string): string {
  let text = `${code}: ${message}`;
  while (Buffer.byteLength(text) > 123) text = `${text.slice(0, -2)}…`;
  return text;
}

/** Options of a watcher. */
export interface WatcherOptions {
  who: string;
  viewOnly: boolean;
  /** The RFB desktop name. */
  name: string;
  control: LiveControl;
  feed: FramebufferFeed;
  /** How long ServerInit waits for the run's first framebuffer. */
  holdMs: number;
  /** Called once the socket is closed. */
  onClose: () => void;
  /** Called with the size of each FramebufferUpdate handed to the socket. */
  onUpdate?: (bytes: number) => void;
  /** The endpoint's cache of the last update built (shared by its watchers). */
  cache?: UpdateCache;
  /** The endpoint's pacer: updates are sent in its frames. */
  pacer: UpdatePacer;
}

/** See the file comment. */
export class RfbWatcher implements FeedListener, Paced {
  readonly session: LiveRfbSession;
  private inFlight = false;
  private holdTimer: NodeJS.Timeout | null = null;
  private readonly stopFeed: () => void;
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly opts: WatcherOptions,
  ) {
    this.session = new LiveRfbSession({ name: opts.name, viewOnly: opts.viewOnly, ...(opts.cache ? { cache: opts.cache } : {}) });
    ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    ws.on('close', () => this.onSocketClose());
    ws.on('error', () => {}); // the 'close' that follows ends the watcher
    this.stopFeed = opts.feed.add(this);
    this.guard(() => this.session.start());
    this.guard(() => this.session.attach(opts.feed.current));
  }

  /** Close the socket with `code` and a reason naming the error code. */
  close(code: number, error: VncuaError): void {
    if (this.ended) return;
    this.end();
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code, closeReason(error.code, error.message));
  }

  damage(rects: readonly Rect[]): void {
    for (const r of rects) this.session.damage(r);
  }

  cursor(): void {
    this.session.cursorChanged();
  }

  framebuffer(fb: Framebuffer | null): void {
    this.guard(() => this.session.attach(fb));
    if (this.holdTimer && this.session.state !== 'holdingServerInit') {
      clearTimeout(this.holdTimer);
      this.holdTimer = null;
    }
  }

  /** A request waits and nothing is on its way: ask the pacer for a place in its next frame. */
  flush(): void {
    if (this.canSend()) this.opts.pacer.want(this);
  }

  /** Build and send the update the waiting request can have now (the pacer's frame); true when one was sent. */
  sendUpdate(): boolean {
    if (!this.canSend()) return false;
    this.guard(() => this.session.update(), true);
    return this.inFlight;
  }

  private canSend(): boolean {
    return !this.ended && !this.inFlight && this.session.wantsUpdate && this.ws.bufferedAmount <= MAX_BUFFERED;
  }

  /** Run a session step and carry out its events; an internal error closes this watcher only (never the run). */
  private guard(step: () => LiveSessionEvent[], update = false): void {
    let events: LiveSessionEvent[];
    try {
      events = step();
    } catch (e) {
      const err = isVncuaError(e)
        ? e
        : new VncuaError('LIVE_ERR_ILLEGAL_STATE', `internal error in a watcher's session: ${(e as Error)?.message ?? String(e)}; please report it`, { cause: e });
      this.close(WATCHER_CLOSE.INTERNAL, err);
      return;
    }
    this.handle(events, update);
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.ended) return;
    if (!isBinary) {
      this.close(WATCHER_CLOSE.POLICY, new VncuaError('LIVE_ERR_PROTOCOL', 'the watcher sent a text frame; RFB over WebSocket uses binary frames'));
      return;
    }
    const chunk = Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data;
    this.guard(() => this.session.receive(chunk));
    this.flush();
  }

  /** Carry out the session's events; `update` marks the bytes as a FramebufferUpdate (tracked until written). */
  private handle(events: LiveSessionEvent[], update = false): void {
    for (const e of events) {
      if (this.ended) return;
      switch (e.type) {
        case 'send':
          if (update) {
            this.inFlight = true;
            this.opts.onUpdate?.(e.bytes.length);
            this.ws.send(e.bytes, { binary: true }, () => {
              this.inFlight = false;
              this.flush();
            });
          } else this.ws.send(e.bytes, { binary: true });
          break;
        case 'input':
          try {
            this.opts.control.input(this.opts.who, e.input);
          } catch {
            // A person's input the run cannot take (its connection is gone) is dropped, as control.input() drops input from someone without control.
          }
          break;
        case 'hold':
          this.holdTimer = setTimeout(() => {
            this.holdTimer = null;
            this.guard(() => this.session.holdExpired(this.opts.holdMs));
          }, this.opts.holdMs);
          break;
        case 'close':
          this.close(isVncuaError(e.error, 'LIVE_ERR_ILLEGAL_STATE') ? WATCHER_CLOSE.INTERNAL : WATCHER_CLOSE.POLICY, e.error);
          break;
      }
    }
  }

  private onSocketClose(): void {
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.opts.pacer.forget(this);
    this.stopFeed();
    this.session.close();
    this.opts.onClose();
  }
}
