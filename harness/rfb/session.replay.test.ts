import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { ENC, type RectHeader } from './encodings/types.ts';
import { RfbSession, type ReplayChoices, type SessionEvent } from './session.ts';
import { copyRect, cursorRect, framebufferUpdate, handshake, lastRect, rawRect, securityTypes, serverVersion, stream, type Rgb } from './test-helpers/server-stream.ts';

const OURS: ReplayChoices = { version: '3.8', securityType: 1, encodings: [ENC.COPYRECT, ENC.HEXTILE, ENC.RAW, ENC.DESKTOP_SIZE, ENC.LAST_RECT, ENC.CURSOR] };
const red: Rgb = [255, 0, 0];
const blue: Rgb = [0, 0, 255];

/** Feed `data` split at `cuts` into a replay session; events and error. */
function replay(choices: ReplayChoices, data: Uint8Array, cuts: number[] = []): { session: RfbSession; events: SessionEvent[]; error: unknown } {
  const session = RfbSession.forReplay(choices);
  const points = [0, ...cuts.filter((c) => c > 0 && c < data.length), data.length];
  const events: SessionEvent[] = [];
  try {
    for (let i = 0; i + 1 < points.length; i++) events.push(...session.receive(data.slice(points[i]!, points[i + 1]!)));
  } catch (e) {
    return { session, events, error: e };
  }
  return { session, events, error: null };
}

const updates = stream(
  framebufferUpdate([rawRect(0, 0, 4, 4, () => red), rawRect(4, 0, 4, 4, (x, y) => [x * 40, y * 40, 9])]),
  framebufferUpdate(
    [
      copyRect(0, 4, 4, 4, 4, 0),
      cursorRect(
        1,
        2,
        3,
        3,
        () => blue,
        (x) => x > 0,
      ),
      lastRect(),
    ],
    0xffff,
  ),
);

describe('RfbSession replay mode', () => {
  it('replays a recorded 3.8 stream without sending anything, identically at every split', async () => {
    const data = stream(handshake({ version: '3.8', width: 8, height: 8 }), updates);
    const whole = replay(OURS, data);
    expect(whole.error).toBeNull();
    expect(whole.events.filter((e) => e.type === 'send')).toEqual([]);
    expect(whole.events.filter((e) => e.type === 'updateEnd')).toHaveLength(2);
    await whole.session.framebuffer!.whenIdle();
    const fb = whole.session.framebuffer!;
    expect(fb.pixel(1, 1)).toEqual([255, 0, 0, 255]);
    expect(fb.pixel(1, 5)).toEqual([40, 40, 9, 255]); // copied from (5, 1)
    expect(fb.cursorShape).toMatchObject({ hotX: 1, hotY: 2, width: 3, height: 3 });
    for (let cut = 1; cut < data.length; cut += 7) {
      const r = replay(OURS, data, [cut]);
      expect(r.error, `split at ${cut}`).toBeNull();
      await r.session.framebuffer!.whenIdle();
      expect(Buffer.compare(Buffer.from(r.session.framebuffer!.data), Buffer.from(fb.data)), `split at ${cut}`).toBe(0);
    }
  });

  it('skips the VNC Authentication challenge (no password, no response)', () => {
    const data = stream(handshake({ version: '3.8', security: 'vncAuth', width: 8, height: 8 }), updates);
    const r = replay({ ...OURS, securityType: 2 }, data);
    expect(r.error).toBeNull();
    expect(r.session.securityType).toBe(2);
    expect(r.events.some((e) => e.type === 'ready' && e.security === 'vncAuth')).toBe(true);
    expect(r.events.filter((e) => e.type === 'send')).toEqual([]);
  });

  it('takes the version from the client (3.3 server, security chosen by the server)', () => {
    const r = replay({ ...OURS, version: '3.3', securityType: null }, stream(handshake({ version: '3.3', security: 'vncAuth', width: 8, height: 8 }), updates));
    expect(r.error).toBeNull();
    expect(r.session.version).toBe('3.3');
    expect(r.session.securityType).toBe(2);
  });

  it('records the server pixel format from ServerInit', () => {
    const r = replay(OURS, handshake({ version: '3.8', width: 8, height: 8 }));
    expect(r.session.serverPixelFormat).toMatchObject({ bitsPerPixel: 32, depth: 24, redShift: 16, greenShift: 8, blueShift: 0 });
  });

  it('accepts only the encodings the recorded client advertised', () => {
    const data = stream(handshake({ version: '3.8', width: 8, height: 8 }), updates);
    const r = replay({ ...OURS, encodings: [ENC.RAW, ENC.CURSOR, ENC.LAST_RECT] }, data);
    expect(isVncuaError(r.error, 'RFB_ERR_UNSUPPORTED_ENCODING')).toBe(true);
    const all = replay({ ...OURS, encodings: null }, data);
    expect(all.error).toBeNull();
  });

  it('refuses a security type it cannot replay', () => {
    const r = replay({ ...OURS, securityType: 19 }, stream(serverVersion('3.8'), securityTypes([19])));
    expect(isVncuaError(r.error, 'RFB_ERR_UNSUPPORTED_SECURITY')).toBe(true);
  });

  it('advance({ stopAfterUpdate }) stops right after each update, leaving later bytes queued', async () => {
    const session = RfbSession.forReplay(OURS);
    session.push(stream(handshake({ version: '3.8', width: 8, height: 8 }), updates));
    const first = session.advance({ stopAfterUpdate: true });
    expect(first.at(-1)?.type).toBe('updateEnd');
    expect(session.pending).toBeGreaterThan(0);
    expect(session.framebuffer!.pixel(1, 5)).toEqual([0, 0, 0, 255]); // the CopyRect of update 2 not applied yet
    const second = session.advance({ stopAfterUpdate: true });
    expect(second.at(-1)?.type).toBe('updateEnd');
    expect(session.pending).toBe(0);
    expect(session.framebuffer!.pixel(1, 5)).toEqual([40, 40, 9, 255]);
    expect(session.advance({ stopAfterUpdate: true })).toEqual([]);
  });

  it('calls onRectStart with each header before the rectangle is drawn', () => {
    const seen: Array<{ rect: RectHeader; before: number[] }> = [];
    const session: RfbSession = RfbSession.forReplay({
      ...OURS,
      onRectStart: (rect) => seen.push({ rect, before: session.framebuffer!.pixel(rect.x, rect.y) }),
    });
    session.receive(stream(handshake({ version: '3.8', width: 8, height: 8 }), updates));
    expect(seen.map((s) => s.rect.encoding)).toEqual([ENC.RAW, ENC.RAW, ENC.COPYRECT, ENC.CURSOR]);
    expect(seen[0]!.before).toEqual([0, 0, 0, 255]);
    expect(seen[2]!.before).toEqual([0, 0, 0, 255]); // (0, 4) before the copy
  });
});
