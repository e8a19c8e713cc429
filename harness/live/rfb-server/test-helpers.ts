/**
 * Test helpers for the live RFB server: an in-memory connection between a LiveRfbSession and vncua's
 * own I/O-free client core (harness/rfb/session.ts), so the server's bytes are read by the real client
 * decoders, with no socket.
 */
import type { VncuaError } from '../../errors.ts';
import { Framebuffer } from '../../rfb/framebuffer.ts';
import { RfbSession, type SessionEvent, type SessionOptions } from '../../rfb/session.ts';
import type { HumanInput } from '../control.ts';
import type { LiveRfbSession, LiveSessionEvent } from './session.ts';

/** Both ends of an in-memory watcher connection. */
export class MemoryPipe {
  readonly client: RfbSession;
  /** Every event the client session reported. */
  readonly clientEvents: SessionEvent[] = [];
  /** The person's input the server passed on. */
  readonly inputs: HumanInput[] = [];
  /** Why the server closed, if it did. */
  closed: VncuaError | null = null;
  /** 'hold' events seen. */
  holds = 0;
  /** FramebufferUpdates the client completed. */
  updates = 0;
  /** Bytes the server sent. */
  serverBytes = 0;
  private toServer: Uint8Array[] = [];
  private toClient: Uint8Array[] = [];

  /** `autoRequest`: the client asks for the next incremental update after each one, as VncClient and noVNC do. */
  constructor(
    readonly server: LiveRfbSession,
    clientOptions: SessionOptions,
    private readonly autoRequest = true,
  ) {
    this.client = new RfbSession(clientOptions);
  }

  /** The client's framebuffer (after ServerInit). */
  get fb(): Framebuffer {
    return this.client.framebuffer!;
  }

  /** Start the server and pass bytes both ways until neither side has more to say. */
  start(): this {
    this.fromServer(this.server.start());
    this.settle();
    return this;
  }

  /** Bytes from the client to the server (e.g. a request the test makes itself), then settle. */
  send(bytes: Uint8Array): void {
    this.toServer.push(bytes);
    this.settle();
  }

  /** Server events (from attach(), update(), holdExpired()) delivered, then settle. */
  deliver(events: LiveSessionEvent[]): void {
    this.fromServer(events);
    this.settle();
  }

  /** Pass bytes both ways, asking the server for updates, until nothing moves. */
  settle(): void {
    for (let rounds = 0; rounds < 10_000; rounds++) {
      const c = this.toClient.shift();
      if (c) {
        this.serverBytes += c.length;
        for (const e of this.client.receive(c)) {
          this.clientEvents.push(e);
          if (e.type === 'send') this.toServer.push(e.bytes);
          if (e.type === 'updateEnd') {
            this.updates++;
            if (this.autoRequest) this.toServer.push(this.client.updateRequest());
          }
        }
        continue;
      }
      const s = this.toServer.shift();
      if (s) {
        this.fromServer(this.server.receive(s));
        continue;
      }
      const u = this.server.update();
      if (u.length === 0) return;
      this.fromServer(u);
    }
    throw new Error('the in-memory connection never settled');
  }

  private fromServer(events: LiveSessionEvent[]): void {
    for (const e of events) {
      if (e.type === 'send') this.toClient.push(e.bytes);
      else if (e.type === 'input') this.inputs.push(e.input);
      else if (e.type === 'hold') this.holds++;
      else this.closed = e.error;
    }
  }
}

/** A framebuffer of `width` x `height` filled with a pattern that differs at every pixel of a row and column. */
export function patternFramebuffer(width: number, height: number, seed = 0): Framebuffer {
  const fb = new Framebuffer(width, height);
  const px = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      px[o] = (x * 7 + seed) & 255;
      px[o + 1] = (y * 13 + seed) & 255;
      px[o + 2] = (x * y + seed * 3) & 255;
    }
  }
  fb.blit(0, 0, width, height, px, 0, width * 3, 3);
  return fb;
}

/** Fail naming the first pixel where `a` and `b` differ in RGB (alpha is not compared). */
export function expectSamePixels(a: Framebuffer, b: Framebuffer): void {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`sizes differ: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  for (let i = 0; i < a.data.length; i += 4) {
    if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) {
      const p = i / 4;
      throw new Error(
        `pixel (${p % a.width},${Math.floor(p / a.width)}) differs: ${[...a.pixel(p % a.width, Math.floor(p / a.width))]} vs ${[...b.pixel(p % a.width, Math.floor(p / a.width))]}`,
      );
    }
  }
}
