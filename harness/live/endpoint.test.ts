/**
 * The live endpoint over real HTTP and WebSocket on 127.0.0.1, watched by vncua's real VncClient,
 * fed from a Framebuffer the test draws into (the desktop test feeds it from a real Xvnc).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';

import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeProtocolVersion, writeSecurityType, writeClientInit } from '../rfb/client-messages.ts';
import { connectVnc, type VncClient } from '../rfb/client.ts';
import { packRgb } from '../rfb/sink.ts';
import { concatBytes, setPixelFormatWith } from '../rfb/test-helpers/client-stream.ts';
import { VncuaError } from '../errors.ts';
import type { LiveAnnouncement } from './control.ts';
import { type RunningLiveEndpoint, startLiveEndpoint } from './endpoint.ts';
import { expectSamePixels, patternFramebuffer } from './rfb-server/test-helpers.ts';
import { TestControl, closedWith, httpJson, openWs, until } from './test-helpers.ts';

let dir: string;
let endpoint: RunningLiveEndpoint | null = null;
const clients: VncClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'vncua-live-'));
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await endpoint?.close();
  endpoint = null;
  rmSync(dir, { recursive: true, force: true });
});

const rfbUrl = (e: RunningLiveEndpoint, who = 'w', extra = '') => `ws://127.0.0.1:${e.port}/rfb?token=${e.token}&who=${who}${extra}`;

async function watch(e: RunningLiveEndpoint, who = 'w', extra = ''): Promise<VncClient> {
  const c = await connectVnc(rfbUrl(e, who, extra), { timeoutMs: 15_000 });
  clients.push(c);
  return c;
}

describe('startLiveEndpoint', () => {
  it('announces itself in live.json (mode 0600) and removes it on close; close() twice is fine', async () => {
    const control = new TestControl(patternFramebuffer(32, 20));
    endpoint = await startLiveEndpoint({ dir, control });
    const path = join(dir, 'live.json');
    const a = JSON.parse(readFileSync(path, 'utf8')) as LiveAnnouncement;
    expect(a).toEqual({ version: 1, url: endpoint.url, token: endpoint.token, pid: process.pid, started_at: expect.any(Number) });
    expect(a.url).toBe(`http://127.0.0.1:${endpoint.port}`);
    expect(a.token).toMatch(/^[0-9a-f]{32}$/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    await endpoint.close();
    await endpoint.close();
    expect(existsSync(path)).toBe(false);
    expect(control.listeners, 'no listener left on the control').toBe(0);
    await expect(httpJson('POST', `${endpoint.url}/control?token=${endpoint.token}`, { op: 'status' })).rejects.toThrow(/ECONNREFUSED/);
  });

  it('an aborted start rejects with LIVE_ERR_ABORTED and leaves no live.json; a missing directory with TRACE_ERR_WRITE', async () => {
    const control = new TestControl(null);
    await expect(startLiveEndpoint({ dir, control, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'LIVE_ERR_ABORTED' });
    expect(existsSync(join(dir, 'live.json'))).toBe(false);
    await expect(startLiveEndpoint({ dir: join(dir, 'missing'), control })).rejects.toMatchObject({ code: 'TRACE_ERR_WRITE' });
    expect(control.listeners).toBe(0);
  });

  it('refuses a missing or wrong token with 403 LIVE_ERR_TOKEN, on HTTP and on a WebSocket upgrade', async () => {
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(patternFramebuffer(8, 8)) });
    const t = endpoint.token;
    const oneOff = `${t.slice(0, -1)}${t.endsWith('0') ? '1' : '0'}`;
    for (const q of ['', '?token=', `?token=${oneOff}`, `?token=${t}x`, `?token=${t.toUpperCase()}`]) {
      const r = await httpJson('POST', `${endpoint.url}/control${q}`, { op: 'status' });
      expect(r, q).toMatchObject({ status: 403, body: { code: 'LIVE_ERR_TOKEN' } });
      for (const path of ['/rfb', '/events']) {
        const w = await openWs(`ws://127.0.0.1:${endpoint.port}${path}${q}${q ? '&' : '?'}who=x`);
        expect('refused' in w && w.refused, `${path}${q}`).toMatchObject({ status: 403, body: { code: 'LIVE_ERR_TOKEN' } });
      }
    }
    await expect(connectVnc(`ws://127.0.0.1:${endpoint.port}/rfb?token=nope&who=x`, { timeoutMs: 5000 })).rejects.toMatchObject({ code: 'RFB_ERR_CONNECT' });
  });

  it('answers unknown paths 404, a plain GET of a WebSocket path 426, /rfb without who 400', async () => {
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(patternFramebuffer(8, 8)) });
    const t = `token=${endpoint.token}`;
    expect(await httpJson('GET', `${endpoint.url}/nope?${t}`)).toMatchObject({ status: 404, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    expect(await httpJson('GET', `${endpoint.url}/rfb?${t}`)).toMatchObject({ status: 426, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    const noWho = await openWs(`ws://127.0.0.1:${endpoint.port}/rfb?${t}`);
    expect('refused' in noWho && noWho.refused).toMatchObject({ status: 400, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    const elsewhere = await openWs(`ws://127.0.0.1:${endpoint.port}/other?${t}`);
    expect('refused' in elsewhere && elsewhere.refused).toMatchObject({ status: 404, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
  });
});

describe('/rfb', () => {
  it("a VncClient watcher's framebuffer equals the agent's, and follows its changes", async () => {
    const fb = patternFramebuffer(64, 40);
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(fb), title: 'my run' });
    const a = await watch(endpoint);
    const b = await watch(endpoint, 'other', '&view_only=1');
    expect(a.name).toBe('my run');
    expect(endpoint.watchers).toBe(2);
    expectSamePixels(a.framebuffer, fb);
    expectSamePixels(b.framebuffer, fb);
    for (let i = 0; i < 5; i++) {
      fb.fill(3 * i, 2 * i, 10, 7, packRgb(40 * i, 255 - i, 7));
      await until(() => a.framebuffer.pixel(3 * i, 2 * i)[0] === 40 * i && b.framebuffer.pixel(3 * i, 2 * i)[0] === 40 * i, `change ${i}`);
    }
    expectSamePixels(a.framebuffer, fb);
    expectSamePixels(b.framebuffer, fb);
    await a.sync({ timeoutMs: 5000 }); // a non-incremental request of one pixel is answered
  });

  it('holds ServerInit until the run has a framebuffer; follows a re-connection and a resize (DesktopSize)', async () => {
    const control = new TestControl(null);
    endpoint = await startLiveEndpoint({ dir, control });
    const connecting = connectVnc(rfbUrl(endpoint), { timeoutMs: 15_000 });
    await until(() => endpoint!.watchers === 1, 'the watcher to connect');
    const first = patternFramebuffer(40, 30, 1);
    control.setFramebuffer(first);
    const c = await connecting;
    clients.push(c);
    expectSamePixels(c.framebuffer, first);
    control.setFramebuffer(null); // the agent's connection dropped: the last picture stays
    const second = patternFramebuffer(40, 30, 2);
    control.setFramebuffer(second);
    await until(() => c.framebuffer.pixel(5, 5).join() === second.pixel(5, 5).join(), 'the re-connected framebuffer');
    expectSamePixels(c.framebuffer, second);
    second.resize(50, 24);
    second.fill(0, 0, 50, 24, packRgb(1, 2, 3));
    await until(() => c.resolution().width === 50 && c.framebuffer.pixel(49, 23)[2] === 3, 'the resize');
    expectSamePixels(c.framebuffer, second);
  });

  it('closes a watcher whose ServerInit waited too long with LIVE_ERR_NO_FRAMEBUFFER', async () => {
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(null), holdMs: 200 });
    // A raw watcher answering the handshake message by message: version, security type None, ClientInit.
    const w = await openWs(rfbUrl(endpoint), ['binary'], (d, ws) => {
      if (d.toString('latin1').startsWith('RFB ')) ws.send(writeProtocolVersion('3.8'));
      else if (d.length === 2) ws.send(writeSecurityType(1));
      else if (d.length === 4) ws.send(writeClientInit(true));
    });
    if (!('ws' in w)) throw new Error('refused');
    expect(w.ws.protocol).toBe('binary');
    const closed = closedWith(w.ws);
    expect(await closed).toMatchObject({ code: 1008, reason: expect.stringMatching(/^LIVE_ERR_NO_FRAMEBUFFER: /) });
    await until(() => endpoint!.watchers === 0, 'the watcher to be gone');
  });

  it('a pixel format it cannot serve closes that watcher only (LIVE_ERR_PIXEL_FORMAT); a text frame closes with LIVE_ERR_PROTOCOL', async () => {
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(patternFramebuffer(16, 16)) });
    const good = await watch(endpoint);
    const bad = await openWs(rfbUrl(endpoint, 'bad'));
    if (!('ws' in bad)) throw new Error('refused');
    const closed = closedWith(bad.ws);
    bad.ws.send(concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), setPixelFormatWith({ bitsPerPixel: 16, depth: 16 })]));
    expect(await closed).toMatchObject({ code: 1008, reason: expect.stringMatching(/^LIVE_ERR_PIXEL_FORMAT: /) });
    const text = await openWs(rfbUrl(endpoint, 'text'));
    if (!('ws' in text)) throw new Error('refused');
    const closedText = closedWith(text.ws);
    text.ws.send('RFB 003.008\n');
    expect(await closedText).toMatchObject({ code: 1008, reason: expect.stringMatching(/^LIVE_ERR_PROTOCOL: /) });
    await good.sync({ timeoutMs: 5000 });
    expect(good.closed).toBe(false);
  });

  it("passes a watcher's input to control.input(who); a view-only watcher's is dropped", async () => {
    const control = new TestControl(patternFramebuffer(32, 32));
    endpoint = await startLiveEndpoint({ dir, control });
    const person = await watch(endpoint, 'ann');
    const viewer = await watch(endpoint, 'bob', '&view_only=1');
    viewer.pointerEvent(1, 1, 0);
    viewer.keyEvent(0x62, true);
    await viewer.sync({ timeoutMs: 5000 }); // the endpoint has read everything before the sync
    person.pointerEvent(5, 6, 1);
    person.keyEvent(0x61, true);
    person.keyEvent(0x61, false);
    await person.sync({ timeoutMs: 5000 });
    expect(control.inputs).toEqual([
      { who: 'ann', event: { type: 'pointer', x: 5, y: 6, buttonMask: 1 } },
      { who: 'ann', event: { type: 'key', keysym: 0x61, down: true } },
      { who: 'ann', event: { type: 'key', keysym: 0x61, down: false } },
    ]);
  });

  it('close() closes every watcher with 1001 LIVE_ERR_CLOSED and never rejects', async () => {
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(patternFramebuffer(16, 16)) });
    const raw = await openWs(rfbUrl(endpoint));
    if (!('ws' in raw)) throw new Error('refused');
    const c = await watch(endpoint);
    const closed = closedWith(raw.ws);
    const clientClosed = new Promise((r) => c.once('close', r));
    await endpoint.close();
    expect(await closed).toMatchObject({ code: 1001, reason: expect.stringMatching(/^LIVE_ERR_CLOSED: /) });
    // vncua's client quotes the close reason in its error.
    expect(await clientClosed).toMatchObject({ code: 'RFB_ERR_CLOSED', message: expect.stringContaining('the WebSocket closed with code 1001: LIVE_ERR_CLOSED: ') });
    expect(c.closed).toBe(true);
  });
});

describe('/events and /control', () => {
  it('/events sends the status on connect and on each change, then the final one and closes', async () => {
    const control = new TestControl(null);
    endpoint = await startLiveEndpoint({ dir, control });
    const e = await openWs(`ws://127.0.0.1:${endpoint.port}/events?token=${endpoint.token}`);
    if (!('ws' in e)) throw new Error('refused');
    await until(() => e.texts.length === 1, 'the first status');
    expect(e.texts[0]).toEqual({ type: 'status', state: 'running', holder: null, help: null, steps: 0 });
    control.setStatus({ steps: 3 });
    control.setStatus({ state: 'help', help: 'a captcha' });
    const closed = closedWith(e.ws);
    control.setStatus({ state: 'ended', help: null });
    expect((await closed).code).toBe(1000);
    expect(e.texts.map((m) => [m.state, m.steps, m.help])).toEqual([
      ['running', 0, null],
      ['running', 3, null],
      ['help', 3, 'a captcha'],
      ['ended', 3, null],
    ]);
    const late = await openWs(`ws://127.0.0.1:${endpoint.port}/events?token=${endpoint.token}`);
    if (!('ws' in late)) throw new Error('refused');
    expect((await closedWith(late.ws)).code).toBe(1000);
    expect(late.texts).toEqual([{ type: 'status', state: 'ended', holder: null, help: null, steps: 3 }]);
  });

  it('/control: status, takeover, 409 LIVE_ERR_TAKEN with the holder, 409 LIVE_ERR_NOT_HOLDER, handback, 400 and 405', async () => {
    const control = new TestControl(null);
    endpoint = await startLiveEndpoint({ dir, control });
    const url = `${endpoint.url}/control?token=${endpoint.token}`;
    expect(await httpJson('POST', url, { op: 'status' })).toEqual({ status: 200, body: { state: 'running', holder: null, help: null, steps: 0 } });
    expect(await httpJson('POST', url, { op: 'takeover', who: 'ann' })).toMatchObject({ status: 200, body: { state: 'paused', holder: 'ann' } });
    expect(await httpJson('POST', url, { op: 'takeover', who: 'bob' })).toMatchObject({
      status: 409,
      body: { code: 'LIVE_ERR_TAKEN', holder: 'ann', message: expect.any(String) },
    });
    expect(await httpJson('POST', url, { op: 'handback', who: 'bob' })).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_NOT_HOLDER' } });
    expect(await httpJson('POST', url, { op: 'handback', who: 'ann' })).toMatchObject({ status: 200, body: { state: 'running', holder: null } });
    for (const body of ['not json', { op: 'dance', who: 'x' }, { op: 'takeover' }, { op: 'takeover', who: '' }, { op: 'takeover', who: 'a\nb' }, null]) {
      expect(await httpJson('POST', url, body === null ? 'null' : body), JSON.stringify(body)).toMatchObject({ status: 400, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    }
    expect(await httpJson('POST', url, 'x'.repeat(20_000))).toMatchObject({ status: 400, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    expect(await httpJson('GET', url)).toMatchObject({ status: 405, body: { code: 'LIVE_ERR_BAD_REQUEST' } });
    // A run that ended (the Agent's AGENT_ERR_ILLEGAL_STATE) refuses a takeover as a conflict, not a server fault.
    control.takeover = async () => {
      throw new VncuaError('AGENT_ERR_ILLEGAL_STATE', 'the run has ended: there is nothing to take over');
    };
    expect(await httpJson('POST', url, { op: 'takeover', who: 'ann' })).toMatchObject({
      status: 409,
      body: { code: 'AGENT_ERR_ILLEGAL_STATE', message: expect.stringMatching(/ended/) },
    });
  });
});

describe('memory', () => {
  it('requests that arrive together are answered with one update', async () => {
    const fb = patternFramebuffer(200, 150);
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(fb) });
    let got = 0;
    const w = await openWs(rfbUrl(endpoint), ['binary'], (d) => {
      got += d.length;
    });
    if (!('ws' in w)) throw new Error('refused');
    const requests = Array.from({ length: 50 }, () => Uint8Array.of(3, 1, 0, 0, 0, 0, 0, 200, 0, 150));
    w.ws.send(concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), ...requests]));
    for (let i = 0; i < 20; i++) {
      fb.fill(0, 0, 200, 150, packRgb(i, i, i));
      await new Promise((r) => setImmediate(r));
    }
    const handshake = 12 + 2 + 4 + 24 + Buffer.byteLength(`vncua ${basename(dir)}`);
    const frame = 4 + 12 + 200 * 150 * 4;
    await until(() => got >= handshake + frame, 'one update');
    // The 50 incremental requests all arrived before the damage: merged into one, answered once.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(got).toBe(handshake + frame);
    w.ws.close();
  });

  it('a watcher that stops reading gets no update built until the one on its way is written (no queue)', async () => {
    const W = 1600;
    const H = 1200;
    const fb = patternFramebuffer(W, H);
    endpoint = await startLiveEndpoint({ dir, control: new TestControl(fb) });
    const sizes: number[] = [];
    let lastFrame: Buffer | null = null;
    const w = await openWs(rfbUrl(endpoint), ['binary'], (d) => {
      sizes.push(d.length);
      if (d.length >= W * H * 4) lastFrame = d;
    });
    if (!('ws' in w)) throw new Error('refused');
    const request = (incremental: boolean, x = 0, y = 0, rw = W, rh = H) =>
      Uint8Array.of(3, incremental ? 1 : 0, x >> 8, x & 255, y >> 8, y & 255, rw >> 8, rw & 255, rh >> 8, rh & 255);
    w.ws.send(concatBytes([writeProtocolVersion('3.8'), writeSecurityType(1), writeClientInit(true), request(false)]));
    const frame = 4 + 12 + W * H * 4;
    await until(() => sizes.includes(frame), 'the first frame');
    const socket = (w.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    const before = endpoint.stats().updates;
    for (let i = 0; i < 20; i++) {
      fb.fill(0, 0, W, H, packRgb(i, 100, 200));
      w.ws.send(request(true));
      // Let the request arrive and the damage be delivered (a few loop turns; the socket is what is stuck).
      const seen = endpoint.stats().updates;
      for (let k = 0; k < 20 && endpoint.stats().updates === seen; k++) await new Promise((r) => setTimeout(r, 5));
    }
    // The socket filled up after a frame or two: since then no update was built, however many requests came.
    const built = endpoint.stats().updates - before;
    expect(built).toBeGreaterThanOrEqual(1);
    expect(built, 'at most what the kernel buffers hold, not one per request').toBeLessThanOrEqual(6);
    socket.resume();
    // Once it drains, the requests merged meanwhile get one update with the latest picture.
    await until(() => endpoint!.stats().updates === before + built + 1, 'the update for the merged requests', 60_000);
    await until(() => lastFrame !== null && lastFrame[16] === 19, 'the latest picture to arrive', 60_000);
    expect([...lastFrame!.subarray(16, 19)]).toEqual([19, 100, 200]);
    w.ws.close();
  }, 90_000);
});
