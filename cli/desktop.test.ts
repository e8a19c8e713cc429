import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { groupMembers, stopGroup } from '../harness/desktop/index.ts';
import { cdpJson, rfbGreeting } from '../harness/desktop/test-helpers.ts';

const BIN = fileURLToPath(new URL('../bin/vncua.js', import.meta.url));
// A private state dir, so these tests never see (or stop) anybody else's desktops.
const STATE = mkdtempSync(join(tmpdir(), 'vncua-cli-test-'));
const env = { ...process.env, VNCUA_STATE_DIR: STATE };

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
function vncua(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [BIN, 'desktop', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (b) => (stdout += b));
  p.stderr.on('data', (b) => (stderr += b));
  return new Promise((resolve) => p.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** Start `vncua desktop up ...` and wait for its JSON line. */
async function up(args: string[] = []): Promise<{ proc: ChildProcess; info: UpLine; exit: Promise<number | null> }> {
  const proc = spawn(process.execPath, [BIN, 'desktop', 'up', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
    expect(listed.stdout.trim().split('\n').map((l) => (JSON.parse(l) as UpLine).pid)).toEqual([u.info.pid]);

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

  it('up with a bad size exits 1 with DESKTOP_ERR_BAD_SIZE; unknown arguments exit 2', async () => {
    const bad = await vncua(['up', '--size', '10x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('DESKTOP_ERR_BAD_SIZE');
    expect((await vncua(['up', '--frobnicate'])).code).toBe(2);
    expect((await vncua(['sideways'])).code).toBe(2);
  });
});
