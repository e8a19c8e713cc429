/**
 * An in-process fake RFB desktop for tests of the logic above the RFB client (agents, guards,
 * waits) that need no X server: a real RFB 3.8 server on 127.0.0.1 (OS-assigned ports), over plain
 * TCP and WebSocket at once, with security None (or VNC Authentication when given a password).
 *
 * The screen is an RGB framebuffer the test paints (`fill`, `paint`); the server honours
 * SetPixelFormat (any true-colour format), records SetEncodings, and answers every
 * FramebufferUpdateRequest with Raw rectangles: a non-incremental one at once with the region asked
 * for (what VncClient.sync() relies on), an incremental one with what changed since the last update,
 * waiting for the next change when nothing did, as real servers do. Every KeyEvent and PointerEvent
 * is recorded in order (`events`) and handed to `onInput`, which may repaint the screen: the update
 * goes out before the server reads the client's next message, so a round trip after the input sees it.
 */
import { randomBytes } from 'node:crypto';
import { vncAuthResponse } from '../des.ts';
import type { PixelFormat } from '../client-messages.ts';
import { ClientStreamParser, type ClientMessage } from '../client-stream.ts';
import { fakeTcpServer, fakeWsServer, type FakeServer, type ScriptedConnection } from './fake-server.ts';
import { SERVER_PIXEL_FORMAT, framebufferUpdate, rawRect, securityResult, securityTypes, serverInit, serverVersion, vncChallenge, type Rgb } from './server-stream.ts';

export type { Rgb };

/** An input event the fake desktop received (in the order it read them). */
export type FakeInputEvent = { kind: 'pointer'; x: number; y: number; mask: number } | { kind: 'key'; keysym: number; down: boolean };

/** Options of startFakeDesktop(). */
export interface FakeDesktopOptions {
  /** Screen size (default 320x240). */
  width?: number;
  height?: number;
  /** Desktop name in ServerInit (default 'fake desktop'). */
  name?: string;
  /** Require VNC Authentication with this password (default: security None). */
  password?: string;
  /** Initial colour of the whole screen (default black). */
  background?: Rgb;
  /** Called for every key and pointer event, after it is recorded; may paint. */
  onInput?: (event: FakeInputEvent, desktop: FakeDesktop) => void;
}

/** A running fake desktop. */
export interface FakeDesktop {
  /** tcp://127.0.0.1:port */
  readonly tcpUrl: string;
  /** ws://127.0.0.1:port/websockify */
  readonly wsUrl: string;
  /** The URL to give an Agent or connectVnc (tcpUrl). */
  readonly vncUrl: string;
  readonly width: number;
  readonly height: number;
  /** Every key and pointer event received, over all connections, in order. */
  readonly events: FakeInputEvent[];
  /** The encodings the last client advertised (SetEncodings). */
  readonly encodings: readonly number[];
  /** Clients that completed the handshake (ServerInit sent) so far. */
  readonly connections: number;
  /** Called for every key and pointer event, after it is recorded; may paint. */
  onInput: ((event: FakeInputEvent, desktop: FakeDesktop) => void) | null;
  /** Paint the whole screen one colour. */
  fill(rgb: Rgb): void;
  /** Paint a rectangle (clipped to the screen) one colour. */
  paint(x: number, y: number, width: number, height: number, rgb: Rgb): void;
  /** The colour of one pixel. */
  pixel(x: number, y: number): Rgb;
  /** Disconnect every client and stop listening. */
  close(): Promise<void>;
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

const intersect = (a: Box, b: Box): Box | null => {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const width = Math.min(a.x + a.width, b.x + b.width) - x;
  const height = Math.min(a.y + a.height, b.y + b.height) - y;
  return width > 0 && height > 0 ? { x, y, width, height } : null;
};

const union = (a: Box | null, b: Box): Box => {
  if (!a) return b;
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return { x, y, width: Math.max(a.x + a.width, b.x + b.width) - x, height: Math.max(a.y + a.height, b.y + b.height) - y };
};

/** One client connection after its handshake: its pixel format, pending incremental request and changes not yet sent. */
class Viewer {
  format: PixelFormat = SERVER_PIXEL_FORMAT;
  /** An incremental request waiting for a change. */
  pending: Box | null = null;
  /** Bounding box of what changed since the last update sent. */
  dirty: Box | null = null;

  constructor(
    readonly c: ScriptedConnection,
    private readonly colour: (x: number, y: number) => Rgb,
  ) {}

  /** Send one Raw rectangle of the current screen. */
  send(box: Box): void {
    this.c.write(framebufferUpdate([rawRect(box.x, box.y, box.width, box.height, (px, py) => this.colour(box.x + px, box.y + py), this.format)]));
  }

  /** Answer the pending incremental request if something it covers changed. */
  flush(): void {
    if (!this.pending || !this.dirty) return;
    const box = intersect(this.pending, this.dirty);
    if (!box) return;
    this.pending = null;
    this.dirty = null;
    this.send(box);
  }
}

/** Start a fake desktop listening on TCP and WebSocket; close() it when done. */
export async function startFakeDesktop(options: FakeDesktopOptions = {}): Promise<FakeDesktop> {
  const width = options.width ?? 320;
  const height = options.height ?? 240;
  const screen: Box = { x: 0, y: 0, width, height };
  const rgb = new Uint8Array(width * height * 3);
  const viewers = new Set<Viewer>();
  const colour = (x: number, y: number): Rgb => {
    const i = (y * width + x) * 3;
    return [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
  };
  let encodings: readonly number[] = [];
  let connections = 0;

  const paint = (x: number, y: number, w: number, h: number, [r, g, b]: Rgb): void => {
    const box = intersect({ x, y, width: w, height: h }, screen);
    if (!box) return;
    for (let py = box.y; py < box.y + box.height; py++) {
      for (let px = box.x; px < box.x + box.width; px++) {
        const i = (py * width + px) * 3;
        rgb[i] = r;
        rgb[i + 1] = g;
        rgb[i + 2] = b;
      }
    }
    for (const v of viewers) {
      v.dirty = union(v.dirty, box);
      v.flush();
    }
  };

  /** Serve one connection: the handshake, then client messages until it hangs up. */
  const serve = async (c: ScriptedConnection): Promise<void> => {
    const parser = new ClientStreamParser();
    // The raw stream up to the VNC Authentication response (version 12 bytes, security type 1, response 16): the parser does not keep it.
    let head = new Uint8Array(0);
    const challenge = randomBytes(16);
    let viewer: Viewer | null = null;
    const handle = (m: ClientMessage): boolean => {
      switch (m.kind) {
        case 'version':
          if (m.version !== '003.008') return false; // this fake speaks 3.8 only
          c.write(securityTypes([options.password === undefined ? 1 : 2]));
          return true;
        case 'security':
          if (m.type !== (options.password === undefined ? 1 : 2)) return false;
          c.write(m.type === 2 ? vncChallenge(challenge) : securityResult('ok'));
          return true;
        case 'authResponse': {
          const ok = Buffer.from(head.subarray(13, 29)).equals(Buffer.from(vncAuthResponse(options.password!, challenge)));
          c.write(securityResult(ok ? 'ok' : { failed: 'Authentication failed' }));
          return ok;
        }
        case 'clientInit':
          c.write(serverInit({ width, height, name: options.name ?? 'fake desktop' }));
          viewer = new Viewer(c, colour);
          viewers.add(viewer);
          connections++;
          return true;
        case 'pixelFormat':
          if (!m.format.trueColour || ![8, 16, 32].includes(m.format.bitsPerPixel)) return false;
          viewer!.format = m.format;
          return true;
        case 'encodings':
          encodings = m.encodings;
          return true;
        case 'updateRequest': {
          const box = intersect(m, screen);
          if (!m.incremental) {
            if (box) viewer!.send(box);
            else viewer!.c.write(framebufferUpdate([]));
          } else if (box) {
            viewer!.pending = box;
            viewer!.flush();
          }
          return true;
        }
        case 'pointer':
        case 'key': {
          const event: FakeInputEvent = m.kind === 'pointer' ? { kind: 'pointer', x: m.x, y: m.y, mask: m.mask } : { kind: 'key', keysym: m.keysym, down: m.down };
          desktop.events.push(event);
          desktop.onInput?.(event, desktop);
          return true;
        }
        default:
          return true; // ClientCutText and the extensions: read and ignored
      }
    };
    c.write(serverVersion('3.8'));
    try {
      for (;;) {
        const chunk = await c.readAny();
        if (head.length < 29) head = Buffer.concat([head, chunk.subarray(0, 29 - head.length)]);
        for (const m of parser.push(chunk, Date.now())) {
          if (!handle(m)) {
            c.end();
            return;
          }
        }
        if (parser.failed) throw parser.error;
      }
    } finally {
      if (viewer) viewers.delete(viewer);
    }
  };

  const [tcp, ws]: [FakeServer, FakeServer] = await Promise.all([fakeTcpServer(serve), fakeWsServer(serve)]);
  const desktop: FakeDesktop = {
    tcpUrl: tcp.url,
    wsUrl: ws.url,
    vncUrl: tcp.url,
    width,
    height,
    events: [],
    get encodings() {
      return encodings;
    },
    get connections() {
      return connections;
    },
    onInput: options.onInput ?? null,
    fill: (c) => paint(0, 0, width, height, c),
    paint,
    pixel: colour,
    close: async () => {
      await Promise.all([tcp.close(), ws.close()]);
    },
  };
  if (options.background) desktop.fill(options.background);
  return desktop;
}
