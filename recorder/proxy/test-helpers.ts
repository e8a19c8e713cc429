/**
 * Test helpers for the recording proxy: read a recording back and check its time index, parse
 * the recorded client stream into messages, and a raw RFB client over TCP that keeps every byte
 * it sent and received (to compare with what the proxy recorded).
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { expect } from 'vitest';
import WebSocket from 'ws';
import { cdpEvaluate, eventually } from '../../harness/desktop/test-helpers.ts';
import { connectVnc } from '../../harness/rfb/index.ts';
import { now } from '../../harness/trace/clock.ts';
import { MANIFEST_FILE, type Direction, type Manifest, type TimeRecord, parseTimeIndex, streamFileName } from './format.ts';

/** One recorded direction read back. */
export interface RecordedStream {
  bytes: Buffer;
  records: TimeRecord[];
  /** Bytes of an incomplete last record. */
  trailing: number;
}

/** recording.json of `dir`. */
export function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
}

/** Read one direction of connection `index`. */
export function readStream(dir: string, direction: Direction, index = 0): RecordedStream {
  const bytes = readFileSync(join(dir, streamFileName(direction, index, 'rfb')));
  const { records, trailing } = parseTimeIndex(readFileSync(join(dir, streamFileName(direction, index, 'time'))));
  return { bytes, records, trailing };
}

/**
 * The index is sound: whole records, timestamps never go back, lengths strictly grow (one record
 * per non-empty chunk) and never point past the data; `complete`: the last one ends at the file's end.
 */
export function expectSoundIndex(s: RecordedStream, opts: { complete: boolean; fromMs?: number; toMs?: number }): void {
  expect(s.trailing).toBe(0);
  let prevT = -Infinity;
  let prevEnd = 0;
  for (const r of s.records) {
    expect(r.t).toBeGreaterThanOrEqual(prevT);
    expect(r.end).toBeGreaterThan(prevEnd);
    prevT = r.t;
    prevEnd = r.end;
  }
  expect(prevEnd).toBeLessThanOrEqual(s.bytes.length);
  if (opts.complete) expect(prevEnd).toBe(s.bytes.length);
  if (s.records.length > 0) {
    if (opts.fromMs !== undefined) expect(s.records[0]!.t).toBeGreaterThanOrEqual(opts.fromMs);
    if (opts.toMs !== undefined) expect(s.records.at(-1)!.t).toBeLessThanOrEqual(opts.toMs);
  }
}

/** The time record of the chunk holding byte `offset` of the stream. */
export function recordAt(s: RecordedStream, offset: number): TimeRecord {
  const r = s.records.find((rec) => rec.end > offset);
  if (!r) throw new Error(`no time record covers byte ${offset} (stream has ${s.bytes.length} bytes)`);
  return r;
}

/** A client message found in the recorded client stream, with its byte offset. */
export type ClientMessage =
  | { type: 'SetPixelFormat'; offset: number }
  | { type: 'SetEncodings'; offset: number; encodings: number[] }
  | { type: 'FramebufferUpdateRequest'; offset: number; incremental: boolean; x: number; y: number; width: number; height: number }
  | { type: 'KeyEvent'; offset: number; down: boolean; keysym: number }
  | { type: 'PointerEvent'; offset: number; buttonMask: number; x: number; y: number }
  | { type: 'ClientCutText'; offset: number; text: string };

/**
 * Parses a whole recorded client stream (security type None or VNC Authentication, RFB 3.7/3.8):
 *   ProtocolVersion        12 bytes "RFB 003.00x\n"
 *   security type          U8 (3.7+)                 [+ 16-byte DES response for type 2]
 *   ClientInit             U8 shared-flag
 * then client messages (RFC 6143 §7.5), each starting with U8 message-type:
 *   0 SetPixelFormat         U8 0, 3 pad, PIXEL_FORMAT(16)                      = 20 bytes
 *   2 SetEncodings           U8 2, 1 pad, U16 n, S32 encoding[n]                = 4 + 4n
 *   3 FramebufferUpdateReq.  U8 3, U8 incremental, U16 x, y, width, height      = 10 bytes
 *   4 KeyEvent               U8 4, U8 down, 2 pad, U32 keysym                   = 8 bytes
 *   5 PointerEvent           U8 5, U8 button-mask, U16 x, U16 y                 = 6 bytes
 *   6 ClientCutText          U8 6, 3 pad, U32 length, U8 text[length]
 * A message cut off at the end of the stream is left out.
 */
export function parseClientStream(bytes: Uint8Array): { version: string; securityType: number; messages: ClientMessage[] } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = b.subarray(0, 12).toString('latin1');
  if (!/^RFB 003\.00[78]\n$/.test(version)) throw new Error(`client stream does not start with a 3.7/3.8 ProtocolVersion: ${JSON.stringify(version)}`);
  const securityType = b[12]!;
  let o = 13 + (securityType === 2 ? 16 : 0) + 1;
  const messages: ClientMessage[] = [];
  while (o < b.length) {
    const type = b[o]!;
    const need = (n: number) => o + n <= b.length;
    if (type === 0) {
      if (!need(20)) break;
      messages.push({ type: 'SetPixelFormat', offset: o });
      o += 20;
    } else if (type === 2) {
      if (!need(4)) break;
      const n = b.readUInt16BE(o + 2);
      if (!need(4 + 4 * n)) break;
      const encodings: number[] = [];
      for (let i = 0; i < n; i++) encodings.push(b.readInt32BE(o + 4 + 4 * i));
      messages.push({ type: 'SetEncodings', offset: o, encodings });
      o += 4 + 4 * n;
    } else if (type === 3) {
      if (!need(10)) break;
      messages.push({
        type: 'FramebufferUpdateRequest',
        offset: o,
        incremental: b[o + 1] !== 0,
        x: b.readUInt16BE(o + 2),
        y: b.readUInt16BE(o + 4),
        width: b.readUInt16BE(o + 6),
        height: b.readUInt16BE(o + 8),
      });
      o += 10;
    } else if (type === 4) {
      if (!need(8)) break;
      messages.push({ type: 'KeyEvent', offset: o, down: b[o + 1] !== 0, keysym: b.readUInt32BE(o + 4) });
      o += 8;
    } else if (type === 5) {
      if (!need(6)) break;
      messages.push({ type: 'PointerEvent', offset: o, buttonMask: b[o + 1]!, x: b.readUInt16BE(o + 2), y: b.readUInt16BE(o + 4) });
      o += 6;
    } else if (type === 6) {
      if (!need(8)) break;
      const n = b.readUInt32BE(o + 4);
      if (!need(8 + n)) break;
      messages.push({ type: 'ClientCutText', offset: o, text: b.subarray(o + 8, o + 8 + n).toString('latin1') });
      o += 8 + n;
    } else {
      throw new Error(`unknown client message type ${type} at offset ${o}`);
    }
  }
  return { version, securityType, messages };
}

/** A minimal RFB 3.8 client over TCP (security None, raw encoding) that keeps every byte it sent and received. */
export class RawRfbClient {
  readonly received: Buffer[] = [];
  readonly sent: Buffer[] = [];
  width = 0;
  height = 0;
  private buf: Buffer = Buffer.alloc(0);
  private handshaking = true;
  private waiter: (() => void) | null = null;
  private ended: Error | null = null;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (c: Buffer) => {
      this.received.push(c);
      if (this.handshaking) this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
      this.waiter?.();
    });
    socket.on('error', () => {});
    this.closed = new Promise((r) =>
      socket.once('close', () => {
        this.ended = new Error('socket closed');
        this.waiter?.();
        r();
      }),
    );
  }

  /** Connect to tcp://host:port and run the handshake up to ServerInit (then SetEncodings Raw). */
  static async connect(url: string): Promise<RawRfbClient> {
    const u = new URL(url);
    const socket = net.connect({ host: u.hostname, port: Number(u.port) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const c = new RawRfbClient(socket);
    await c.take(12);
    c.send(Buffer.from('RFB 003.008\n', 'latin1'));
    const n = (await c.take(1))[0]!;
    const types = [...(await c.take(n))];
    if (!types.includes(1)) throw new Error(`server offers no security type None: ${types.join(',')}`);
    c.send(Buffer.from([1]));
    const result = (await c.take(4)).readUInt32BE(0);
    if (result !== 0) throw new Error('security handshake failed');
    c.send(Buffer.from([1])); // ClientInit, shared
    const init = await c.take(24);
    c.width = init.readUInt16BE(0);
    c.height = init.readUInt16BE(2);
    await c.take(init.readUInt32BE(20));
    const enc = Buffer.alloc(8);
    enc.writeUInt8(2, 0);
    enc.writeUInt16BE(1, 2);
    enc.writeInt32BE(0, 4); // Raw
    c.send(enc);
    c.handshaking = false;
    return c;
  }

  /** Ask for the whole screen again (non-incremental). */
  requestFullFrame(): void {
    const m = Buffer.alloc(10);
    m.writeUInt8(3, 0);
    m.writeUInt8(0, 1);
    m.writeUInt16BE(this.width, 6);
    m.writeUInt16BE(this.height, 8);
    this.send(m);
  }

  /** Send a PointerEvent. */
  pointer(x: number, y: number, buttonMask: number): void {
    const m = Buffer.alloc(6);
    m.writeUInt8(5, 0);
    m.writeUInt8(buttonMask, 1);
    m.writeUInt16BE(x, 2);
    m.writeUInt16BE(y, 4);
    this.send(m);
  }

  /** Everything received so far, in one buffer. */
  receivedBytes(): Buffer {
    return Buffer.concat(this.received);
  }

  /** Everything sent so far, in one buffer. */
  sentBytes(): Buffer {
    return Buffer.concat(this.sent);
  }

  /** Resolves once at least `n` bytes have been received in total. */
  async waitReceived(n: number, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.reduce((s, c) => s + c.length, 0) < n) {
      if (this.ended) throw this.ended;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} received bytes`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }

  private send(b: Buffer): void {
    this.sent.push(b);
    this.socket.write(b);
  }

  private async take(n: number): Promise<Buffer> {
    const deadline = Date.now() + 15_000;
    while (this.buf.length < n) {
      if (this.ended) throw this.ended;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} bytes`);
      await new Promise<void>((r) => {
        this.waiter = r;
        setTimeout(r, 50);
      });
      this.waiter = null;
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
}

/** A static page that fills the screen with a pattern and logs clicks as window.clicks ([x, y] pairs). */
export const CLICK_PAGE = `<!doctype html><html><body style="margin:0;overflow:hidden">
<div style="position:fixed;inset:0;background:repeating-linear-gradient(45deg,#234 0 17px,#fc3 17px 31px,#3a9 31px 40px)"></div>
<script>window.clicks=[];document.addEventListener('click',e=>window.clicks.push([e.clientX,e.clientY]));</script>
</body></html>`;

/**
 * One viewer session through a running proxy against a real desktop: connect our client through
 * `viewerUrl` (the proxy's tcp:// or ws://), compare its picture with a client connected straight
 * to `upstream`, take a screenshot, click at `at` and see the page get it, close; then check the
 * recording of connection `index`: the server stream starts with the server's own greeting, the
 * client stream holds the PointerEvents sent (stamped between clock readings taken around them),
 * and both time indexes are sound, complete and inside the session's time span.
 */
export async function checkSessionThroughProxy(opts: {
  viewerUrl: string;
  upstream: string;
  dir: string;
  index: number;
  cdpUrl: string;
  at: { x: number; y: number };
}): Promise<void> {
  const { dir, index, at } = opts;
  const greeting = await serverGreeting(opts.upstream);
  const direct = await connectVnc(opts.upstream);
  const t0 = now();
  const client = await connectVnc(opts.viewerUrl);
  let tPointerFrom = 0;
  let tPointerTo = 0;
  try {
    await client.sync();
    await direct.sync();
    const { width, height } = direct.resolution();
    expect(client.resolution()).toEqual({ width, height });
    expect(Buffer.from(client.framebuffer.data).equals(Buffer.from(direct.framebuffer.data)), 'the picture through the proxy equals the direct one').toBe(true);
    const shot = await client.screenshot();
    expect([shot.width, shot.height]).toEqual([width, height]);
    const before = ((await cdpEvaluate(opts.cdpUrl, 'window.clicks.length')) as number) ?? 0;
    tPointerFrom = now();
    client.pointerEvent(at.x, at.y, 0);
    await client.sync();
    client.pointerEvent(at.x, at.y, 1);
    await client.sync();
    client.pointerEvent(at.x, at.y, 0);
    await client.sync();
    tPointerTo = now();
    const clicks = await eventually(async () => {
      const c = (await cdpEvaluate(opts.cdpUrl, 'window.clicks')) as Array<[number, number]>;
      return c.length > before ? c : null;
    });
    expect(clicks?.at(-1)).toEqual([at.x, at.y]);
  } finally {
    await client.close();
    await direct.close();
  }
  const entry = await eventually(() => readManifest(dir).connections[index]?.closed_at != null);
  expect(entry).toBe(true);
  const t1 = now();
  const manifest = readManifest(dir).connections[index]!;
  expect(manifest.close_reason).toBe('client closed');

  const server = readStream(dir, 'server', index);
  const clientStream = readStream(dir, 'client', index);
  expect(server.bytes.subarray(0, 12).toString('latin1')).toBe(greeting);
  expect(greeting).toMatch(/^RFB 003\.00[378]\n$/);
  expectSoundIndex(server, { complete: true, fromMs: t0, toMs: t1 });
  expectSoundIndex(clientStream, { complete: true, fromMs: t0, toMs: t1 });
  expect(manifest.bytes).toEqual({ client: clientStream.bytes.length, server: server.bytes.length });

  const parsed = parseClientStream(clientStream.bytes);
  expect(parsed.version).toBe('RFB 003.008\n');
  const pointers = parsed.messages.filter((m) => m.type === 'PointerEvent');
  expect(pointers.map(({ x, y, buttonMask }) => ({ x, y, buttonMask }))).toEqual([
    { ...at, buttonMask: 0 },
    { ...at, buttonMask: 1 },
    { ...at, buttonMask: 0 },
  ]);
  for (const p of pointers) {
    const t = recordAt(clientStream, p.offset).t;
    expect(t).toBeGreaterThanOrEqual(tPointerFrom);
    expect(t).toBeLessThanOrEqual(tPointerTo);
  }
}

/** The 12-byte ProtocolVersion a server sends first, read over tcp:// or ws:// (with an Origin header, which x11vnc wants). */
export async function serverGreeting(url: string): Promise<string> {
  const u = new URL(url);
  const chunks: Buffer[] = [];
  const enough = () => Buffer.concat(chunks).length >= 12;
  if (u.protocol === 'tcp:') {
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => {});
    try {
      if (!(await eventually(enough, 10_000, 10))) throw new Error(`no greeting from ${url}`);
    } finally {
      s.destroy();
    }
  } else {
    const ws = new WebSocket(url, ['binary'], { origin: `http://${u.host}` });
    ws.on('upgrade', (res) => {
      if (res.headers['sec-websocket-protocol'] === undefined) res.headers['sec-websocket-protocol'] = 'binary';
    });
    ws.on('message', (d: Buffer) => chunks.push(d));
    ws.on('error', () => {});
    try {
      if (!(await eventually(enough, 10_000, 10))) throw new Error(`no greeting from ${url}`);
    } finally {
      ws.terminate();
    }
  }
  return Buffer.concat(chunks).subarray(0, 12).toString('latin1');
}
