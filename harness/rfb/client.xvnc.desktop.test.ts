/**
 * The live client against REAL servers: TigerVNC Xvnc over tcp://, over ws://
 * through websockify, over wss:// through a local TLS bridge, with VNC
 * Authentication, at each protocol version, through a resize, with input.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { connectVnc, type VncClient } from './client.ts';
import { PATTERN_COLOURS, expectPattern, tileXbm } from './test-helpers/pattern.ts';
import { expectPlanesInStep } from './test-helpers/decode.ts';
import { type Bridge, type XvncServer, startWebsockify, startXvnc } from './test-helpers/xvnc.ts';

/** The screenshot decodes to exactly the framebuffer's RGB. */
async function expectScreenshotMatches(client: VncClient): Promise<void> {
  const shot = await client.screenshot();
  expect([shot.width, shot.height]).toEqual([client.resolution().width, client.resolution().height]);
  expect(shot.png.subarray(1, 4).toString()).toBe('PNG');
  expect(Buffer.from(shot.base64, 'base64').equals(shot.png)).toBe(true);
  const { data, info } = await sharp(shot.png).raw().toBuffer({ resolveWithObject: true });
  expect([info.width, info.height, info.channels]).toEqual([shot.width, shot.height, 3]);
  const fb = client.framebuffer;
  const rgb = Buffer.alloc(fb.width * fb.height * 3);
  for (let i = 0, o = 0; i < fb.data.length; i += 4, o += 3) {
    rgb[o] = fb.data[i]!;
    rgb[o + 1] = fb.data[i + 1]!;
    rgb[o + 2] = fb.data[i + 2]!;
  }
  expect(data.equals(rgb), 'screenshot pixels equal the framebuffer').toBe(true);
}

let dir: string;
let xvnc: XvncServer;
let bridge: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vncua-rfb-'));
  writeFileSync(join(dir, 'tile.xbm'), tileXbm());
  xvnc = await startXvnc({ geometry: '320x200' });
  await xvnc.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
  bridge = await startWebsockify(xvnc.port);
});

afterAll(async () => {
  await bridge?.stop().catch(() => {});
  await xvnc?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe('Xvnc over tcp:// and ws://', () => {
  for (const via of ['tcp', 'ws'] as const) {
    it(`${via}: connects with Raw, the framebuffer shows the pattern, and screenshots equal it`, async () => {
      const url = via === 'tcp' ? `tcp://127.0.0.1:${xvnc.port}` : `ws://127.0.0.1:${bridge.port}/`;
      const client = await connectVnc(url, { encodings: ['raw'] });
      try {
        expect(client.resolution()).toEqual({ width: 320, height: 200 });
        expect(client.version).toBe('3.8');
        expectPattern(client.framebuffer);
        await expectScreenshotMatches(client);
      } finally {
        await client.close();
      }
    });
  }

  it('the default encodings and each lossless encoding give the exact picture', async () => {
    for (const encodings of [undefined, ['hextile'], ['zrle'], ['tight'], ['tightpng'], ['copyrect', 'raw']] as const) {
      const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, encodings ? { encodings: [...encodings] } : {});
      try {
        expectPattern(client.framebuffer);
      } catch (e) {
        throw new Error(`${encodings?.join('+') ?? 'default encodings'}: ${(e as Error).message}`);
      } finally {
        await client.close();
      }
    }
  });

  for (const maxVersion of ['3.3', '3.7'] as const) {
    it(`speaks RFB ${maxVersion} to Xvnc (None: no SecurityResult before 3.8)`, async () => {
      const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { encodings: ['raw'], maxVersion });
      try {
        expect(client.version).toBe(maxVersion);
        expectPattern(client.framebuffer);
      } finally {
        await client.close();
      }
    });
  }

  it('sync() is a round trip: resolves after the server answered, rejects with RFB_ERR_CLOSED once closed', async () => {
    const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { encodings: ['raw'] });
    const before = client.rectStats().Raw ?? 0;
    await client.sync({ timeoutMs: 5000 });
    await client.sync({ timeoutMs: 5000 });
    // Each round trip was answered with (at least) the 1x1 rectangle it asked for.
    expect(client.rectStats().Raw ?? 0).toBeGreaterThanOrEqual(before + 2);
    await client.close();
    await expect(client.sync()).rejects.toMatchObject({ code: 'RFB_ERR_CLOSED' });
  });

  it('waitForQuiet() resolves true on a still screen, false while the screen keeps changing, and RFB_ERR_BAD_ARGUMENT on a bad window', async () => {
    const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { encodings: ['raw'] });
    let painting = true;
    try {
      expect(await client.waitForQuiet({ quietMs: 150, timeoutMs: 3000 })).toBe(true);
      // Repaint the root window every ~60 ms: never quiet for 400 ms.
      const paint = (async () => {
        for (let i = 0; painting; i++) {
          await xvnc.x('xsetroot', ['-solid', i % 2 ? '#203040' : '#304050']);
          await new Promise((r) => setTimeout(r, 60));
        }
      })();
      const t0 = performance.now();
      expect(await client.waitForQuiet({ quietMs: 400, timeoutMs: 1500 })).toBe(false);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(1100);
      painting = false;
      await paint;
      expect(await client.waitForQuiet({ quietMs: 150, timeoutMs: 3000 })).toBe(true);
      await expect(client.waitForQuiet({ quietMs: 0 })).rejects.toMatchObject({ code: 'RFB_ERR_BAD_ARGUMENT' });
    } finally {
      painting = false;
      await xvnc.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
      await client.close();
    }
  });

  it('follows screen changes through incremental updates', async () => {
    const client = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { encodings: ['copyrect', 'raw'] });
    try {
      const before = client.framebuffer.version;
      await xvnc.x('xsetroot', ['-solid', '#102030']);
      const seen = await client.waitForUpdate({ after: before, timeoutMs: 5000 });
      expect(seen).toBeGreaterThan(before);
      // xsetroot may land in more than one update: wait until the last corner has it too.
      while (client.framebuffer.pixel(319, 199)[0] !== 0x10) await client.waitForUpdate({ timeoutMs: 5000 });
      expect(client.framebuffer.pixel(0, 0)).toEqual([0x10, 0x20, 0x30, 255]);
      expect(client.framebuffer.pixel(319, 199)).toEqual([0x10, 0x20, 0x30, 255]);
      await expectScreenshotMatches(client);
      // An unchanged screen returns the same encode; cache: false and a change encode afresh.
      const a = await client.screenshot();
      expect((await client.screenshot()).png).toBe(a.png);
      const fresh = await client.screenshot({ cache: false });
      expect(fresh.png).not.toBe(a.png);
      expect(fresh.png.equals(a.png)).toBe(true);
      const v = client.framebuffer.version;
      await xvnc.x('xsetroot', ['-solid', '#405060']);
      while (client.framebuffer.pixel(319, 199)[0] !== 0x40) await client.waitForUpdate({ after: v, timeoutMs: 5000 });
      const changed = await client.screenshot();
      expect(changed.png.equals(a.png)).toBe(false);
      await expectScreenshotMatches(client);
    } finally {
      await xvnc.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
      await client.close();
    }
  });
});

describe("input and cursor (own Xvnc: TigerVNC draws the cursor into other viewers' pictures)", () => {
  let scratch: XvncServer;
  beforeAll(async () => {
    scratch = await startXvnc({ geometry: '320x200' });
  });
  afterAll(async () => {
    await scratch?.stop();
  });

  it('pointerEvent moves the X pointer', async () => {
    const client = await connectVnc(`tcp://127.0.0.1:${scratch.port}`, { encodings: ['raw'] });
    try {
      client.pointerEvent(123, 45, 0);
      let where = '';
      for (let i = 0; i < 50 && !where.startsWith('x:123 y:45'); i++) {
        where = await scratch.x('xdotool', ['getmouselocation']);
        if (!where.startsWith('x:123 y:45')) await new Promise((r) => setTimeout(r, 20));
      }
      expect(where).toMatch(/^x:123 y:45 /);
      expect(client.pointer).toEqual({ x: 123, y: 45, buttonMask: 0 });
    } finally {
      await client.close();
    }
  });

  it('draws the cursor shape the server sent at the pointer position when asked', async () => {
    const client = await connectVnc(`tcp://127.0.0.1:${scratch.port}`, { encodings: ['raw'] });
    try {
      await scratch.x('xsetroot', ['-cursor_name', 'left_ptr']);
      client.pointerEvent(100, 60, 0);
      for (let i = 0; i < 100 && !client.framebuffer.cursorShape; i++) await new Promise((r) => setTimeout(r, 20));
      const shape = client.framebuffer.cursorShape!;
      expect(shape.width).toBeGreaterThan(0);
      const plain = await sharp((await client.screenshot()).png)
        .raw()
        .toBuffer();
      const withCursor = await sharp((await client.screenshot({ cursor: true })).png)
        .raw()
        .toBuffer();
      // Pixels differ only inside the cursor's box around the pointer, and some do differ there.
      let inside = 0;
      for (let i = 0; i < plain.length; i += 3) {
        if (plain[i] === withCursor[i] && plain[i + 1] === withCursor[i + 1] && plain[i + 2] === withCursor[i + 2]) continue;
        const x = (i / 3) % 320;
        const y = Math.floor(i / 3 / 320);
        expect(x - 100 + shape.hotX).toBeGreaterThanOrEqual(0);
        expect(x - 100 + shape.hotX).toBeLessThan(shape.width);
        expect(y - 60 + shape.hotY).toBeGreaterThanOrEqual(0);
        expect(y - 60 + shape.hotY).toBeLessThan(shape.height);
        inside++;
      }
      expect(inside).toBeGreaterThan(10);
      // The cursor was drawn into the framebuffer's RGB plane only for the encode: it is gone again.
      await client.screenshot({ cursor: true, cache: false });
      expectPlanesInStep(client.framebuffer);
      const again = await sharp((await client.screenshot({ cache: false })).png)
        .raw()
        .toBuffer();
      expect(again.equals(plain)).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe('Xvnc resize', () => {
  it('follows an xrandr resize: resolution(), a resize event and a full-size screenshot', async () => {
    const server = await startXvnc({ geometry: '320x200' });
    try {
      await server.x('xsetroot', ['-solid', '#336699']);
      const client = await connectVnc(`tcp://127.0.0.1:${server.port}`, { encodings: ['raw'] });
      try {
        const resized = new Promise<{ width: number; height: number }>((r) => client.once('resize', r));
        await server.x('xrandr', ['--fb', '640x480']);
        expect(await resized).toEqual({ width: 640, height: 480 });
        expect(client.resolution()).toEqual({ width: 640, height: 480 });
        // The new area arrives in full after the resize.
        while (client.framebuffer.pixel(639, 479)[0] !== 0x33) await client.waitForUpdate({ timeoutMs: 5000 });
        const shot = await client.screenshot();
        expect([shot.width, shot.height]).toEqual([640, 480]);
        await expectScreenshotMatches(client);
      } finally {
        await client.close();
      }
    } finally {
      await server.stop();
    }
  });
});

describe('Xvnc with VNC Authentication', () => {
  let secured: XvncServer;
  beforeAll(async () => {
    const passwordFile = join(dir, 'passwd');
    writeFileSync(passwordFile, execFileSync('vncpasswd', ['-f'], { input: 'sekrit42\n' }));
    secured = await startXvnc({ securityTypes: 'VncAuth', passwordFile });
  });
  afterAll(async () => {
    await secured?.stop();
  });

  for (const maxVersion of ['3.3', '3.7', '3.8'] as const) {
    it(`RFB ${maxVersion}: the right password connects`, async () => {
      const client = await connectVnc(`tcp://127.0.0.1:${secured.port}`, { password: 'sekrit42', encodings: ['raw'], maxVersion });
      expect(client.version).toBe(maxVersion);
      expect(client.resolution()).toEqual({ width: 320, height: 200 });
      await client.close();
    });
  }

  it('a wrong password is RFB_ERR_AUTH_FAILED, no password RFB_ERR_AUTH_REQUIRED', async () => {
    await expect(connectVnc(`tcp://127.0.0.1:${secured.port}`, { password: 'wrong', encodings: ['raw'] })).rejects.toMatchObject({ code: 'RFB_ERR_AUTH_FAILED' });
    await expect(connectVnc(`tcp://127.0.0.1:${secured.port}`, { encodings: ['raw'] })).rejects.toMatchObject({ code: 'RFB_ERR_AUTH_REQUIRED' });
  });
});

describe('wss:// through a local TLS WebSocket bridge', () => {
  let server: https.Server;
  let port: number;
  let cert: string;
  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert });
    const wss = new WebSocketServer({ server, handleProtocols: (p) => (p.has('binary') ? 'binary' : false) });
    wss.on('connection', (ws) => {
      const tcp = net.connect({ host: '127.0.0.1', port: xvnc.port });
      tcp.on('data', (d) => ws.send(d));
      ws.on('message', (d) => tcp.write(d as Buffer));
      tcp.on('close', () => ws.close());
      tcp.on('error', () => ws.terminate());
      ws.on('close', () => tcp.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('connects when the self-signed certificate is trusted through tls.ca', async () => {
    const client = await connectVnc(`wss://127.0.0.1:${port}/`, { encodings: ['raw'], tls: { ca: cert } });
    try {
      expectPattern(client.framebuffer);
      await expectScreenshotMatches(client);
    } finally {
      await client.close();
    }
  });

  it('connects with rejectUnauthorized: false', async () => {
    const client = await connectVnc(`wss://127.0.0.1:${port}/`, { encodings: ['raw'], tls: { rejectUnauthorized: false } });
    expect(client.resolution()).toEqual({ width: 320, height: 200 });
    await client.close();
  });

  it('refuses an untrusted certificate with RFB_ERR_CONNECT', async () => {
    await expect(connectVnc(`wss://127.0.0.1:${port}/`, { encodings: ['raw'] })).rejects.toMatchObject({ code: 'RFB_ERR_CONNECT' });
  });
});
