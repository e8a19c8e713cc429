import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { groupMembers, stopGroup } from '../harness/desktop/index.ts';
import { cdpJson, rfbGreeting, rfbSecurityTypes } from '../harness/desktop/test-helpers.ts';

const BIN = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
// A private state dir, so these tests never see (or stop) anybody else's desktops.
const STATE = mkdtempSync(join(tmpdir(), 'vncua-cli-test-'));
const env: NodeJS.ProcessEnv = { ...process.env, VNCUA_STATE_DIR: STATE };
delete env.VNCUA_VNC_PASSWORD;

interface UpLine {
  vncUrl: string;
  cdpUrl: string;
  display: string;
  pid: number;
  desktopPid: number;
}

const ups: Array<{ proc: ChildProcess; info?: UpLine }> = [];
afterAll(async () => {
  for (const u of ups) {
    u.proc.kill('SIGKILL');
    if (u.info) await stopGroup(u.info.desktopPid, u.info.desktopPid);
  }
  rmSync(STATE, { recursive: true, force: true });
});

/** Run `vncua desktop ...` to completion. */
function vncua(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [BIN, 'desktop', ...args], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (b) => (stdout += b));
  p.stderr.on('data', (b) => (stderr += b));
  return new Promise((resolve) => p.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Start `vncua desktop up ...` and wait for its JSON line. */
async function up(args: string[] = [], extra: Record<string, string> = {}): Promise<{ proc: ChildProcess; info: UpLine; exit: Promise<number | null> }> {
  const proc = spawn(process.execPath, [BIN, 'desktop', 'up', ...args], { env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry: { proc: ChildProcess; info?: UpLine } = { proc };
  ups.push(entry);
  const exit = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  let stderr = '';
  proc.stderr!.on('data', (b) => (stderr += b));
  const line = await Promise.race([
    new Promise<string>((r) => createInterface({ input: proc.stdout! }).once('line', r)),
    exit.then((code) => {
      throw new Error(`desktop up exited with ${code}: ${stderr}`);
    }),
  ]);
  entry.info = JSON.parse(line) as UpLine;
  return { proc, info: entry.info, exit };
}

describe('vncua desktop', () => {
  it('up prints one JSON line and serves VNC and CDP; down stops it and says so; down again is DESKTOP_ERR_NOT_RUNNING', async () => {
    const u = await up(['--size', '1024x768']);
    expect(u.info.pid).toBe(u.proc.pid);
    expect(await rfbGreeting(u.info.vncUrl)).toMatch(/^RFB 003\.00\d\n$/);
    expect((await cdpJson<{ Browser: string }>(u.info.cdpUrl, '/json/version')).Browser).toMatch(/Chrom/);
    expect(existsSync(join(STATE, `${u.info.pid}.json`))).toBe(true);

    const listed = await vncua(['list']);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as UpLine).pid),
    ).toEqual([u.info.pid]);

    const down = await vncua(['down']);
    expect(down.code).toBe(0);
    expect(down.stdout).toContain(`pid ${u.info.pid}`);
    expect(await u.exit).toBe(0);
    expect(groupMembers(u.info.desktopPid)).toEqual([]);
    expect(existsSync(join(STATE, `${u.info.pid}.json`))).toBe(false);

    const again = await vncua(['down']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('DESKTOP_ERR_NOT_RUNNING');
  });

  it('down --pid stops only that desktop; SIGTERM stops `up` cleanly', async () => {
    const [a, b] = await Promise.all([up(), up()]);
    const down = await vncua(['down', '--pid', String(a.info.desktopPid)]);
    expect(down.code).toBe(0);
    expect(await a.exit).toBe(0);
    expect(groupMembers(a.info.desktopPid)).toEqual([]);
    expect(groupMembers(b.info.desktopPid).length).toBeGreaterThan(0);

    b.proc.kill('SIGTERM');
    expect(await b.exit).toBe(0);
    expect(groupMembers(b.info.desktopPid)).toEqual([]);
    expect((await vncua(['down', '--all'])).code).toBe(1);
  });

  it('bad input exits 2 with a coded one-line error before anything starts: size, arguments, passwords', async () => {
    const bad = await vncua(['up', '--size', '10x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.split('\n')[0]).toMatch(/^vncua desktop up: CLI_ERR_BAD_ARGS: --size/);
    expect((await vncua(['up', '--frobnicate'])).stderr).toMatch(/^vncua desktop up: CLI_ERR_BAD_ARGS: /);
    expect((await vncua(['up', '--frobnicate'])).code).toBe(2);
    expect((await vncua(['sideways'])).code).toBe(2);
    // A password on the command line is refused (ps would show it), and never repeated.
    for (const args of [['--password', 'hunter2-secret'], ['--password=hunter2-secret']]) {
      const r = await vncua(['up', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')[0]).toMatch(/^vncua desktop up: DESKTOP_ERR_BAD_PASSWORD: /);
      expect(r.stderr + r.stdout).not.toContain('hunter2-secret');
    }
    // A missing, empty or unreadable password never means "no password".
    const empty = join(STATE, 'empty.pw');
    writeFileSync(empty, '', { mode: 0o600 });
    for (const [args, extra] of [
      [['--password-file', join(STATE, 'missing.pw')], {}],
      [['--password-file', empty], {}],
      [[], { VNCUA_VNC_PASSWORD: '' }],
    ] as Array<[string[], Record<string, string>]>) {
      const r = await vncua(['up', ...args], extra);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')[0]).toMatch(/^vncua desktop up: DESKTOP_ERR_BAD_PASSWORD: /);
    }
    expect(readdirSync(STATE).filter((n) => n.endsWith('.json'))).toEqual([]); // nothing started, nothing recorded
  });

  it('VNCUA_VNC_PASSWORD (or --password-file) turns on VNC Authentication; the record is private; list shows it, down hides the token', async () => {
    const file = join(STATE, 'pw');
    writeFileSync(file, 'filepw12\n', { mode: 0o600 });
    const u = await up(['--password-file', file]);
    expect(await rfbSecurityTypes(u.info.vncUrl)).toEqual([2]);
    const rec = join(STATE, `${u.info.pid}.json`);
    expect(statSync(rec).mode & 0o777).toBe(0o600);
    expect(readFileSync(rec, 'utf8')).not.toContain('filepw12');
    const listed = await vncua(['list']);
    expect(listed.stdout).toContain(u.info.cdpUrl);
    const down = await vncua(['down']);
    expect(down.code).toBe(0);
    expect(down.stdout).not.toContain(new URL(u.info.vncUrl).pathname.slice(1));
    expect(await u.exit).toBe(0);

    const e = await up([], { VNCUA_VNC_PASSWORD: 'envpw123' });
    expect(await rfbSecurityTypes(e.info.vncUrl)).toEqual([2]);
    e.proc.kill('SIGTERM');
    expect(await e.exit).toBe(0);
  });

  it('a state dir other users can enter is refused (DESKTOP_ERR_STATE_DIR): its records hold tokens', async () => {
    const open = mkdtempSync(join(tmpdir(), 'vncua-cli-open-'));
    try {
      chmodSync(open, 0o755);
      const r = await vncua(['list'], { VNCUA_STATE_DIR: open });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^vncua desktop: DESKTOP_ERR_STATE_DIR: /);
    } finally {
      rmSync(open, { recursive: true, force: true });
    }
  });
});
