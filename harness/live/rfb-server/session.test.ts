import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../errors.ts';
import {
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
} from '../../rfb/client-messages.ts';
import { ENC } from '../../rfb/encodings/types.ts';
import type { Framebuffer } from '../../rfb/framebuffer.ts';
import { packRgb } from '../../rfb/sink.ts';
import { concatBytes, setPixelFormatWith } from '../../rfb/test-helpers/client-stream.ts';
import { LiveRfbSession, type LiveSessionEvent } from './session.ts';
import { MemoryPipe, expectSamePixels, patternFramebuffer } from './test-helpers.ts';

const W = 24;
const H = 16;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** What a watcher sends on a connection at `version` (None), then input and requests. */
function watcherStream(version: RfbVersion, extra: Uint8Array[] = []): Uint8Array {
  return concatBytes([
    writeProtocolVersion(version),
    ...(version === '3.3' ? [] : [writeSecurityType(1)]),
    writeClientInit(true),
    writeSetPixelFormat(),
    writeSetEncodings([ENC.RAW, ENC.DESKTOP_SIZE, ENC.CURSOR]),
    writeFramebufferUpdateRequest(false, 0, 0, W, H),
    writePointerEvent(3, 4, 1),
    writeKeyEvent(0x61, true),
    writeKeyEvent(0x61, false),
    writeClientCutText('dropped'),
    writeFramebufferUpdateRequest(true, 0, 0, W, H),
    ...extra,
  ]);
}

/** Feed `data` to a fresh session (framebuffer attached) in chunks cut at `cuts`, calling update() after each as the endpoint does; everything it said, comparable. */
function feed(data: Uint8Array, cuts: number[], opts: { viewOnly?: boolean; fb?: Framebuffer | null } = {}): { out: string; session: LiveRfbSession; events: LiveSessionEvent[] } {
  const session = new LiveRfbSession({ name: 'run', viewOnly: opts.viewOnly ?? false });
  const fb = opts.fb === undefined ? patternFramebuffer(W, H) : opts.fb;
  const events: LiveSessionEvent[] = [...session.start(), ...session.attach(fb)];
  const points = [0, ...cuts.filter((c) => c > 0 && c < data.length).sort((a, b) => a - b), data.length];
  for (let i = 0; i + 1 < points.length; i++) {
    events.push(...session.receive(data.slice(points[i]!, points[i + 1]!)));
    events.push(...session.update());
  }
  // Sent bytes are joined: where one chunk ends and the next begins must not matter.
  const sent = hex(concatBytes(events.flatMap((e) => (e.type === 'send' ? [e.bytes] : []))));
  const rest = events.filter((e) => e.type !== 'send').map((e) => (e.type === 'close' ? { type: 'close', code: e.error.code } : e));
  return { out: JSON.stringify({ sent, rest }), session, events };
}

/** Whole, at every split, and byte by byte: the same result. */
function expectSameAtEverySplit(
  data: Uint8Array,
  opts: { viewOnly?: boolean; fb?: Framebuffer | null } = {},
): { out: string; session: LiveRfbSession; events: LiveSessionEvent[] } {
  const whole = feed(data, [], opts);
  for (let cut = 1; cut < data.length; cut++) expect(feed(data, [cut], opts).out, `split at byte ${cut}`).toBe(whole.out);
  expect(
    feed(
      data,
      Array.from({ length: data.length }, (_, i) => i),
      opts,
    ).out,
    'byte by byte',
  ).toBe(whole.out);
  return whole;
}

describe('LiveRfbSession: the watcher stream at every split', () => {
  for (const version of ['3.8', '3.7', '3.3'] as const) {
    it(`RFB ${version}: the same replies and input wherever the bytes are cut`, () => {
      const { events, session } = expectSameAtEverySplit(watcherStream(version));
      expect(session.state).toBe('serving');
      expect(events.filter((e) => e.type === 'input').map((e) => (e as { input: unknown }).input)).toEqual([
        { type: 'pointer', x: 3, y: 4, buttonMask: 1 },
        { type: 'key', keysym: 0x61, down: true },
        { type: 'key', keysym: 0x61, down: false },
      ]);
      expect(events.some((e) => e.type === 'close')).toBe(false);
    });
  }

  it('view-only: the same at every split, and no input comes out', () => {
    const { events, session } = expectSameAtEverySplit(watcherStream('3.8'), { viewOnly: true });
    expect(events.filter((e) => e.type === 'input')).toEqual([]);
    expect(session.droppedInput).toBe(3);
  });

  it('a security type other than None: a SecurityResult failure with the reason, then LIVE_ERR_PROTOCOL, at every split', () => {
    const data = concatBytes([writeProtocolVersion('3.8'), writeSecurityType(2), new Uint8Array(16)]);
    const { events } = expectSameAtEverySplit(data);
    const close = events.find((e) => e.type === 'close');
    expect(close).toMatchObject({ error: { code: 'LIVE_ERR_PROTOCOL' } });
    const last = events.filter((e) => e.type === 'send').at(-1) as { bytes: Uint8Array };
    expect(Buffer.from(last.bytes).readUInt32BE(0)).toBe(1);
    expect(Buffer.from(last.bytes).subarray(8).toString()).toMatch(/only security type 1 \(None/);
  });

  it('bad bytes close with LIVE_ERR_PROTOCOL: not RFB, a version before 3.3, an unknown message', () => {
    for (const data of [
      Buffer.from('GET / HTTP/1.1\r\n\r\n'),
      writeProtocolVersion('3.8').map((b, i) => (i === 6 ? 0x32 : b)), // "RFB 002.008"
      concatBytes([watcherStream('3.8'), Uint8Array.of(77, 0, 0, 0)]),
    ]) {
      const { events } = feed(data, []);
      expect(events.at(-1)).toMatchObject({ type: 'close', error: { code: 'LIVE_ERR_PROTOCOL' } });
    }
  });

  it('a pixel format it cannot serve closes that session with LIVE_ERR_PIXEL_FORMAT', () => {
    const { events, session } = expectSameAtEverySplit(concatBytes([watcherStream('3.8').subarray(0, 14), setPixelFormatWith({ bitsPerPixel: 16, depth: 16 })]));
    expect(events.at(-1)).toMatchObject({ type: 'close', error: { code: 'LIVE_ERR_PIXEL_FORMAT' } });
    expect(session.state).toBe('closed');
    expect(session.receive(writeKeyEvent(1, true))).toEqual([]);
  });
});

describe('LiveRfbSession: states', () => {
  it('allows only the moves of its table (LIVE_ERR_ILLEGAL_STATE)', () => {
    const s = new LiveRfbSession({ name: 'x', viewOnly: false });
    s.start();
    let err: unknown;
    try {
      s.start();
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'LIVE_ERR_ILLEGAL_STATE')).toBe(true);
    s.close();
    expect(s.state).toBe('closed');
    expect(() => s.start()).toThrow(/cannot go from 'closed' to 'awaitingVersion'/);
  });

  it('holds ServerInit until a framebuffer is attached, or closes with LIVE_ERR_NO_FRAMEBUFFER', () => {
    const session = new LiveRfbSession({ name: 'held', viewOnly: false });
    const pipe = new MemoryPipe(session, { encodings: [ENC.RAW] }).start();
    expect(pipe.holds).toBe(1);
    expect(session.state).toBe('holdingServerInit');
    expect(pipe.client.state).toBe('awaitingServerInit');
    pipe.deliver(session.attach(null));
    expect(session.state).toBe('holdingServerInit');
    const fb = patternFramebuffer(W, H, 5);
    pipe.deliver(session.attach(fb));
    expect(session.state).toBe('serving');
    expect(pipe.client.name).toBe('held');
    expectSamePixels(pipe.fb, fb);

    const late = new LiveRfbSession({ name: 'late', viewOnly: false });
    const p2 = new MemoryPipe(late, { encodings: [ENC.RAW] }).start();
    expect(late.holdExpired(1234)).toMatchObject([{ type: 'close', error: { code: 'LIVE_ERR_NO_FRAMEBUFFER', details: { waitedMs: 1234 } } }]);
    expect(p2.client.state).toBe('awaitingServerInit');
    expect(session.holdExpired(1)).toEqual([]); // serving: nothing to expire
  });
});

describe("LiveRfbSession: updates to vncua's own client core", () => {
  const connect = (fb: Framebuffer, pseudo: number[] = [ENC.DESKTOP_SIZE, ENC.CURSOR]) => {
    const session = new LiveRfbSession({ name: 'desk', viewOnly: false });
    session.attach(fb);
    return new MemoryPipe(session, { encodings: [ENC.RAW], pseudoEncodings: pseudo }).start();
  };

  it('the first (non-incremental) request gets the whole picture; the client framebuffer equals it', () => {
    const fb = patternFramebuffer(W, H);
    const pipe = connect(fb);
    expect(pipe.client.state).toBe('connected');
    expect(pipe.updates).toBe(1);
    expectSamePixels(pipe.fb, fb);
  });

  it('an incremental request waits for damage, then gets exactly the damaged rectangle, one update per request', () => {
    const fb = patternFramebuffer(W, H);
    const pipe = connect(fb);
    const bytes = pipe.serverBytes;
    pipe.settle();
    expect(pipe.updates, 'nothing changed: no update').toBe(1);
    fb.fill(2, 3, 5, 4, packRgb(1, 2, 3));
    pipe.server.damage({ x: 2, y: 3, w: 5, h: 4 });
    pipe.settle();
    expect(pipe.updates).toBe(2);
    expectSamePixels(pipe.fb, fb);
    const rects = pipe.clientEvents.filter((e) => e.type === 'rect').slice(-1);
    expect(rects).toEqual([{ type: 'rect', rect: { x: 2, y: 3, width: 5, height: 4, encoding: ENC.RAW } }]);
    expect(pipe.serverBytes - bytes).toBe(4 + 12 + 5 * 4 * 4);
  });

  it('without a new request, damage waits: never two updates on their way', () => {
    const fb = patternFramebuffer(W, H);
    const session = new LiveRfbSession({ name: 'x', viewOnly: false });
    session.attach(fb);
    const pipe = new MemoryPipe(session, { encodings: [ENC.RAW] }, false).start();
    expect(pipe.updates).toBe(1);
    for (let i = 0; i < 5; i++) {
      fb.fill(i, 0, 1, 1, packRgb(i, i, i));
      session.damage({ x: i, y: 0, w: 1, h: 1 });
      pipe.settle();
    }
    expect(pipe.updates, 'no request, no update').toBe(1);
    pipe.send(pipe.client.updateRequest());
    expect(pipe.updates).toBe(2);
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').at(-1)).toMatchObject({ rect: { x: 0, y: 0, width: 5, height: 1 } });
    expectSamePixels(pipe.fb, fb);
  });

  it('a non-incremental request of part of the screen is answered with that part even when nothing changed (what sync() relies on)', () => {
    const fb = patternFramebuffer(W, H);
    const pipe = connect(fb);
    pipe.send(writeFramebufferUpdateRequest(false, W - 1, H - 1, 1, 1));
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').at(-1)).toMatchObject({ rect: { x: W - 1, y: H - 1, width: 1, height: 1 } });
  });

  it('an incremental request for part of the screen gets the damage inside it; the rest stays for later', () => {
    const fb = patternFramebuffer(W, H);
    const session = new LiveRfbSession({ name: 'x', viewOnly: false });
    session.attach(fb);
    const pipe = new MemoryPipe(session, { encodings: [ENC.RAW] }, false).start();
    fb.fill(0, 0, W, 2, packRgb(9, 9, 9));
    session.damage({ x: 0, y: 0, w: W, h: 2 });
    pipe.send(writeFramebufferUpdateRequest(true, 0, 0, 10, H));
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').at(-1)).toMatchObject({ rect: { x: 0, y: 0, width: 10, height: 2 } });
    pipe.send(writeFramebufferUpdateRequest(true, 0, 0, W, H));
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').at(-1)).toMatchObject({ rect: { x: 10, y: 0, width: W - 10, height: 2 } });
    expectSamePixels(pipe.fb, fb);
  });

  it('a resize is a DesktopSize then the whole new picture; a watcher without DesktopSize is closed with LIVE_ERR_RESIZE', () => {
    const fb = patternFramebuffer(W, H);
    const pipe = connect(fb);
    fb.resize(W + 8, H - 4);
    fb.fill(0, 0, W + 8, H - 4, packRgb(7, 8, 9));
    pipe.server.damage({ x: 0, y: 0, w: 1, h: 1 });
    pipe.settle();
    expect(pipe.clientEvents.some((e) => e.type === 'resize' && e.width === W + 8 && e.height === H - 4)).toBe(true);
    expectSamePixels(pipe.fb, fb);

    const fb2 = patternFramebuffer(W, H);
    const strict = connect(fb2, [ENC.CURSOR]);
    fb2.resize(W, H + 1);
    strict.server.damage({ x: 0, y: 0, w: 1, h: 1 });
    strict.settle();
    expect(strict.closed?.code).toBe('LIVE_ERR_RESIZE');
    expect(strict.server.state).toBe('closed');
  });

  it('a new framebuffer of the same size (a re-connection) is sent whole; null keeps the last picture', () => {
    const fb = patternFramebuffer(W, H);
    const pipe = connect(fb);
    pipe.deliver(pipe.server.attach(null));
    const next = patternFramebuffer(W, H, 99);
    pipe.deliver(pipe.server.attach(next));
    expectSamePixels(pipe.fb, next);
    expect(pipe.clientEvents.filter((e) => e.type === 'rect').at(-1)).toMatchObject({ rect: { x: 0, y: 0, width: W, height: H } });
  });

  it('sends the cursor shape to a watcher that lists Cursor, and again when it changes', () => {
    const fb = patternFramebuffer(W, H);
    const rgba = new Uint8Array(3 * 2 * 4);
    for (let i = 0; i < 6; i++) rgba.set(i % 2 ? [10, 20, 30, 255] : [0, 0, 0, 0], i * 4);
    fb.cursor({ hotX: 1, hotY: 0, width: 3, height: 2, rgba });
    const pipe = connect(fb);
    expect(pipe.fb.cursorShape).toEqual({ hotX: 1, hotY: 0, width: 3, height: 2, rgba });
    fb.cursor(null);
    pipe.server.cursorChanged();
    pipe.settle();
    expect(pipe.fb.cursorShape).toBeNull();
    const plain = connect(fb, [ENC.DESKTOP_SIZE]);
    fb.cursor({ hotX: 0, hotY: 0, width: 1, height: 1, rgba: Uint8Array.of(1, 2, 3, 255) });
    plain.server.cursorChanged();
    plain.settle();
    expect(plain.clientEvents.some((e) => e.type === 'rect' && e.rect.encoding === ENC.CURSOR)).toBe(false);
  });
});
