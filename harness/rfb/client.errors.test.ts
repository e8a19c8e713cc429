/**
 * How connectVnc / VncClient fail against misbehaving servers: every failure is a
 * typed VncuaError within the timeout, nothing is left open, and no promise
 * rejection goes unhandled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { connectVnc, type VncClient } from './client.ts';
import { type FakeServer, type ScriptedConnection, fakeTcpServer, fakeWsServer } from './test-helpers/fake-server.ts';
import { framebufferUpdate, rawRect, securityResult, securityTypes, serverInit, serverVersion } from './test-helpers/server-stream.ts';
import { tightPng } from './test-helpers/fixtures-tight.ts';
import { freePort } from './test-helpers/xvnc.ts';
import sharp from 'sharp';
import { ENC } from './encodings/types.ts';

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
  expect(
    unhandled.map((e) => (e instanceof Error ? e.stack : String(e))),
    'unhandled promise rejections during this file',
  ).toEqual([]);
});

/** The client's handshake as the server reads it (3.8, None) up to its first FramebufferUpdateRequest. */
async function handshakeAsServer(c: ScriptedConnection, size = { width: 8, height: 4 }): Promise<void> {
  c.write(serverVersion('3.8'));
  await c.read(12);
  c.write(securityTypes([1]));
  await c.read(1);
  c.write(securityResult('ok'));
  await c.read(1); // ClientInit
  c.write(serverInit({ ...size, name: 'fake' }));
  await c.read(20); // SetPixelFormat
  const head = await c.read(4); // SetEncodings header
  await c.read(4 * ((head[2]! << 8) | head[3]!));
  await c.read(10); // FramebufferUpdateRequest
}

/** Handshake, then answer the first request with a grey screen. */
async function connectedServer(c: ScriptedConnection): Promise<void> {
  await handshakeAsServer(c);
  c.write(framebufferUpdate([rawRect(0, 0, 8, 4, () => [128, 128, 128])]));
  await c.read(10);
}

/** How many socket handles and timers are alive in this process. */
function handles(): { sockets: number; timers: number } {
  const all = process.getActiveResourcesInfo();
  return { sockets: all.filter((r) => r === 'TCPSocketWrap').length, timers: all.filter((r) => r === 'Timeout').length };
}

/** Run `attempt` against a fresh server, expect it to reject with `code`, and check nothing stays open. */
async function expectFailure(server: FakeServer | null, attempt: () => Promise<unknown>, code: string): Promise<VncuaError> {
  const before = handles();
  let error: unknown;
  try {
    await attempt();
  } catch (e) {
    error = e;
  } finally {
    await server?.close();
  }
  expect(error).toBeInstanceOf(VncuaError);
  expect((error as VncuaError).code).toBe(code);
  await new Promise((r) => setTimeout(r, 20));
  const after = handles();
  expect(after.sockets, 'sockets left open').toBeLessThanOrEqual(before.sockets);
  expect(after.timers, 'timers left running').toBeLessThanOrEqual(before.timers);
  return error as VncuaError;
}

describe('connectVnc against bad input', () => {
  it('a malformed URL is RFB_ERR_BAD_URL', async () => {
    for (const url of [
      'http://127.0.0.1:5900',
      'tcp://127.0.0.1',
      'tcp://127.0.0.1:0',
      'tcp://127.0.0.1:5900/path',
      'not a url',
      'vnc://127.0.0.1:5900',
      'ws://user:pw@127.0.0.1/',
    ]) {
      await expectFailure(null, () => connectVnc(url), 'RFB_ERR_BAD_URL');
    }
  });

  it('bad options are RFB_ERR_BAD_ARGUMENT', async () => {
    await expectFailure(null, () => connectVnc('tcp://127.0.0.1:1', { encodings: ['bogus' as 'raw'] }), 'RFB_ERR_BAD_ARGUMENT');
    await expectFailure(null, () => connectVnc('tcp://127.0.0.1:1', { jpegQuality: 11 }), 'RFB_ERR_BAD_ARGUMENT');
    await expectFailure(null, () => connectVnc('tcp://127.0.0.1:1', { timeoutMs: -5 }), 'RFB_ERR_BAD_ARGUMENT');
  });

  it('a refused port is RFB_ERR_CONNECT', async () => {
    const port = await freePort();
    await expectFailure(null, () => connectVnc(`tcp://127.0.0.1:${port}`), 'RFB_ERR_CONNECT');
    await expectFailure(null, () => connectVnc(`ws://127.0.0.1:${port}/`), 'RFB_ERR_CONNECT');
  });

  it('a failed WebSocket upgrade (HTTP 404) is RFB_ERR_CONNECT', async () => {
    const server = await fakeWsServer(() => {}, { httpStatus: 404 });
    await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_CONNECT');
  });

  for (const transport of ['tcp', 'ws'] as const) {
    const start = (script: (c: ScriptedConnection) => Promise<void> | void) => (transport === 'tcp' ? fakeTcpServer(script) : fakeWsServer(script));

    it(`${transport}: a server offering only VeNCrypt and Tight is RFB_ERR_UNSUPPORTED_SECURITY naming them`, async () => {
      const server = await start(async (c) => {
        c.write(serverVersion('3.8'));
        await c.read(12);
        c.write(securityTypes([19, 16]));
        await c.closed;
      });
      const err = await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_UNSUPPORTED_SECURITY');
      expect(err.details).toMatchObject({ offered: [19, 16] });
    });

    it(`${transport}: a server closing right after its version is RFB_ERR_CLOSED`, async () => {
      const server = await start(async (c) => {
        c.write(serverVersion('3.8'));
        await c.read(12);
        c.end();
      });
      await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_CLOSED');
    });

    it(`${transport}: a server closing right after the security choice is RFB_ERR_CLOSED`, async () => {
      const server = await start(async (c) => {
        c.write(serverVersion('3.8'));
        await c.read(12);
        c.write(securityTypes([1]));
        await c.read(1);
        c.end();
      });
      await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_CLOSED');
    });

    it(`${transport}: a garbage version string is RFB_ERR_UNSUPPORTED_VERSION`, async () => {
      const server = await start((c) => c.write(Buffer.from('SSH-2.0-OpenSSH_9.2\r\n')));
      await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_UNSUPPORTED_VERSION');
    });

    it(`${transport}: an unknown message type after ServerInit is RFB_ERR_PROTOCOL`, async () => {
      const server = await start(async (c) => {
        await handshakeAsServer(c);
        c.write(Uint8Array.of(200, 1, 2, 3));
        await c.closed;
      });
      await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_PROTOCOL');
    });

    it(`${transport}: a rectangle in an encoding the client never requested is RFB_ERR_UNSUPPORTED_ENCODING`, async () => {
      const server = await start(async (c) => {
        await handshakeAsServer(c);
        c.write(framebufferUpdate([{ header: { x: 0, y: 0, width: 8, height: 4, encoding: 16 }, payload: new Uint8Array(16) }]));
        await c.closed;
      });
      await expectFailure(server, () => connectVnc(server.url, { encodings: ['raw'] }), 'RFB_ERR_UNSUPPORTED_ENCODING');
    });

    it(`${transport}: a server that never answers is RFB_ERR_TIMEOUT within timeoutMs`, async () => {
      const server = await start((c) => c.closed);
      await expectFailure(server, () => connectVnc(server.url, { timeoutMs: 300 }), 'RFB_ERR_TIMEOUT');
    });

    it(`${transport}: aborting the signal mid-handshake is RFB_ERR_ABORTED`, async () => {
      const ac = new AbortController();
      const server = await start(async (c) => {
        c.write(serverVersion('3.8'));
        await c.read(12);
        ac.abort(new Error('user cancelled'));
        await c.closed;
      });
      const err = await expectFailure(server, () => connectVnc(server.url, { signal: ac.signal }), 'RFB_ERR_ABORTED');
      expect((err.cause as Error).message).toBe('user cancelled');
    });
  }

  it('an already aborted signal is RFB_ERR_ABORTED without connecting at all', async () => {
    const server = await fakeTcpServer(() => {});
    await expectFailure(server, () => connectVnc(server.url, { signal: AbortSignal.abort() }), 'RFB_ERR_ABORTED');
    expect(server.connections).toBe(0);
  });

  it('WebSocket text frames (a base64-mode bridge) are RFB_ERR_PROTOCOL', async () => {
    const server = await fakeWsServer((c) => c.write(serverVersion('3.8')), { textFrames: true });
    await expectFailure(server, () => connectVnc(server.url), 'RFB_ERR_PROTOCOL');
  });
});

describe('WebSocket details', () => {
  it('sends an Origin header and accepts a server that picks no subprotocol', async () => {
    const server = await fakeWsServer(connectedServer, { subprotocol: null });
    try {
      const client = await connectVnc(server.url, { encodings: ['raw'] });
      expect(client.framebuffer.pixel(7, 3)).toEqual([128, 128, 128, 255]);
      expect(server.origins).toEqual([`http://127.0.0.1:${server.port}`]);
      await client.close();
      const custom = await connectVnc(server.url, { encodings: ['raw'], wsOrigin: 'https://example.test' });
      expect(server.origins[1]).toBe('https://example.test');
      await custom.close();
    } finally {
      await server.close();
    }
  });
});

describe('a connected client', () => {
  /** Connect to a fake server whose script continues with `then` after the first update. */
  async function connected(then: (c: ScriptedConnection) => Promise<void>): Promise<{ client: VncClient; server: FakeServer }> {
    const server = await fakeTcpServer(async (c) => {
      await connectedServer(c);
      await then(c);
    });
    const client = await connectVnc(server.url, { encodings: ['raw'] });
    return { client, server };
  }

  it('resolves connectVnc only once the first update has been drawn', async () => {
    const { client, server } = await connected((c) => c.closed);
    try {
      expect(client.resolution()).toEqual({ width: 8, height: 4 });
      expect(client.framebuffer.pixel(0, 0)).toEqual([128, 128, 128, 255]);
      expect(client.name).toBe('fake');
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('on a protocol error: emits error and close, rejects pending waits with RFB_ERR_CLOSED, refuses further input', async () => {
    let send!: () => void;
    const go = new Promise<void>((r) => (send = r));
    const { client, server } = await connected(async (c) => {
      await go;
      c.write(Uint8Array.of(99));
      await c.closed;
    });
    try {
      const errors: VncuaError[] = [];
      client.on('error', (e) => errors.push(e));
      const closeEvent = new Promise<VncuaError | null>((r) => client.once('close', r));
      const pending = client.waitForUpdate({ timeoutMs: 5000 });
      send();
      await expect(pending).rejects.toMatchObject({ code: 'RFB_ERR_CLOSED', cause: { code: 'RFB_ERR_PROTOCOL' } });
      expect((await closeEvent)?.code).toBe('RFB_ERR_PROTOCOL');
      expect(client.state).toBe('closed');
      expect(errors.map((e) => e.code)).toEqual(['RFB_ERR_PROTOCOL']);
      expect(() => client.pointerEvent(1, 1, 0)).toThrow(expect.objectContaining({ code: 'RFB_ERR_CLOSED' }));
      await expect(client.screenshot()).rejects.toMatchObject({ code: 'RFB_ERR_CLOSED' });
      await client.close(); // still resolves, idempotent
    } finally {
      await server.close();
    }
  });

  it('when the server hangs up: pending waits reject with RFB_ERR_CLOSED and close reports it', async () => {
    let hangUp!: () => void;
    const go = new Promise<void>((r) => (hangUp = r));
    const { client, server } = await connected(async (c) => {
      await go;
      c.end();
    });
    try {
      const closeEvent = new Promise<VncuaError | null>((r) => client.once('close', r));
      const pending = [client.waitForUpdate({ timeoutMs: 5000 }), client.waitForUpdate({ timeoutMs: 5000 })].map((p) =>
        expect(p).rejects.toMatchObject({ code: 'RFB_ERR_CLOSED' }),
      );
      hangUp();
      await Promise.all(pending);
      expect((await closeEvent)?.code).toBe('RFB_ERR_CLOSED');
      expect(client.closed).toBe(true);
      expect(client.state).toBe('closed');
    } finally {
      await server.close();
    }
  });

  it('close() is idempotent, emits close(null) once and rejects pending waits with RFB_ERR_CLOSED', async () => {
    const { client, server } = await connected((c) => c.closed);
    try {
      const closes: Array<VncuaError | null> = [];
      client.on('close', (e) => closes.push(e));
      const pending = expect(client.waitForUpdate({ timeoutMs: 5000 })).rejects.toMatchObject({ code: 'RFB_ERR_CLOSED' });
      expect(client.state).toBe('open');
      const a = client.close();
      expect(client.state).toBe('closing');
      expect(client.closed).toBe(true);
      const b = client.close();
      expect(a).toBe(b);
      await a;
      expect(client.state).toBe('closed');
      await pending;
      await client.close();
      expect(closes).toEqual([null]);
      // One transition function: a move its table does not list is an internal error.
      const moveTo = (to: string) => (client as unknown as { moveTo(to: string): void }).moveTo(to);
      expect(() => moveTo('open')).toThrow(expect.objectContaining({ code: 'RFB_ERR_ILLEGAL_STATE' }));
      expect(client.state).toBe('closed');
    } finally {
      await server.close();
    }
  });

  it('waitForUpdate times out with RFB_ERR_TIMEOUT and aborts with RFB_ERR_ABORTED on a static screen', async () => {
    const { client, server } = await connected((c) => c.closed);
    try {
      await expect(client.waitForUpdate({ timeoutMs: 100 })).rejects.toMatchObject({ code: 'RFB_ERR_TIMEOUT' });
      const ac = new AbortController();
      const p = client.waitForUpdate({ signal: ac.signal });
      ac.abort();
      await expect(p).rejects.toMatchObject({ code: 'RFB_ERR_ABORTED' });
      expect(client.closed).toBe(false);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('waitForUpdate resolves with the new version once an update changes pixels, and at once for an older version', async () => {
    let paint!: () => void;
    const go = new Promise<void>((r) => (paint = r));
    const { client, server } = await connected(async (c) => {
      await go;
      c.write(framebufferUpdate([rawRect(2, 1, 2, 2, () => [1, 2, 3])]));
      await c.closed;
    });
    try {
      const v0 = client.framebuffer.version;
      const p = client.waitForUpdate();
      paint();
      const v1 = await p;
      expect(v1).toBeGreaterThan(v0);
      expect(client.framebuffer.pixel(3, 2)).toEqual([1, 2, 3, 255]);
      expect(await client.waitForUpdate({ after: v0 })).toBe(v1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('input methods validate their arguments with RFB_ERR_BAD_ARGUMENT and send the exact bytes', async () => {
    let received!: (b: Uint8Array) => void;
    const got = new Promise<Uint8Array>((r) => (received = r));
    const { client, server } = await connected(async (c) => {
      received(await c.read(6 + 8));
      await c.closed;
    });
    try {
      expect(() => client.pointerEvent(-1, 0, 0)).toThrow(expect.objectContaining({ code: 'RFB_ERR_BAD_ARGUMENT' }));
      expect(() => client.pointerEvent(0, 0, 256)).toThrow(expect.objectContaining({ code: 'RFB_ERR_BAD_ARGUMENT' }));
      expect(client.pointer).toBeNull();
      client.pointerEvent(5, 3, 1);
      client.keyEvent(0xff0d, true);
      expect(Array.from(await got)).toEqual([5, 1, 0, 5, 0, 3, 4, 1, 0, 0, 0, 0, 0xff, 0x0d]);
      expect(client.pointer).toEqual({ x: 5, y: 3, buttonMask: 1 });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('asynchronously decoded images (TightPNG)', () => {
  /** A TightPNG rectangle of one colour. */
  async function pngRect(x: number, y: number, width: number, height: number, rgb: [number, number, number]) {
    const png = await sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } })
      .png()
      .toBuffer();
    return { header: { x, y, width, height, encoding: ENC.TIGHT_PNG }, payload: tightPng(png) };
  }

  it('connectVnc and waitForUpdate resolve only once the images are drawn, in protocol order', async () => {
    const first = await pngRect(0, 0, 8, 4, [10, 200, 30]);
    const second = await pngRect(0, 0, 8, 4, [250, 5, 5]);
    let paint!: () => void;
    const go = new Promise<void>((r) => (paint = r));
    const server = await fakeTcpServer(async (c) => {
      await handshakeAsServer(c);
      c.write(framebufferUpdate([first]));
      await c.read(10);
      await go;
      // An image, then a Raw rectangle that must land on top of it even though it decodes at once.
      c.write(framebufferUpdate([second, rawRect(0, 0, 2, 1, () => [1, 2, 3])]));
      await c.closed;
    });
    try {
      const client = await connectVnc(server.url, { encodings: ['tightpng'] });
      try {
        expect(client.framebuffer.pixel(7, 3)).toEqual([10, 200, 30, 255]);
        const v = client.framebuffer.version;
        const next = client.waitForUpdate();
        paint();
        expect(await next).toBeGreaterThan(v);
        expect(client.framebuffer.pixel(7, 3)).toEqual([250, 5, 5, 255]);
        expect(client.framebuffer.pixel(1, 0)).toEqual([1, 2, 3, 255]);
        const shot = await sharp((await client.screenshot()).png)
          .raw()
          .toBuffer();
        expect(Array.from(shot.subarray(0, 3))).toEqual([1, 2, 3]);
        expect(Array.from(shot.subarray(7 * 3, 8 * 3))).toEqual([250, 5, 5]);
      } finally {
        await client.close();
      }
    } finally {
      await server.close();
    }
  });
});
