import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findLive, parseAnnouncement, pidAlive, readLive } from './discovery.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
async function tmp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'vncua-live-find-'));
  cleanup.push(() => rm(d, { recursive: true, force: true }));
  return d;
}
/** The pid of a process that has exited (and been reaped). */
async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((r) => p.once('exit', r));
  return p.pid!;
}
const announcement = (pid: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ version: 1, url: 'http://127.0.0.1:45678', token: 'ab'.repeat(16), pid, started_at: 1_700_000_000_000, ...extra });
async function put(root: string, dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(join(root, dir), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(root, dir, name), text);
}

describe('live run discovery', () => {
  it('pidAlive: this process yes, an exited one no, nonsense no', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(await deadPid())).toBe(false);
    expect(pidAlive(0)).toBe(false);
    expect(pidAlive(-1)).toBe(false);
    expect(pidAlive(1.5)).toBe(false);
  });

  it('parseAnnouncement accepts a version 1 announcement on loopback only', () => {
    expect(parseAnnouncement(announcement(7))).toEqual({
      announcement: { version: 1, url: 'http://127.0.0.1:45678', token: 'ab'.repeat(16), pid: 7, started_at: 1_700_000_000_000 },
    });
    expect(parseAnnouncement('{"version":1,')).toEqual({ problem: expect.stringContaining('not JSON') });
    expect(parseAnnouncement(announcement(7, { version: 2 }))).toEqual({ problem: expect.stringContaining('version 1') });
    expect(parseAnnouncement(announcement(7, { token: '' }))).toEqual({ problem: expect.stringContaining('token') });
    expect(parseAnnouncement(announcement(7, { pid: 'x' }))).toEqual({ problem: expect.stringContaining('pid') });
    expect(parseAnnouncement(announcement(7, { url: 'http://10.1.2.3:80' }))).toEqual({ problem: expect.stringContaining('loopback') });
    expect(parseAnnouncement(announcement(7, { url: 'file:///etc/passwd' }))).toEqual({ problem: expect.stringContaining('loopback') });
    expect(parseAnnouncement(announcement(7, { url: 'nope' }))).toEqual({ problem: expect.stringContaining('url') });
  });

  it('finds live.json in run directories of any layout, alive and stale, and writes nothing', async () => {
    const root = await tmp();
    const dead = await deadPid();
    await put(root, 'replay/1280_800/a', { 'task.json': '{}', 'live.json': announcement(process.pid) });
    await put(root, 'replay/1280_800/b/2', { 'partial_execution.json': '[]', 'live.json': announcement(dead) });
    await put(root, 'replay/1280_800/c', { 'execution.json': '[]' });
    await put(root, 'replay/1280_800/c/recording', { 'live.json': announcement(process.pid) }); // inside a recording: not a run
    await put(root, 'replay/1280_800/d~1', { 'live.json': announcement(process.pid) }); // moved aside by --rerun
    await put(root, '.hidden/x', { 'live.json': announcement(process.pid) });
    await put(root, 'other/run', { 'live.json': '{"version":1' }); // only live.json (a run before its first step)
    const before = await readdir(root, { recursive: true });
    const found = await findLive(root);
    expect(found.map((f) => [f.dir, f.alive, f.problem === null])).toEqual([
      ['other/run', false, false],
      ['replay/1280_800/a', true, true],
      ['replay/1280_800/b/2', false, true],
    ]);
    expect(found[1]!.announcement?.pid).toBe(process.pid);
    expect(await readdir(root, { recursive: true })).toEqual(before);
    expect((await stat(join(root, 'replay/1280_800/b/2/live.json'))).isFile()).toBe(true);
  });

  it('ROOT itself may be the run (vncua run --serve); no live.json is null', async () => {
    const root = await tmp();
    expect(await readLive(root, root)).toBeNull();
    await writeFile(join(root, 'live.json'), announcement(process.pid));
    expect(await findLive(root)).toEqual([expect.objectContaining({ dir: '.', alive: true })]);
  });
});
