/**
 * The O_EXCL lock file: mutual exclusion, stale locks broken (dead holder, too old, empty and
 * old), live locks waited for, and release never removing a lock that is not ours.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../harness/desktop/procs.ts';
import { withFileLock } from './lock.ts';

let dir: string;
let sleeper: ChildProcess;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-lock-'));
  sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], { stdio: 'ignore' });
});
afterAll(async () => {
  sleeper?.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const lockContent = (pid: number, created = Date.now()) => JSON.stringify({ pid, host: hostname(), created, nonce: 'theirs' });

async function deadPid(): Promise<number> {
  const p = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => p.once('exit', r));
  return p.pid!;
}

describe('withFileLock', () => {
  it('lets one holder in at a time and removes the lock after', async () => {
    const path = join(dir, 'a.lock');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    const results = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        withFileLock(
          path,
          async () => {
            inside++;
            most = Math.max(most, inside);
            await new Promise((r) => setTimeout(r, 15));
            order.push(i);
            inside--;
            return i;
          },
          { pollMs: 2 },
        ),
      ),
    );
    expect(most).toBe(1);
    expect(results.map((r) => r.locked)).toEqual([true, true, true, true, true]);
    expect(order.sort()).toEqual([1, 2, 3, 4, 5]);
    expect(existsSync(path)).toBe(false);
  });

  it('breaks a lock whose holder process is gone', async () => {
    const path = join(dir, 'dead.lock');
    const pid = await deadPid();
    expect(isAlive(pid)).toBe(false);
    await writeFile(path, lockContent(pid));
    const r = await withFileLock(path, async () => JSON.parse(await readFile(path, 'utf8')) as { pid: number }, { timeoutMs: 5000 });
    expect(r.locked).toBe(true);
    expect(r.value.pid).toBe(process.pid);
    expect(existsSync(path)).toBe(false);
  });

  it("waits for a live holder; past timeoutMs it runs without the lock and leaves the holder's lock alone", async () => {
    const path = join(dir, 'live.lock');
    expect(isAlive(sleeper.pid!)).toBe(true);
    await writeFile(path, lockContent(sleeper.pid!));
    let ran = false;
    const r = await withFileLock(path, async () => (ran = true), { timeoutMs: 150, pollMs: 10 });
    expect(r).toEqual({ locked: false, value: true });
    expect(ran).toBe(true);
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ pid: sleeper.pid, nonce: 'theirs' });
  });

  it('breaks a lock older than staleMs even if its holder lives, and an empty lock file whose mtime is old', async () => {
    const old = join(dir, 'old.lock');
    await writeFile(old, lockContent(sleeper.pid!, Date.now() - 60_000));
    expect((await withFileLock(old, async () => 1, { staleMs: 30_000, timeoutMs: 5000 })).locked).toBe(true);

    const empty = join(dir, 'empty.lock');
    await writeFile(empty, '');
    // A fresh empty file is a holder between create and write: waited for.
    expect((await withFileLock(empty, async () => 1, { staleMs: 30_000, timeoutMs: 100, pollMs: 10 })).locked).toBe(false);
    const past = new Date(Date.now() - 60_000);
    await utimes(empty, past, past);
    expect((await withFileLock(empty, async () => 1, { staleMs: 30_000, timeoutMs: 5000 })).locked).toBe(true);
    expect(existsSync(empty)).toBe(false);
  });

  it('release does not remove a lock that another holder put in place meanwhile', async () => {
    const path = join(dir, 'taken.lock');
    const other = lockContent(sleeper.pid!);
    await withFileLock(path, async () => {
      await writeFile(path, other); // as if ours had been judged stale and another process had taken over
    });
    expect(await readFile(path, 'utf8')).toBe(other);
    await rm(path);
  });
});
