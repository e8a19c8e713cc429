import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { launchDesktop, startScriptPath, type Desktop } from './launch.ts';
import { groupMembers, procStat, taggedProcesses, waitGroupGone } from './procs.ts';
import { cdpEvaluate, cdpJson, chromiumWindows, eventually, portRefuses, rfbGreeting, rfbSecurityTypes, servePage, xScreenSize, type CdpTarget } from './test-helpers.ts';

// Every desktop a test starts, so afterAll can stop what a failed test left behind.
const started: Desktop[] = [];
async function launch(opts: Parameters<typeof launchDesktop>[0] = {}): Promise<Desktop> {
  const d = await launchDesktop({ timeoutMs: 45_000, ...opts });
  started.push(d);
  return d;
}
afterAll(async () => {
  await Promise.all(started.map((d) => d.close()));
});

async function rejection(p: Promise<unknown>): Promise<VncuaError> {
  try {
    await p;
  } catch (e) {
    if (isVncuaError(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

/** Every endpoint of a running desktop answers and the screen has the asked-for size. */
async function expectWorkingDesktop(d: Desktop, width: number, height: number, pageUrl: string): Promise<void> {
  expect({ width: d.width, height: d.height }).toEqual({ width, height });
  expect(await xScreenSize(d)).toEqual({ width, height });

  const version = await cdpJson<{ Browser: string }>(d.cdpUrl, '/json/version');
  expect(version.Browser).toMatch(/Chrom/);
  const pages = await eventually(async () => {
    const list = await cdpJson<CdpTarget[]>(d.cdpUrl, '/json/list');
    return list.filter((t) => t.type === 'page' && t.url === pageUrl).length > 0 ? list : undefined;
  });
  expect(pages?.filter((t) => t.type === 'page').map((t) => t.url)).toEqual([pageUrl]);

  expect(await rfbGreeting(d.vncUrl)).toMatch(/^RFB 003\.00\d\n$/);
  expect(await rfbGreeting(`unix://${d.rfbSocket}`)).toMatch(/^RFB 003\.00\d\n$/);
  if (d.tcpUrl !== undefined) expect(await rfbGreeting(d.tcpUrl)).toMatch(/^RFB 003\.00\d\n$/);

  // The kiosk window covers the screen exactly (the window manager at work).
  const windows = await eventually(async () => {
    const w = await chromiumWindows(d);
    return w.some((g) => g.width === width && g.height === height) ? w : undefined;
  });
  expect(windows).toContainEqual({ x: 0, y: 0, width, height });
  const viewport = await eventually(async () => {
    const v = (await cdpEvaluate(d.cdpUrl, '[innerWidth, innerHeight]')) as number[];
    return v[0] === width && v[1] === height ? v : undefined;
  });
  expect(viewport).toEqual([width, height]);
}

/** After close(): no live process in the desktop's group or carrying its tag, every port refuses, no temp dir. */
async function expectGone(d: { pid: number; wsPort: number; rfbPort?: number | null; cdpPort: number; tmpDir: string }): Promise<void> {
  expect(groupMembers(d.pid)).toEqual([]);
  expect(taggedProcesses(d.tmpDir)).toEqual([]);
  expect(existsSync(d.tmpDir)).toBe(false);
  for (const p of [d.wsPort, d.cdpPort, ...(d.rfbPort ? [d.rfbPort] : [])]) expect(await portRefuses(p)).toBe(true);
}

describe('launchDesktop', () => {
  it('1280x800: X size, CDP, page at the start URL, RFB over ws and tcp, full-screen window; close() leaves nothing', async () => {
    const page = await servePage('<!doctype html><title>start</title><p>hello</p>');
    try {
      const d = await launch({ url: page.url });
      // Both URLs carry the same fresh 128-bit token; without a password there is no plain TCP port.
      const token = /^ws:\/\/127\.0\.0\.1:(\d+)\/([0-9a-f]{32})$/.exec(d.vncUrl);
      expect(Number(token?.[1])).toBe(d.wsPort);
      expect(d.cdpUrl).toBe(`http://127.0.0.1:${d.cdpPort}/${token?.[2]}/`);
      expect(d.tcpUrl).toBeUndefined();
      expect(d.rfbPort).toBeUndefined();
      expect(d.vncAuth).toBe(false);
      expect(d.rfbSocket).toBe(`${d.tmpDir}/rfb.sock`);
      expect(d.xauthority).toBe(`${d.tmpDir}/Xauthority`);
      expect(statSync(d.tmpDir).mode & 0o777).toBe(0o700);
      expect(statSync(d.xauthority).mode & 0o777).toBe(0o600);
      expect(d.display).toMatch(/^:\d+$/);
      expect(procStat(d.pid)?.pgid).toBe(d.pid);
      const members = groupMembers(d.pid);
      expect(members.length).toBeGreaterThanOrEqual(5); // script, Xvnc, wm, websockify, Chromium (+ helpers)
      await expectWorkingDesktop(d, 1280, 800, page.url);
      // Without a password the server offers None (1) and not VNC Authentication (2).
      const types = await rfbSecurityTypes(d.vncUrl);
      expect(types).toContain(1);
      expect(types).not.toContain(2);

      await d.close();
      await expectGone(d);
      for (const pid of members) expect(procStat(pid) === undefined || procStat(pid)!.state === 'Z').toBe(true);
      expect(await d.exited).toEqual({ code: 0, signal: null });
      await d.close(); // idempotent
    } finally {
      await page.close();
    }
  });

  it('1920x1080 works the same', async () => {
    const page = await servePage('<!doctype html><title>big</title>');
    try {
      const d = await launch({ size: { width: 1920, height: 1080 }, url: page.url });
      await expectWorkingDesktop(d, 1920, 1080, page.url);
      await d.close();
      await expectGone(d);
    } finally {
      await page.close();
    }
  });

  it('--server x11vnc: Xvfb + x11vnc behind the same WebSocket bridge, with and without a password', async () => {
    const page = await servePage('<!doctype html><title>x11vnc</title>');
    try {
      const d = await launch({ server: 'x11vnc', size: '1024x700', url: page.url });
      expect(d.server).toBe('x11vnc');
      await expectWorkingDesktop(d, 1024, 700, page.url);
      expect(await rfbSecurityTypes(d.vncUrl)).toContain(1);
      await d.close();
      await expectGone(d);
      const locked = await launch({ server: 'x11vnc', password: 'secret12' });
      const types = await rfbSecurityTypes(locked.vncUrl);
      expect(types).toContain(2);
      expect(types).not.toContain(1);
      await locked.close();
      await expectGone(locked);
    } finally {
      await page.close();
    }
  });

  it('eight desktops started at once get eight distinct, working sets of ports', async () => {
    const ds = await Promise.all(Array.from({ length: 8 }, () => launch({ timeoutMs: 60_000 })));
    try {
      const all = ds.flatMap((d) => [d.wsPort, d.cdpPort]);
      expect(new Set(all).size).toBe(16);
      expect(new Set(ds.map((d) => new URL(d.vncUrl).pathname)).size).toBe(8); // eight distinct tokens
      expect(new Set(ds.map((d) => d.display)).size).toBe(8);
      expect(new Set(ds.map((d) => d.pid)).size).toBe(8);
      const checks = await Promise.all(ds.map(async (d) => [await rfbGreeting(d.vncUrl), (await cdpJson<{ Browser: string }>(d.cdpUrl, '/json/version')).Browser]));
      for (const [greeting, browser] of checks) {
        expect(greeting).toMatch(/^RFB 003\.00\d\n$/);
        expect(browser).toMatch(/Chrom/);
      }
    } finally {
      await Promise.all(ds.map((d) => d.close()));
    }
    for (const d of ds) await expectGone(d);
  });

  it('a password makes the server offer only VNC Authentication, also on its plain TCP port (opened only then)', async () => {
    const d = await launch({ password: 'secret12' });
    expect(d.vncAuth).toBe(true);
    expect(d.tcpUrl).toBe(`tcp://127.0.0.1:${d.rfbPort}`);
    const types = await rfbSecurityTypes(d.vncUrl);
    expect(types).toContain(2);
    expect(types).not.toContain(1);
    expect(await rfbSecurityTypes(d.tcpUrl!)).toEqual(types);
    expect(await rfbSecurityTypes(`unix://${d.rfbSocket}`)).toEqual(types);
    // The password is on the Desktop for the owner's clients, but never enumerated (logs, JSON).
    expect(d.password).toBe('secret12');
    expect(JSON.stringify(d)).not.toContain('secret12');
    await d.close();
    await expectGone(d);
  });

  it('VNCUA_VNC_PASSWORD works; set but empty is DESKTOP_ERR_BAD_PASSWORD, never "no password"', async () => {
    const d = await launch({ env: { VNCUA_VNC_PASSWORD: 'envpass1' } });
    expect(d.vncAuth).toBe(true);
    expect(await rfbSecurityTypes(d.vncUrl)).toEqual([2]);
    await d.close();
    await expectGone(d);
    const e = await rejection(launchDesktop({ env: { VNCUA_VNC_PASSWORD: '' } }));
    expect(e.code).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect((await rejection(launchDesktop({ password: '' }))).code).toBe('DESKTOP_ERR_BAD_PASSWORD');
    expect((await rejection(launchDesktop({ password: 'two\nlines' }))).code).toBe('DESKTOP_ERR_BAD_PASSWORD');
  });

  it('a desktop dies with its parent Node process, even on SIGKILL', async () => {
    const fixture = fileURLToPath(new URL('./launch-child.fixture.ts', import.meta.url));
    const parent = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: parent.stdout! }).once('line', resolve);
        parent.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
      });
      const info = JSON.parse(line) as { pid: number; wsPort: number; rfbPort: number | null; cdpPort: number; tmpDir: string };
      expect(groupMembers(info.pid).length).toBeGreaterThanOrEqual(5);
      parent.kill('SIGKILL');
      expect(await waitGroupGone(info.pid, 10_000)).toBe(true);
      await eventually(() => !existsSync(info.tmpDir), 5000);
      await expectGone(info);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('when a part dies the desktop tears itself down (exit status 1, nothing left)', async () => {
    const d = await launch();
    const xvnc = groupMembers(d.pid).find((pid) => /^Xvnc/.test(procComm(pid)));
    expect(xvnc).toBeDefined();
    process.kill(xvnc!, 'SIGKILL');
    expect((await d.exited).code).toBe(1);
    expect(await waitGroupGone(d.pid, 10_000)).toBe(true);
    await expect(d.close()).resolves.toBeUndefined(); // an already-dead desktop: no throw
    await expectGone(d);
  });

  it('close() on a desktop whose script was SIGKILLed still stops the orphaned parts', async () => {
    const d = await launch();
    process.kill(d.pid, 'SIGKILL');
    await d.exited;
    expect(groupMembers(d.pid).length).toBeGreaterThan(0); // Xvnc, Chromium... are orphans now
    await d.close();
    await expectGone(d);
  });
});

function procComm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

describe('launchDesktop errors', () => {
  it('a bad size gives DESKTOP_ERR_BAD_SIZE before anything starts', async () => {
    expect((await rejection(launchDesktop({ size: '10x' }))).code).toBe('DESKTOP_ERR_BAD_SIZE');
    expect((await rejection(launchDesktop({ size: '99999x10' }))).code).toBe('DESKTOP_ERR_BAD_SIZE');
    expect((await rejection(launchDesktop({ size: { width: 8, height: 600 } }))).code).toBe('DESKTOP_ERR_BAD_SIZE');
  });

  it('the script itself rejects a bad size with exit status 3 and a JSON error line', async () => {
    const child = spawn('bash', [startScriptPath(), '--json', '--size', '10x'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    const code = await new Promise<number | null>((r) => child.once('close', r));
    expect(code).toBe(3);
    expect(JSON.parse(out.trim())).toMatchObject({ error: 'DESKTOP_ERR_BAD_SIZE' });
  });

  it('the script refuses a password on its command line, an empty VNCUA_VNC_PASSWORD and an empty or missing password file: exit 2, DESKTOP_ERR_BAD_PASSWORD, never echoed', async () => {
    const script = async (args: string[], env: Record<string, string> = {}) => {
      const child = spawn('bash', [startScriptPath(), '--json', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...env } });
      let out = '';
      child.stdout.on('data', (b) => (out += b));
      child.stderr.on('data', (b) => (out += b));
      const code = await new Promise<number | null>((r) => child.once('close', r));
      return { code, out };
    };
    const dir = mkdtempSync(join(tmpdir(), 'vncua-start-pw-'));
    try {
      writeFileSync(join(dir, 'empty'), '');
      for (const [args, env] of [
        [['--password', 'hunter2-secret'], {}],
        [['--password=hunter2-secret'], {}],
        [[], { VNCUA_VNC_PASSWORD: '' }],
        [['--password-file', join(dir, 'empty')], {}],
        [['--password-file', join(dir, 'missing')], {}],
      ] as Array<[string[], Record<string, string>]>) {
        const r = await script(args, env);
        expect(r.code, args.join(' ')).toBe(2);
        expect(JSON.parse(r.out.split('\n').find((l) => l.startsWith('{'))!)).toMatchObject({ error: 'DESKTOP_ERR_BAD_PASSWORD' });
        expect(r.out).not.toContain('hunter2-secret');
      }
      expect(readdirSync(dir)).toEqual(['empty']); // nothing else written
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a missing program gives DESKTOP_ERR_MISSING_BINARY naming it and its apt package', async () => {
    const e = await rejection(launchDesktop({ env: { VNCUA_XVNC: '/nonexistent/Xvnc' } }));
    expect(e.code).toBe('DESKTOP_ERR_MISSING_BINARY');
    expect(e.details).toMatchObject({ program: '/nonexistent/Xvnc', package: 'tigervnc-standalone-server' });
    const e2 = await rejection(launchDesktop({ env: { VNCUA_CHROMIUM: '/nonexistent/chromium' } }));
    expect(e2.details).toMatchObject({ program: '/nonexistent/chromium', package: 'chromium' });
  });

  it('a part that cannot start gives DESKTOP_ERR_START_FAILED with its output, and nothing is left', async () => {
    // `false` is a "browser" that exits at once.
    const e = await rejection(launchDesktop({ env: { VNCUA_CHROMIUM: '/bin/false' } }));
    expect(e.code).toBe('DESKTOP_ERR_START_FAILED');
    expect(typeof e.details?.stderr).toBe('string');
    const pid = e.details?.pid as number;
    expect(Number.isInteger(pid)).toBe(true);
    expect(groupMembers(pid)).toEqual([]);
  });

  it('a timeout gives DESKTOP_ERR_TIMEOUT and stops everything started', async () => {
    const e = await rejection(launchDesktop({ timeoutMs: 150 }));
    expect(e.code).toBe('DESKTOP_ERR_TIMEOUT');
    const pid = e.details?.pid as number;
    expect(Number.isInteger(pid)).toBe(true);
    expect(groupMembers(pid)).toEqual([]);
  });

  it('aborting gives DESKTOP_ERR_ABORTED and stops everything started', async () => {
    const ac = new AbortController();
    const p = launchDesktop({ signal: ac.signal });
    setTimeout(() => ac.abort(new Error('user cancelled')), 200);
    const e = await rejection(p);
    expect(e.code).toBe('DESKTOP_ERR_ABORTED');
    const pid = e.details?.pid as number;
    expect(groupMembers(pid)).toEqual([]);
    // An already-aborted signal starts nothing.
    expect((await rejection(launchDesktop({ signal: AbortSignal.abort() }))).code).toBe('DESKTOP_ERR_ABORTED');
  });
});

/** Listening TCP sockets from /proc/net/tcp: port -> local IPv4 address. */
function listeningAddresses(): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f[3] !== '0A' || !f[1]) continue;
    const [hexIp, hexPort] = f[1].split(':') as [string, string];
    const ip = [3, 2, 1, 0].map((i) => parseInt(hexIp.slice(i * 2, i * 2 + 2), 16)).join('.');
    out.set(parseInt(hexPort, 16), ip);
  }
  return out;
}

describe('start.sh --bind 0.0.0.0 (the Docker mode)', () => {
  it('publishes the WebSocket and CDP (the token protecting both) on all interfaces; Xvnc has no TCP port', async () => {
    const child = spawn('bash', [startScriptPath(), '--json', '--bind', '0.0.0.0'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    try {
      const line = await Promise.race([
        new Promise<string>((r) => createInterface({ input: child.stdout }).once('line', r)),
        exited.then((c) => {
          throw new Error(`start.sh exited with ${c}: ${stderr}`);
        }),
      ]);
      const info = JSON.parse(line) as Desktop & { rfbPort: number | null; tcpUrl: string | null };
      const listening = listeningAddresses();
      expect(listening.get(info.wsPort)).toBe('0.0.0.0');
      expect(listening.get(info.cdpPort)).toBe('0.0.0.0');
      expect(info.rfbPort).toBeNull();
      expect(info.tcpUrl).toBeNull();
      expect(await rfbGreeting(info.vncUrl)).toMatch(/^RFB 003\.00\d\n$/);
      // CDP HTTP and CDP WebSocket both work through the bridge, under the token.
      expect((await cdpJson<{ Browser: string }>(info.cdpUrl, '/json/version')).Browser).toMatch(/Chrom/);
      expect(await cdpEvaluate(info.cdpUrl, '6 * 7')).toBe(42);
      // Reachable on a non-loopback address too, when the machine has one; without the token: 403.
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
      if (external) {
        const token = new URL(info.vncUrl).pathname;
        expect(await rfbGreeting(`ws://${external}:${info.wsPort}${token}`)).toMatch(/^RFB 003\.00\d\n$/);
        expect((await cdpJson<{ Browser: string }>(`http://${external}:${info.cdpPort}${token}/`, 'json/version')).Browser).toMatch(/Chrom/);
        expect((await fetch(`http://${external}:${info.cdpPort}/json/version`)).status).toBe(403);
      }
      child.stdin.end(); // EOF on stdin stops the desktop
      expect(await exited).toBe(0);
      await expectGone(info);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
