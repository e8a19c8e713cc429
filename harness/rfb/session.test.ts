import { describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { ENC } from './encodings/types.ts';
import { RfbSession, type SessionEvent, type SessionOptions } from './session.ts';
import {
  bell,
  cStringReason,
  copyRect,
  cursorRect,
  desktopSizeRect,
  extendedDesktopSizeRect,
  framebufferUpdate,
  handshake,
  lastRect,
  rawRect,
  reasonString,
  securityRefusal,
  securityResult,
  securityType33,
  securityTypes,
  serverCutText,
  serverInit,
  serverVersion,
  setColourMapEntries,
  stream,
  vncChallenge,
  type Rgb,
} from './test-helpers/server-stream.ts';
import { writeClientInit, writeFramebufferUpdateRequest, writeProtocolVersion, writeSecurityType, writeSetEncodings, writeSetPixelFormat } from './client-messages.ts';

const RAW_ONLY: SessionOptions = { encodings: [ENC.RAW] };
const CHALLENGE = Array.from({ length: 16 }, (_, i) => i * 0x11); // 00 11 22 .. ff
/** VNC Authentication response for password "password" and CHALLENGE, computed independently with `openssl enc -des-ecb` (legacy provider) and the bit-reversed key 0e86ceceeef64e26. */
const PASSWORD_RESPONSE = 'b7b9c87777661a7a2299733209bfdfce';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const gradient = (px: number, py: number): Rgb => [px * 13, py * 29, (px * py) & 0xff];

/** Events in a comparable form (bytes as hex). */
function plain(events: SessionEvent[]): unknown[] {
  return events.map((e) => (e.type === 'send' ? { type: 'send', bytes: hex(e.bytes) } : e));
}

/** Feed `data` in the given chunks (cut points) and collect the events, or the error thrown. */
function run(opts: SessionOptions, data: Uint8Array, cuts: number[] = []): { session: RfbSession; events: SessionEvent[]; error: unknown } {
  const session = new RfbSession(opts);
  const events: SessionEvent[] = [];
  const points = [0, ...cuts.filter((c) => c > 0 && c < data.length).sort((a, b) => a - b), data.length];
  let error: unknown = null;
  try {
    for (let i = 0; i + 1 < points.length; i++) events.push(...session.receive(data.subarray(points[i]!, points[i + 1]!).slice()));
  } catch (e) {
    error = e;
  }
  return { session, events, error };
}

/** Run whole, split at every byte offset, and byte by byte: same events, same framebuffer, no error. */
async function expectSameAtEverySplit(opts: SessionOptions, data: Uint8Array): Promise<{ session: RfbSession; events: SessionEvent[] }> {
  const whole = run(opts, data);
  if (whole.error) throw whole.error;
  await whole.session.framebuffer?.whenIdle();
  const want = JSON.stringify(plain(whole.events));
  const wantFb = whole.session.framebuffer ? Buffer.from(whole.session.framebuffer.data) : null;
  const check = async (cuts: number[], label: string) => {
    const r = run(opts, data, cuts);
    if (r.error) throw new Error(`${label}: ${(r.error as Error).message}`);
    expect(JSON.stringify(plain(r.events)), label).toBe(want);
    await r.session.framebuffer?.whenIdle();
    if (wantFb) expect(Buffer.compare(Buffer.from(r.session.framebuffer!.data), wantFb), `${label}: framebuffer`).toBe(0);
  };
  for (let cut = 1; cut < data.length; cut++) await check([cut], `split at ${cut}`);
  await check(
    Array.from({ length: data.length }, (_, i) => i),
    'byte by byte',
  );
  return whole;
}

function sends(events: SessionEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'send' ? [hex(e.bytes)] : []));
}

function expectCode(error: unknown, code: string): void {
  expect(error).toBeInstanceOf(VncuaError);
  expect((error as VncuaError).code).toBe(code);
}

/** What the client sends right after ServerInit for `opts`. */
function initSends(opts: SessionOptions, width: number, height: number): string[] {
  const s = new RfbSession(opts);
  return [hex(writeSetPixelFormat()), hex(writeSetEncodings(s.setEncodings)), hex(writeFramebufferUpdateRequest(false, 0, 0, width, height))];
}

describe('handshake', () => {
  it('3.8 with None: version, type 1, SecurityResult, ClientInit, then pixel format, encodings and a full update request', async () => {
    const { session, events } = await expectSameAtEverySplit(RAW_ONLY, handshake({ version: '3.8', width: 16, height: 8, name: 'vncua ✓' }));
    expect(sends(events)).toEqual([hex(writeProtocolVersion('3.8')), hex(writeSecurityType(1)), hex(writeClientInit(true)), ...initSends(RAW_ONLY, 16, 8)]);
    expect(events.find((e) => e.type === 'ready')).toEqual({ type: 'ready', width: 16, height: 8, name: 'vncua ✓', version: '3.8', security: 'none' });
    expect(session.state).toBe('connected');
    expect(session.framebuffer!.width).toBe(16);
  });

  it('3.7 with None: no SecurityResult, ServerInit follows the type choice', async () => {
    const data = stream(serverVersion('3.7'), securityTypes([1]), serverInit({ width: 4, height: 3, name: 'x' }));
    const { events } = await expectSameAtEverySplit(RAW_ONLY, data);
    expect(sends(events).slice(0, 3)).toEqual([hex(writeProtocolVersion('3.7')), hex(writeSecurityType(1)), hex(writeClientInit(true))]);
    expect(events.find((e) => e.type === 'ready')).toMatchObject({ version: '3.7', security: 'none' });
  });

  it('3.3 with None: the server picks the type (U32), the client sends no type byte and gets no SecurityResult', async () => {
    const data = stream(serverVersion('3.3'), securityType33(1), serverInit({ width: 4, height: 3, name: 'x' }));
    const { events } = await expectSameAtEverySplit(RAW_ONLY, data);
    expect(sends(events).slice(0, 2)).toEqual([hex(writeProtocolVersion('3.3')), hex(writeClientInit(true))]);
    expect(events.find((e) => e.type === 'ready')).toMatchObject({ version: '3.3' });
  });

  for (const version of ['3.3', '3.7', '3.8'] as const) {
    it(`${version} with VNC Authentication answers the challenge with the DES response of the password`, async () => {
      const opts = { ...RAW_ONLY, password: 'password' };
      const { events } = await expectSameAtEverySplit(opts, handshake({ version, security: 'vncAuth', challenge: CHALLENGE, width: 2, height: 2 }));
      const s = sends(events);
      const typeByte = version === '3.3' ? [] : [hex(writeSecurityType(2))];
      expect(s.slice(0, 3 + typeByte.length)).toEqual([hex(writeProtocolVersion(version)), ...typeByte, PASSWORD_RESPONSE, hex(writeClientInit(true))]);
      expect(events.find((e) => e.type === 'ready')).toMatchObject({ security: 'vncAuth', version });
    });
  }

  it('prefers VNC Authentication when a password is given and None when not', () => {
    const offer = stream(serverVersion('3.8'), securityTypes([2, 1]));
    expect(sends(run({ ...RAW_ONLY, password: 'pw' }, offer).events)[1]).toBe(hex(writeSecurityType(2)));
    expect(sends(run(RAW_ONLY, offer).events)[1]).toBe(hex(writeSecurityType(1)));
  });

  it('maps odd and future server versions to the highest version it speaks that is not newer', () => {
    const reply = (announced: string, max?: '3.3' | '3.7' | '3.8') => sends(run({ ...RAW_ONLY, maxVersion: max }, serverVersion(announced)).events)[0];
    expect(reply('003.889')).toBe(hex(writeProtocolVersion('3.8'))); // Apple Remote Desktop
    expect(reply('004.001')).toBe(hex(writeProtocolVersion('3.8'))); // RealVNC 4.x
    expect(reply('005.000')).toBe(hex(writeProtocolVersion('3.8')));
    expect(reply('003.005')).toBe(hex(writeProtocolVersion('3.3'))); // RFC 6143: 3.5 is a misreported 3.3
    expect(reply('003.006')).toBe(hex(writeProtocolVersion('3.3')));
    expect(reply('003.008', '3.7')).toBe(hex(writeProtocolVersion('3.7')));
  });

  it('rejects versions below 3.3 and anything that is not a ProtocolVersion with RFB_ERR_UNSUPPORTED_VERSION', () => {
    for (const bad of [serverVersion('002.009'), serverVersion('003.002'), Buffer.from('HTTP/1.1 400'), Buffer.from('RFB 3.8\n    '), Buffer.from('RFB 003.008\r')]) {
      const r = run(RAW_ONLY, bad);
      expectCode(r.error, 'RFB_ERR_UNSUPPORTED_VERSION');
      expect(r.session.state).toBe('failed');
    }
  });

  it('a refusal (zero security types, or 3.3 type 0) gives RFB_ERR_SERVER_REFUSED with the reason', () => {
    const r38 = run(RAW_ONLY, stream(serverVersion('3.8'), securityRefusal('too many viewers')));
    expectCode(r38.error, 'RFB_ERR_SERVER_REFUSED');
    expect((r38.error as VncuaError).details).toMatchObject({ reason: 'too many viewers' });
    const r33 = run(RAW_ONLY, stream(serverVersion('3.3'), securityType33(0), reasonString('go away')));
    expectCode(r33.error, 'RFB_ERR_SERVER_REFUSED');
    expect((r33.error as VncuaError).details).toMatchObject({ reason: 'go away' });
  });

  it('waits for the whole reason string at every split before failing', () => {
    const data = stream(serverVersion('3.8'), securityRefusal('a reason'));
    for (let cut = 1; cut < data.length; cut++) {
      const partial = run(RAW_ONLY, data.subarray(0, cut));
      expect(partial.error, `prefix of ${cut} bytes`).toBeNull();
      expectCode(run(RAW_ONLY, data, [cut]).error, 'RFB_ERR_SERVER_REFUSED');
    }
  });

  it("a reason string with QEMU's trailing NUL loses the NUL (refusal and failed VNC Authentication), at every split", () => {
    const opts = { ...RAW_ONLY, password: 'wrong' };
    const refused = stream(serverVersion('3.8'), securityTypes([]), cStringReason('too many clients'));
    const failed = stream(serverVersion('3.8'), securityTypes([2]), vncChallenge(CHALLENGE), securityResult({ failed: null }), cStringReason('Authentication failed'));
    for (let cut = 1; cut < failed.length; cut++) {
      if (cut < refused.length) {
        const r = run(RAW_ONLY, refused, [cut]);
        expectCode(r.error, 'RFB_ERR_SERVER_REFUSED');
        expect((r.error as VncuaError).details).toMatchObject({ reason: 'too many clients' });
        expect((r.error as VncuaError).message).not.toContain('\0');
      }
      const f = run(opts, failed, [cut]);
      expectCode(f.error, 'RFB_ERR_AUTH_FAILED');
      expect((f.error as VncuaError).details).toMatchObject({ reason: 'Authentication failed' });
      expect((f.error as VncuaError).message).not.toContain('\0');
    }
  });

  it('security types it does not implement give RFB_ERR_UNSUPPORTED_SECURITY naming them', () => {
    const r = run(RAW_ONLY, stream(serverVersion('3.8'), securityTypes([19, 16])));
    expectCode(r.error, 'RFB_ERR_UNSUPPORTED_SECURITY');
    expect((r.error as VncuaError).details).toMatchObject({ offered: [19, 16] });
    expectCode(run(RAW_ONLY, stream(serverVersion('3.3'), securityType33(16))).error, 'RFB_ERR_UNSUPPORTED_SECURITY');
  });

  it('VNC Authentication without a password gives RFB_ERR_AUTH_REQUIRED (3.8 list and 3.3 server choice)', () => {
    expectCode(run(RAW_ONLY, stream(serverVersion('3.8'), securityTypes([2]))).error, 'RFB_ERR_AUTH_REQUIRED');
    expectCode(run(RAW_ONLY, stream(serverVersion('3.3'), securityType33(2))).error, 'RFB_ERR_AUTH_REQUIRED');
  });

  it('a failed SecurityResult after VNC Authentication is RFB_ERR_AUTH_FAILED: 3.8 with its reason, 3.7 and 3.3 without', () => {
    const opts = { ...RAW_ONLY, password: 'wrong' };
    const r38 = run(opts, stream(serverVersion('3.8'), securityTypes([2]), vncChallenge(CHALLENGE), securityResult({ failed: 'Authentication failure' })));
    expectCode(r38.error, 'RFB_ERR_AUTH_FAILED');
    expect((r38.error as VncuaError).details).toMatchObject({ reason: 'Authentication failure' });
    const r37 = run(opts, stream(serverVersion('3.7'), securityTypes([2]), vncChallenge(CHALLENGE), securityResult({ failed: null })));
    expectCode(r37.error, 'RFB_ERR_AUTH_FAILED');
    const r33 = run(opts, stream(serverVersion('3.3'), securityType33(2), vncChallenge(CHALLENGE), securityResult({ failed: null, status: 2 })));
    expectCode(r33.error, 'RFB_ERR_AUTH_FAILED');
  });

  it('a 3.8 failure status whose reason never arrives is still reported as RFB_ERR_AUTH_FAILED when the server closes', () => {
    const s = new RfbSession({ ...RAW_ONLY, password: 'wrong' });
    s.receive(stream(serverVersion('3.8'), securityTypes([2]), vncChallenge(CHALLENGE), securityResult({ failed: null })));
    expect(s.end().code).toBe('RFB_ERR_AUTH_FAILED');
    expect(s.state).toBe('failed');
  });

  it('a server that closes mid-handshake gives RFB_ERR_CLOSED', () => {
    const s = new RfbSession(RAW_ONLY);
    s.receive(serverVersion('3.8'));
    expect(s.end().code).toBe('RFB_ERR_CLOSED');
  });

  it('a 3.8 security failure after None is RFB_ERR_SERVER_REFUSED', () => {
    const r = run(RAW_ONLY, stream(serverVersion('3.8'), securityTypes([1]), securityResult({ failed: 'blacklisted' })));
    expectCode(r.error, 'RFB_ERR_SERVER_REFUSED');
  });

  it('rejects an absurd ServerInit size without allocating it', () => {
    const r = run(RAW_ONLY, stream(serverVersion('3.8'), securityTypes([1]), securityResult('ok'), serverInit({ width: 65535, height: 65535, name: '' })));
    expectCode(r.error, 'RFB_ERR_PROTOCOL');
    expect(r.session.framebuffer).toBeNull();
  });

  it('advertises the requested encodings, then the pseudo-encodings, JPEG quality and compression level', () => {
    const s = new RfbSession({ encodings: [ENC.COPYRECT, ENC.RAW], jpegQuality: 7, compressLevel: 2 });
    expect(s.setEncodings).toEqual([ENC.COPYRECT, ENC.RAW, ENC.DESKTOP_SIZE, ENC.EXTENDED_DESKTOP_SIZE, ENC.LAST_RECT, ENC.CURSOR, -25, -254]);
    expect(new RfbSession({ encodings: [ENC.RAW], jpegQuality: null }).setEncodings).not.toContain(-25);
  });

  it('rejects bad options with RFB_ERR_BAD_ARGUMENT', () => {
    for (const bad of [
      { encodings: [ENC.CURSOR] },
      { encodings: [12345] },
      { encodings: [0], jpegQuality: 10 },
      { encodings: [0], compressLevel: -1 },
      { encodings: [0], pseudoEncodings: [-32] },
    ]) {
      expect(() => new RfbSession(bad)).toThrow(expect.objectContaining({ code: 'RFB_ERR_BAD_ARGUMENT' }));
    }
  });
});

describe('after ServerInit', () => {
  const opts: SessionOptions = { encodings: [ENC.COPYRECT, ENC.RAW] };
  const init = handshake({ version: '3.8', width: 12, height: 10 });

  it('decodes updates, bells, cut text and colour maps identically at every split', async () => {
    const data = stream(
      init,
      framebufferUpdate([rawRect(0, 0, 12, 10, gradient), copyRect(6, 5, 6, 5, 0, 0)]),
      bell(),
      setColourMapEntries(0, [
        [1, 2, 3],
        [4, 5, 6],
      ]),
      serverCutText('héllo'),
      framebufferUpdate([rawRect(1, 1, 2, 2, () => [9, 9, 9]), lastRect()], 0xffff),
      framebufferUpdate([]),
    );
    const { session, events } = await expectSameAtEverySplit(opts, data);
    const kinds = events.filter((e) => e.type !== 'send').map((e) => e.type);
    expect(kinds).toEqual(['ready', 'updateStart', 'rect', 'rect', 'updateEnd', 'bell', 'cutText', 'updateStart', 'rect', 'updateEnd', 'updateStart', 'updateEnd']);
    expect(events.find((e) => e.type === 'cutText')).toEqual({ type: 'cutText', text: 'héllo' });
    expect(events.find((e) => e.type === 'updateStart')).toEqual({ type: 'updateStart', rects: 2 });
    const fb = session.framebuffer!;
    expect(fb.pixel(3, 3)).toEqual([...gradient(3, 3), 255]);
    expect(fb.pixel(7, 6)).toEqual([...gradient(1, 1), 255]); // CopyRect from (0,0) to (6,5)
    expect(fb.pixel(2, 2)).toEqual([9, 9, 9, 255]);
    expect(session.inUpdate).toBe(false);
  });

  it('asks for incremental updates of the whole screen, and after a resize for the new area in full', async () => {
    const { session, events } = await expectSameAtEverySplit(opts, stream(init, framebufferUpdate([desktopSizeRect(20, 15), rawRect(14, 10, 6, 5, gradient)])));
    expect(events.filter((e) => e.type === 'resize')).toEqual([{ type: 'resize', width: 20, height: 15 }]);
    expect(session.size).toEqual({ width: 20, height: 15 });
    expect(hex(session.updateRequest())).toBe(hex(writeFramebufferUpdateRequest(false, 0, 0, 20, 15)));
    expect(hex(session.updateRequest())).toBe(hex(writeFramebufferUpdateRequest(true, 0, 0, 20, 15)));
    expect(session.framebuffer!.pixel(19, 14)).toEqual([...gradient(5, 4), 255]);
  });

  it('handles ExtendedDesktopSize like DesktopSize', async () => {
    const { session, events } = await expectSameAtEverySplit(opts, stream(init, framebufferUpdate([extendedDesktopSizeRect(8, 6)])));
    expect(events.filter((e) => e.type === 'resize')).toEqual([{ type: 'resize', width: 8, height: 6 }]);
    expect(session.framebuffer!.width).toBe(8);
  });

  it('stores the Cursor pseudo-encoding shape without touching the framebuffer', async () => {
    const { session } = await expectSameAtEverySplit(
      opts,
      stream(
        init,
        framebufferUpdate([
          cursorRect(
            1,
            2,
            3,
            4,
            () => [255, 0, 0],
            (px) => px !== 1,
          ),
        ]),
      ),
    );
    const shape = session.framebuffer!.cursorShape!;
    expect(shape).toMatchObject({ hotX: 1, hotY: 2, width: 3, height: 4 });
    expect(Array.from(shape.rgba.subarray(0, 8))).toEqual([255, 0, 0, 255, 255, 0, 0, 0]);
    expect(session.framebuffer!.version).toBe(0);
  });

  it('a rectangle in an encoding it never requested, or an unknown one, is RFB_ERR_UNSUPPORTED_ENCODING', () => {
    for (const encoding of [ENC.HEXTILE, ENC.ZRLE, 999, -1]) {
      const r = run(opts, stream(init, framebufferUpdate([{ header: { x: 0, y: 0, width: 1, height: 1, encoding }, payload: new Uint8Array(4) }])));
      expectCode(r.error, 'RFB_ERR_UNSUPPORTED_ENCODING');
    }
    const rawOnly = run(RAW_ONLY, stream(init, framebufferUpdate([copyRect(0, 0, 1, 1, 1, 1)])));
    expectCode(rawOnly.error, 'RFB_ERR_UNSUPPORTED_ENCODING');
  });

  it('always accepts Raw, even when only other encodings were requested', () => {
    const r = run({ encodings: [ENC.COPYRECT] }, stream(init, framebufferUpdate([rawRect(0, 0, 1, 1, () => [1, 2, 3])])));
    expect(r.error).toBeNull();
    expect(r.session.framebuffer!.pixel(0, 0)).toEqual([1, 2, 3, 255]);
  });

  it('LastRect is an error when it was not advertised', () => {
    const r = run({ ...opts, pseudoEncodings: [] }, stream(init, framebufferUpdate([lastRect()], 0xffff)));
    expectCode(r.error, 'RFB_ERR_UNSUPPORTED_ENCODING');
  });

  it('an unknown server message type is RFB_ERR_PROTOCOL and the session stays failed', () => {
    const r = run(opts, stream(init, Uint8Array.of(77)));
    expectCode(r.error, 'RFB_ERR_PROTOCOL');
    expect(r.session.state).toBe('failed');
    expect(() => r.session.receive(bell())).toThrow(expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' }));
  });

  it('a rectangle outside the framebuffer is RFB_ERR_DECODE', () => {
    expectCode(run(opts, stream(init, framebufferUpdate([rawRect(10, 0, 4, 1, gradient)]))).error, 'RFB_ERR_DECODE');
  });

  it('client messages are refused before the connection is up, with RFB_ERR_ILLEGAL_STATE', () => {
    const s = new RfbSession(opts);
    expect(() => s.pointerEvent(1, 1, 0)).toThrow(expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' }));
    expect(() => s.updateRequest()).toThrow(expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' }));
    s.receive(init);
    expect(hex(s.pointerEvent(3, 4, 1))).toBe('050100030004');
    s.close();
    expect(s.state).toBe('closed');
    expect(() => s.keyEvent(0x61, true)).toThrow(expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' }));
  });

  it('skips an oversized ServerCutText without buffering it and keeps decoding after it', () => {
    const s = new RfbSession(opts);
    s.receive(init);
    const big = 16 * 1024 * 1024 + 1;
    const events = s.receive(Uint8Array.of(3, 0, 0, 0, (big >>> 24) & 0xff, (big >>> 16) & 0xff, (big >>> 8) & 0xff, big & 0xff));
    expect(events).toEqual([]);
    const chunk = new Uint8Array(1024 * 1024);
    for (let i = 0; i < 16; i++) expect(s.receive(chunk)).toEqual([]);
    expect(s.receive(stream(Uint8Array.of(0), bell())).map((e) => e.type)).toEqual(['bell']);
  });
});
