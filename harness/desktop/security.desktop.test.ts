/**
 * The desktop belongs to the user who started it (README "Security"): another Unix user (created
 * for the test, removed after) can neither move the pointer, nor read the screen, nor open CDP;
 * the owner's own clients keep working through the token URLs. The parts get a scrubbed
 * environment (no API key, no password) and no secret shows in any process's arguments; no
 * Chromium temp folder outlives a desktop, however it ends.
 */
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SuccessChecker } from '../cdp/success.ts';
import { isVncuaError } from '../errors.ts';
import { connectVnc } from '../rfb/index.ts';
import { launchDesktop, type Desktop, type VncServerKind } from './launch.ts';
import { groupMembers, taggedProcesses, waitGroupGone } from './procs.ts';
import { eventually, servePage, xEnv } from './test-helpers.ts';

const isRoot = process.getuid?.() === 0;

/** Run a program; resolves its exit code and output (never rejects). */
function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 30_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number' ? (err as unknown as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The pointer position the owner's X client sees. */
async function pointer(d: Desktop): Promise<string> {
  const r = await run('xdotool', ['getmouselocation'], { env: xEnv(d) });
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

/** Every TCP port a live process of the desktop (its group, and the parts that left it) listens on. */
function listeningPorts(d: Desktop): number[] {
  const inodes = new Set<string>();
  for (const pid of new Set([...groupMembers(d.pid), ...taggedProcesses(d.tmpDir)])) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSafe(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && f[9] && inodes.has(f[9])) ports.add(parseInt(f[1]!.split(':').at(-1)!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The target of a symlink such as /proc/PID/fd/N, or '' when it is gone. */
function readlinkSafe(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

describe.skipIf(!isRoot)('another Unix user', () => {
  const other = `vncua-other-${randomBytes(3).toString('hex')}`;
  const page = servePage("<!doctype html><title>mine</title><p>the owner's page</p>");
  const desktops: Desktop[] = [];

  /** Run `cmd args` as the other user, with only PATH and `env` in its environment. */
  const asOther = (cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 30_000) =>
    run('runuser', ['-u', other, '--', 'env', '-i', 'PATH=/usr/local/bin:/usr/bin:/bin', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), cmd, ...args], { timeoutMs });

  beforeAll(async () => {
    const add = await run('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', other]);
    if (add.code !== 0) throw new Error(`useradd ${other} failed: ${add.stderr}`);
  });
  afterAll(async () => {
    await Promise.all(desktops.map((d) => d.close()));
    await (await page).close();
    await run('userdel', [other]);
  });

  for (const server of ['xvnc', 'x11vnc'] as VncServerKind[]) {
    it(`${server}: cannot move the pointer, read the screen or open CDP; the owner's clients still can`, async () => {
      const d = await launchDesktop({ server, url: (await page).url, timeoutMs: 45_000 });
      desktops.push(d);
      const token = new URL(d.vncUrl).pathname.slice(1);

      // X: no cookie, no connection (and the cookie file is out of reach).
      const before = await pointer(d);
      for (const env of [{ DISPLAY: d.display }, { DISPLAY: d.display, XAUTHORITY: d.xauthority }] as Array<Record<string, string>>) {
        const move = await asOther('xdotool', ['mousemove', '7', '9'], env);
        expect(move.code).not.toBe(0);
        expect(move.stderr).toMatch(/Authorization required|Can't open display/);
        expect((await asOther('xwd', ['-root', '-silent', '-display', d.display], env)).code).not.toBe(0);
      }
      expect(await pointer(d)).toBe(before);

      // The temp dir (X cookie, RFB socket, token, Chromium profile) is closed to others.
      expect((await asOther('ls', [d.tmpDir])).code).not.toBe(0);
      expect((await asOther('cat', [`${d.tmpDir}/token`])).code).not.toBe(0);
      const sock = await asOther('python3', ['-c', `import socket; socket.socket(socket.AF_UNIX).connect(${JSON.stringify(d.rfbSocket)})`]);
      expect(sock.code).not.toBe(0);
      expect(sock.stderr).toMatch(/Permission denied/);

      // The only TCP ports are the WebSocket bridge and the CDP bridge: Chromium has none to guess.
      expect(listeningPorts(d)).toEqual([d.wsPort, d.cdpPort].sort((a, b) => a - b));

      // The WebSocket bridge and CDP answer 403 without the token (or with a wrong one).
      const upgrade = ['-H', 'Upgrade: websocket', '-H', 'Connection: Upgrade', '-H', 'Sec-WebSocket-Key: dmluY3VhLXByb2JlLWtleQ==', '-H', 'Sec-WebSocket-Version: 13'];
      const status = async (url: string, extra: string[] = []) =>
        (await asOther('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', ...extra, url])).stdout;
      const wrong = randomBytes(16).toString('hex');
      expect(await status(`http://127.0.0.1:${d.wsPort}/`, upgrade)).toBe('403');
      expect(await status(`http://127.0.0.1:${d.wsPort}/${wrong}`, upgrade)).toBe('403');
      for (const path of ['json/version', 'json/list', `${wrong}/json/version`]) expect(await status(`http://127.0.0.1:${d.cdpPort}/${path}`)).toBe('403');
      expect(await status(`http://127.0.0.1:${d.cdpPort}/devtools/browser/x`, upgrade)).toBe('403');
      // A VNC viewer on either port gets no picture (both tried at once: each waits for a greeting that never comes).
      const shots = await Promise.all(
        [d.wsPort, d.cdpPort].map(async (port) => {
          const shot = `/tmp/${other}-${port}.png`;
          const r = await asOther('timeout', ['15', 'gvnccapture', '-q', `127.0.0.1:${port - 5900}`, shot]);
          rmSync(shot, { force: true });
          return r.code;
        }),
      );
      for (const code of shots) expect(code).not.toBe(0);

      // The owner: X with the cookie, VNC and CDP with the token.
      expect((await run('xdotool', ['mousemove', '11', '13'], { env: xEnv(d) })).code).toBe(0);
      expect(await pointer(d)).toMatch(/^x:11 y:13 /);
      const vnc = await connectVnc(d.vncUrl, { timeoutMs: 20_000 });
      try {
        expect((await vnc.screenshot()).width).toBe(d.width);
      } finally {
        await vnc.close();
      }
      const checker = new SuccessChecker(d.cdpUrl, { expression: "document.title === 'mine'" });
      try {
        expect(await eventually(() => checker.check({ timeoutMs: 5000 }), 20_000)).toBe(true);
      } finally {
        await checker.close();
      }
      const browser = await chromium.connectOverCDP(d.cdpUrl);
      try {
        expect(
          browser
            .contexts()
            .flatMap((c) => c.pages())
            .map((p) => p.url()),
        ).toContain((await page).url);
      } finally {
        await browser.close();
      }
      expect(token).toMatch(/^[0-9a-f]{32}$/);
      await d.close();
    });
  }
});

describe('secrets', () => {
  it("the parts' environments hold no API key and no password; no argv holds the password or the token", async () => {
    const key = `sk-vncua-test-${randomBytes(8).toString('hex')}`;
    const password = `p${randomBytes(3).toString('hex')}`;
    const saved = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = key;
    let d: Desktop;
    try {
      d = await launchDesktop({ password, timeoutMs: 45_000 });
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved;
    }
    try {
      const token = new URL(d.vncUrl).pathname.slice(1);
      const pids = new Set([...groupMembers(d.pid), ...taggedProcesses(d.tmpDir), d.pid]);
      expect(pids.size).toBeGreaterThanOrEqual(6); // start.sh, X, VNC, wm, bridges, Chromium (+ helpers)
      let read = 0;
      for (const pid of pids) {
        let environ: string;
        let cmdline: string;
        try {
          environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
          cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
        } catch {
          continue; // exited meanwhile
        }
        read++;
        expect(environ).not.toContain(key);
        expect(environ).not.toContain(password);
        expect(environ).not.toContain('VNCUA_VNC_PASSWORD');
        expect(cmdline).not.toContain(password);
        expect(cmdline).not.toContain(token);
      }
      expect(read).toBeGreaterThanOrEqual(6);
    } finally {
      await d.close();
    }
  });

  it('an empty password is DESKTOP_ERR_BAD_PASSWORD, and the message never repeats a password', async () => {
    const e = await launchDesktop({ password: '' }).catch((x: unknown) => x);
    expect(isVncuaError(e, 'DESKTOP_ERR_BAD_PASSWORD')).toBe(true);
    const f = await launchDesktop({ password: 'abc\ndef-secret' }).catch((x: unknown) => x);
    expect(isVncuaError(f, 'DESKTOP_ERR_BAD_PASSWORD')).toBe(true);
    expect((f as Error).message).not.toContain('def-secret');
  });
});

describe('Chromium temp folders', () => {
  /** A fresh TMPDIR for the desktop: whatever is left in it afterwards was left behind. */
  const freshTmp = () => mkdtempSync(join(tmpdir(), 'vncua-tmpdir-test-'));
  const left = (dir: string) => readdirSync(dir);

  it('none is left after a normal stop, a failed start, or a timeout', async () => {
    const dirs: string[] = [];
    try {
      const a = freshTmp();
      dirs.push(a);
      const d = await launchDesktop({ env: { TMPDIR: a }, timeoutMs: 45_000 });
      expect(d.tmpDir.startsWith(`${a}/`)).toBe(true);
      expect(readdirSync(join(d.tmpDir, 'tmp')).length).toBeGreaterThan(0); // Chromium's own temp dirs live in there
      await d.close();
      expect(left(a)).toEqual([]);

      const b = freshTmp();
      dirs.push(b);
      const failed = await launchDesktop({ env: { TMPDIR: b, VNCUA_CHROMIUM: '/bin/false' } }).catch((x: unknown) => x);
      expect(isVncuaError(failed, 'DESKTOP_ERR_START_FAILED')).toBe(true);
      expect(left(b)).toEqual([]);

      const c = freshTmp();
      dirs.push(c);
      const late = await launchDesktop({ env: { TMPDIR: c }, timeoutMs: 1200 }).catch((x: unknown) => x);
      if (isVncuaError(late)) expect(late.code).toBe('DESKTOP_ERR_TIMEOUT');
      else await (late as Desktop).close(); // a fast machine made it in time
      expect(await eventually(() => left(c).length === 0, 10_000)).toBe(true);
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  it('none is left after kill -9 of the launching Node process', async () => {
    const dir = freshTmp();
    const fixture = fileURLToPath(new URL('./launch-child.fixture.ts', import.meta.url));
    const parent = spawn(process.execPath, ['--import', 'tsx', fixture, '1280x800', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: parent.stdout! }).once('line', resolve);
        parent.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
      });
      const info = JSON.parse(line) as { pid: number; tmpDir: string };
      expect(info.tmpDir.startsWith(`${dir}/`)).toBe(true);
      parent.kill('SIGKILL');
      expect(await waitGroupGone(info.pid, 15_000)).toBe(true);
      expect(await eventually(() => left(dir).length === 0, 10_000)).toBe(true);
    } finally {
      parent.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
