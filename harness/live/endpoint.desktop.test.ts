/**
 * The live endpoint on a REAL desktop: TigerVNC Xvnc, a real VncClient as "the agent" (a minimal
 * LiveControl over it: the real Agent's is built on wt/agent-takeover), and second VncClients as
 * watchers through the endpoint's /rfb. Watchers see the agent's pixels exactly, follow changes and a
 * resize, and the VNC server sees exactly one connection: the agent's.
 */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type VncClient, connectVnc } from '../rfb/client.ts';
import type { Framebuffer } from '../rfb/framebuffer.ts';
import { PATTERN_BG, PATTERN_COLOURS, PATTERN_FG, tileXbm } from '../rfb/test-helpers/pattern.ts';
import { type XvncServer, startXvnc } from '../rfb/test-helpers/xvnc.ts';
import { type RunningLiveEndpoint, startLiveEndpoint } from './endpoint.ts';
import { expectSamePixels } from './rfb-server/test-helpers.ts';
import { TestControl, closedWith, httpJson, openWs, until } from './test-helpers.ts';

let dir: string;
let xvnc: XvncServer;
let agent: VncClient;
let control: TestControl;
let endpoint: RunningLiveEndpoint;
const watchers: VncClient[] = [];

/** True when two framebuffers hold the same size and RGB. */
function same(a: Framebuffer, b: Framebuffer): boolean {
  try {
    expectSamePixels(a, b);
    return true;
  } catch {
    return false;
  }
}

const accepted = () => (xvnc.log().match(/Connections: accepted/g) ?? []).length;

async function mouse(): Promise<{ x: number; y: number }> {
  const out = await xvnc.x('xdotool', ['getmouselocation']);
  const m = /x:(\d+) y:(\d+)/.exec(out);
  if (!m) throw new Error(`xdotool said ${out}`);
  return { x: Number(m[1]), y: Number(m[2]) };
}

async function watch(who: string, viewOnly = false): Promise<VncClient> {
  const c = await connectVnc(`ws://127.0.0.1:${endpoint.port}/rfb?token=${endpoint.token}&who=${who}${viewOnly ? '&view_only=1' : ''}`, { timeoutMs: 20_000 });
  watchers.push(c);
  return c;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vncua-live-desktop-'));
  writeFileSync(join(dir, 'tile.xbm'), tileXbm());
  xvnc = await startXvnc({ geometry: '320x200' });
  await xvnc.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
  agent = await connectVnc(`tcp://127.0.0.1:${xvnc.port}`, { timeoutMs: 20_000 });
  // A cursor shape for the Cursor pseudo-encoding to carry (Xvnc sends it when it changes).
  await xvnc.x('xsetroot', ['-cursor_name', 'left_ptr']);
  agent.pointerEvent(40, 30, 0);
  control = new TestControl(agent.framebuffer, (e) => (e.type === 'pointer' ? agent.pointerEvent(e.x, e.y, e.buttonMask) : agent.keyEvent(e.keysym, e.down)));
  endpoint = await startLiveEndpoint({ dir, control, title: 'live desktop test' });
});

afterAll(async () => {
  for (const w of watchers) await w.close().catch(() => {});
  await endpoint?.close();
  await agent?.close().catch(() => {});
  await xvnc?.stop().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe('the live endpoint over a real Xvnc', () => {
  it("a watcher's framebuffer equals the agent's pixel for pixel, cursor shape included, and live.json is there at 0600", async () => {
    const path = join(dir, 'live.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const w = await watch('ann');
    expect(w.name).toBe('live desktop test');
    expect(w.resolution()).toEqual({ width: 320, height: 200 });
    // (The pattern is not checked whole: Xvnc blends the theme cursor's soft edge into the picture at the pointer.)
    expect(w.framebuffer.pixel(0, 0).slice(0, 3)).toEqual(PATTERN_FG);
    expect(w.framebuffer.pixel(1, 0).slice(0, 3)).toEqual(PATTERN_BG);
    expectSamePixels(w.framebuffer, agent.framebuffer);
    await until(() => agent.framebuffer.cursorShape !== null, "the agent's cursor shape");
    await until(() => w.framebuffer.cursorShape !== null, "the watcher's cursor shape");
    expect(w.framebuffer.cursorShape).toEqual(agent.framebuffer.cursorShape);
  });

  it('after a change on the desktop, two watchers see the same pixels as the agent', async () => {
    const a = watchers[0]!;
    const b = await watch('bob', true);
    for (const colour of ['#102030', '#c08040']) {
      await xvnc.x('xsetroot', ['-solid', colour]);
      const r = Number.parseInt(colour.slice(1, 3), 16);
      await until(() => agent.framebuffer.pixel(0, 0)[0] === r && agent.framebuffer.pixel(319, 199)[0] === r, `the agent to see ${colour}`);
      await until(() => same(a.framebuffer, agent.framebuffer) && same(b.framebuffer, agent.framebuffer), `the watchers to see ${colour}`);
    }
    await xvnc.x('xsetroot', ['-bitmap', join(dir, 'tile.xbm'), ...PATTERN_COLOURS]);
    await until(() => same(a.framebuffer, agent.framebuffer) && same(b.framebuffer, agent.framebuffer) && agent.framebuffer.pixel(0, 0)[0] === 0x33, 'the pattern again');
  });

  it('view_only drops input; a person who took over moves the real pointer; a second person gets 409', async () => {
    const ann = watchers[0]!;
    const bob = watchers[1]!; // view-only
    const start = await mouse();
    const seen = control.inputs.length;
    bob.pointerEvent(11, 12, 0);
    await bob.sync({ timeoutMs: 10_000 });
    expect(control.inputs.length, "a view-only watcher's input never reaches the control").toBe(seen);
    ann.pointerEvent(21, 22, 0);
    await ann.sync({ timeoutMs: 10_000 });
    expect(control.inputs.at(-1)).toEqual({ who: 'ann', event: { type: 'pointer', x: 21, y: 22, buttonMask: 0 } });
    await agent.sync({ timeoutMs: 10_000 });
    expect(await mouse(), 'ann does not hold control yet: her input was dropped').toEqual(start);

    const events = await openWs(`ws://127.0.0.1:${endpoint.port}/events?token=${endpoint.token}`);
    if (!('ws' in events)) throw new Error('refused');
    const url = `${endpoint.url}/control?token=${endpoint.token}`;
    expect(await httpJson('POST', url, { op: 'takeover', who: 'ann' })).toMatchObject({ status: 200, body: { state: 'paused', holder: 'ann' } });
    expect(await httpJson('POST', url, { op: 'takeover', who: 'bob' })).toMatchObject({ status: 409, body: { code: 'LIVE_ERR_TAKEN', holder: 'ann' } });
    ann.pointerEvent(50, 60, 0);
    await ann.sync({ timeoutMs: 10_000 });
    await agent.sync({ timeoutMs: 10_000 });
    expect(await mouse()).toEqual({ x: 50, y: 60 });
    expect(await httpJson('POST', url, { op: 'handback', who: 'ann' })).toMatchObject({ status: 200, body: { state: 'running', holder: null } });
    await until(() => events.texts.length >= 3, 'three status messages');
    expect(events.texts.map((m) => m.holder)).toEqual([null, 'ann', null]);
    events.ws.close();
  });

  it('follows an xrandr resize (DesktopSize) and stays equal', async () => {
    const a = watchers[0]!;
    await xvnc.x('xrandr', ['--fb', '400x240']);
    await until(() => agent.resolution().width === 400 && a.resolution().width === 400, 'both to be 400 wide');
    await until(() => same(a.framebuffer, agent.framebuffer), 'the watcher to equal the agent after the resize');
    expect(a.resolution()).toEqual({ width: 400, height: 240 });
  });

  it('refuses a wrong token with 403 LIVE_ERR_TOKEN; the VNC server saw exactly one connection; close() ends it all', async () => {
    const bad = await openWs(`ws://127.0.0.1:${endpoint.port}/rfb?token=${'0'.repeat(32)}&who=x`);
    expect('refused' in bad && bad.refused).toMatchObject({ status: 403, body: { code: 'LIVE_ERR_TOKEN' } });
    expect(await httpJson('POST', `${endpoint.url}/control?token=wrong`, { op: 'status' })).toMatchObject({ status: 403, body: { code: 'LIVE_ERR_TOKEN' } });
    expect(endpoint.watchers).toBe(2);
    expect(accepted(), "only the agent's connection reached Xvnc").toBe(1);
    const raw = await openWs(`ws://127.0.0.1:${endpoint.port}/rfb?token=${endpoint.token}&who=late`);
    if (!('ws' in raw)) throw new Error('refused');
    const closed = closedWith(raw.ws);
    await endpoint.close();
    expect((await closed).code).toBe(1001);
    await until(() => watchers.every((w) => w.closed), 'every watcher to be closed');
    expect(existsSync(join(dir, 'live.json'))).toBe(false);
    expect(agent.closed, "the agent's own connection is untouched").toBe(false);
    expect(accepted()).toBe(1);
  });
});
