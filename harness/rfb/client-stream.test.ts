import { describe, expect, it } from 'vitest';
import { VncuaError, isVncuaError } from '../errors.ts';
import {
  CLIENT_PIXEL_FORMAT,
  writeClientCutText,
  writeClientInit,
  writeFramebufferUpdateRequest,
  writeKeyEvent,
  writePointerEvent,
  writeProtocolVersion,
  writeSecurityType,
  writeSetEncodings,
  writeSetPixelFormat,
} from './client-messages.ts';
import { ClientStreamParser, inputEvents, isClientPixelFormat, type ClientMessage, type ClientStreamOptions } from './client-stream.ts';
import { clientFence, concatBytes, enableContinuousUpdates, extendedCutText, qemuKeyEvent, setDesktopSize, setPixelFormatWith, xvpMessage } from './test-helpers/client-stream.ts';

/** Parse `data` cut at `cuts`, every chunk stamped with its index; returns the messages (and the error, if any). */
function parse(data: Uint8Array, cuts: number[] = [], opts: ClientStreamOptions = {}): { messages: ClientMessage[]; error: unknown } {
  const p = new ClientStreamParser(opts);
  const points = [0, ...cuts.filter((c) => c > 0 && c < data.length).sort((a, b) => a - b), data.length];
  const messages: ClientMessage[] = [];
  for (let i = 0; i + 1 < points.length; i++) messages.push(...p.push(data.slice(points[i]!, points[i + 1]!), 0));
  return { messages, error: p.error };
}

/** Whole, split at every byte offset, and byte by byte: the same messages every time. */
function expectSameAtEverySplit(data: Uint8Array, opts: ClientStreamOptions = {}): ClientMessage[] {
  const whole = parse(data, [], opts);
  if (whole.error) throw whole.error;
  const want = JSON.stringify(whole.messages);
  for (let cut = 1; cut < data.length; cut++) {
    const r = parse(data, [cut], opts);
    expect(r.error, `split at ${cut}`).toBeNull();
    expect(JSON.stringify(r.messages), `split at ${cut}`).toBe(want);
  }
  const bytewise = parse(
    data,
    Array.from({ length: data.length }, (_, i) => i),
    opts,
  );
  expect(JSON.stringify(bytewise.messages), 'byte by byte').toBe(want);
  return whole.messages;
}

/** What vncua's own client sends on a 3.8 connection without a password, then some input. */
function vncuaSession(): Uint8Array {
  return concatBytes([
    writeProtocolVersion('3.8'),
    writeSecurityType(1),
    writeClientInit(true),
    writeSetPixelFormat(),
    writeSetEncodings([1, 5, 0, -223, -308, -224, -239]),
    writeFramebufferUpdateRequest(false, 0, 0, 1280, 800),
    writePointerEvent(100, 200, 0),
    writePointerEvent(100, 200, 1),
    writeKeyEvent(0xff0d, true),
    writeKeyEvent(0xff0d, false),
    writeClientCutText('héllo'),
    writeFramebufferUpdateRequest(true, 0, 0, 1280, 800),
  ]);
}

describe('ClientStreamParser', () => {
  it('parses what vncua sends, at every split', () => {
    const messages = expectSameAtEverySplit(vncuaSession());
    expect(messages.map((m) => m.kind)).toEqual([
      'version',
      'security',
      'clientInit',
      'pixelFormat',
      'encodings',
      'updateRequest',
      'pointer',
      'pointer',
      'key',
      'key',
      'cutText',
      'updateRequest',
    ]);
    expect(messages[0]).toMatchObject({ version: '003.008' });
    expect(messages[1]).toMatchObject({ type: 1 });
    expect(messages[2]).toMatchObject({ shared: true });
    expect(messages[3]).toMatchObject({ format: CLIENT_PIXEL_FORMAT });
    expect(messages[4]).toMatchObject({ encodings: [1, 5, 0, -223, -308, -224, -239] });
    expect(messages[5]).toMatchObject({ incremental: false, x: 0, y: 0, width: 1280, height: 800 });
    expect(messages[7]).toMatchObject({ kind: 'pointer', x: 100, y: 200, mask: 1 });
    expect(messages[8]).toMatchObject({ kind: 'key', keysym: 0xff0d, down: true });
    expect(messages[10]).toMatchObject({ length: 5 });
    expect(messages[11]).toMatchObject({ incremental: true });
  });

  it('follows VNC Authentication: 16 response bytes after security type 2', () => {
    const data = concatBytes([writeProtocolVersion('3.8'), writeSecurityType(2), new Uint8Array(16).fill(0xab), writeClientInit(false), writePointerEvent(1, 2, 4)]);
    const messages = expectSameAtEverySplit(data);
    expect(messages.map((m) => m.kind)).toEqual(['version', 'security', 'authResponse', 'clientInit', 'pointer']);
    expect(messages[3]).toMatchObject({ shared: false });
    expect(messages[4]).toMatchObject({ x: 1, y: 2, mask: 4 });
  });

  it('3.3 has no security byte; a VNC-auth response follows only when told the server chose type 2', () => {
    const none = concatBytes([writeProtocolVersion('3.3'), writeClientInit(true), writeKeyEvent(0x61, true)]);
    expect(expectSameAtEverySplit(none).map((m) => m.kind)).toEqual(['version', 'clientInit', 'key']);
    const auth = concatBytes([writeProtocolVersion('3.3'), new Uint8Array(16), writeClientInit(true), writeKeyEvent(0x61, true)]);
    expect(expectSameAtEverySplit(auth, { security33: 2 }).map((m) => m.kind)).toEqual(['version', 'authResponse', 'clientInit', 'key']);
  });

  it('parses the extensions other viewers send (continuous updates, fence, desktop size, xvp, QEMU keys, extended clipboard)', () => {
    const data = concatBytes([
      writeProtocolVersion('3.8'),
      writeSecurityType(1),
      writeClientInit(true),
      enableContinuousUpdates(true, 0, 0, 640, 480),
      clientFence(0x80000003, [1, 2, 3, 4]),
      setDesktopSize(800, 600, [
        { id: 7, x: 0, y: 0, width: 800, height: 600 },
        { id: 8, x: 800, y: 0, width: 10, height: 10 },
      ]),
      xvpMessage(1, 2),
      qemuKeyEvent(0x41, 38, true),
      extendedCutText([0x10, 0, 0, 1]),
      writePointerEvent(5, 6, 0),
    ]);
    const messages = expectSameAtEverySplit(data);
    expect(messages.slice(3).map((m) => (m.kind === 'other' ? `other:${m.type}:${m.size}` : m.kind))).toEqual([
      'other:150:10',
      'other:248:13',
      'other:251:40',
      'other:250:4',
      'key',
      'cutText',
      'pointer',
    ]);
    expect(messages[7]).toMatchObject({ kind: 'key', keysym: 0x41, down: true });
    expect(messages[8]).toMatchObject({ kind: 'cutText', length: 4 });
  });

  it('stamps each message with the time of the chunk that completed it', () => {
    const data = concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), writePointerEvent(10, 20, 0), writePointerEvent(30, 40, 1)]);
    const p = new ClientStreamParser();
    const first = p.push(data.slice(0, 14 + 3), 1000); // version, security, init, and half of the first pointer event
    const second = p.push(data.slice(17), 2000.5);
    expect(first.map((m) => [m.kind, m.t])).toEqual([
      ['version', 1000],
      ['security', 1000],
      ['clientInit', 1000],
    ]);
    expect(inputEvents(second)).toEqual([
      { kind: 'pointer', t: 2000.5, x: 10, y: 20, mask: 0 },
      { kind: 'pointer', t: 2000.5, x: 30, y: 40, mask: 1 },
    ]);
  });

  it('reports other pixel formats as such', () => {
    const messages = parse(concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), setPixelFormatWith({ redShift: 16, blueShift: 0 })])).messages;
    const pf = messages.find((m) => m.kind === 'pixelFormat');
    expect(pf && pf.kind === 'pixelFormat' && isClientPixelFormat(pf.format)).toBe(false);
    expect(isClientPixelFormat(CLIENT_PIXEL_FORMAT)).toBe(true);
  });

  it('fails with RECORDING_ERR_CLIENT_STREAM at an unknown message, keeping what came before', () => {
    const good = concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), writePointerEvent(1, 1, 0)]);
    const r = parse(concatBytes([good, Uint8Array.of(77, 0, 0, 0), writePointerEvent(2, 2, 0)]));
    expect(isVncuaError(r.error, 'RECORDING_ERR_CLIENT_STREAM')).toBe(true);
    expect((r.error as { details: { offset: number } }).details.offset).toBe(good.length);
    expect(inputEvents(r.messages)).toHaveLength(1);
  });

  it('fails on a stream that is not RFB, and on a security type it cannot follow', () => {
    expect(isVncuaError(parse(Buffer.from('GET / HTTP/1.1\r\n')).error, 'RECORDING_ERR_CLIENT_STREAM')).toBe(true);
    expect(isVncuaError(parse(concatBytes([writeProtocolVersion('3.8'), Uint8Array.of(19)])).error, 'RECORDING_ERR_CLIENT_STREAM')).toBe(true);
  });

  it('takes a bound on ClientCutText and an error of its own (what the live endpoint passes)', () => {
    const head = concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true)]);
    const opts: ClientStreamOptions = { maxCutText: 4, error: (problem, offset) => new VncuaError('LIVE_ERR_PROTOCOL', `at ${offset}: ${problem}`) };
    expect(parse(concatBytes([head, writeClientCutText('four')]), [], opts).error).toBeNull();
    const r = parse(concatBytes([head, writeClientCutText('five!')]), [], opts);
    expect(isVncuaError(r.error, 'LIVE_ERR_PROTOCOL')).toBe(true);
    expect((r.error as Error).message).toBe(`at ${head.length}: a ClientCutText announces 5 bytes (limit 4)`);
  });
});
