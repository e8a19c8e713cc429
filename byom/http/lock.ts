/**
 * A cross-process lock on a file path, with no dependency: the lock is a file created with
 * O_CREAT|O_EXCL (`open(path, 'wx')`), which exactly one process can win, holding
 * `{ pid, host, created, nonce }`.
 *
 * A lock is stale, and broken, when its holder is a process on this host that no longer exists,
 * or when it is older than `staleMs` (a holder that hangs, or a lock from another host), or when
 * it is empty/unreadable and its mtime is older than `staleMs` (a holder that died between create
 * and write). Breaking renames the stale file to a unique name first and checks that what was
 * renamed is the very lock judged stale; if a live lock was taken by mistake (it replaced the
 * stale one in between), it is put back with link(), which fails rather than overwrite a newer
 * lock. Release removes the file only if it still holds our nonce.
 */
import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { sleep } from '../../harness/agent/round-trip.ts';
import { isAlive } from '../../harness/desktop/procs.ts';

/** Options of withFileLock(). */
export interface FileLockOptions {
  /** A lock older than this is stale (default 30 000 ms: longer than any token fetch). */
  staleMs?: number;
  /** Give up waiting after this long (default 30 000 ms); then `onTimeout` decides. */
  timeoutMs?: number;
  /** Poll interval while waiting, jittered ±50 % (default 25 ms). */
  pollMs?: number;
  signal?: AbortSignal;
}

/** What the lock file holds. */
export interface LockInfo {
  pid: number;
  host: string;
  created: number;
  nonce: string;
}

/** Result of trying to take the lock: held, or timed out (the caller then proceeds without it). */
export type LockOutcome<T> = { locked: true; value: T } | { locked: false; value: T };

function parseLock(text: string): LockInfo | null {
  try {
    const v = JSON.parse(text) as Partial<LockInfo>;
    if (typeof v.pid === 'number' && typeof v.host === 'string' && typeof v.created === 'number' && typeof v.nonce === 'string') return v as LockInfo;
  } catch {
    // fall through
  }
  return null;
}

/** Why the lock at `path` (content `text`) is stale, or null if it is live. */
async function staleness(path: string, text: string, staleMs: number, now: number): Promise<string | null> {
  const info = parseLock(text);
  if (info) {
    if (info.host === hostname() && info.pid !== process.pid && !isAlive(info.pid)) return `holder pid ${info.pid} is gone`;
    if (now - info.created > staleMs) return `older than ${staleMs} ms`;
    return null;
  }
  try {
    const st = await stat(path);
    if (now - st.mtimeMs > staleMs) return `unreadable and older than ${staleMs} ms`;
  } catch {
    return 'vanished';
  }
  return null;
}

/** Try to create the lock file once; true when we hold it. */
async function tryCreate(path: string, info: LockInfo): Promise<boolean> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    await fh.writeFile(JSON.stringify(info));
  } finally {
    await fh.close();
  }
  return true;
}

/** Break the stale lock whose content was `seen`; returns when done (whether or not it was still there). */
async function breakLock(path: string, seen: string): Promise<void> {
  const aside = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch {
    return; // someone else broke or released it
  }
  let moved = '';
  try {
    moved = await readFile(aside, 'utf8');
  } catch {
    // gone: nothing to restore
  }
  if (moved !== seen && moved !== '') {
    // A live lock replaced the stale one between our read and our rename: put it back unless a newer one exists.
    try {
      await link(aside, path);
    } catch {
      // a newer lock is in place; the one we moved is lost to its holder (it will see its nonce gone at release)
    }
  }
  try {
    await unlink(aside);
  } catch {
    // already gone
  }
}

/** Release our lock: remove the file only if it still holds our nonce. */
async function release(path: string, nonce: string): Promise<void> {
  try {
    const info = parseLock(await readFile(path, 'utf8'));
    if (info?.nonce === nonce) await unlink(path);
  } catch {
    // gone already
  }
}

/**
 * Run `fn` while holding the lock at `path`. Waits while another live process holds it, breaking
 * stale locks. If the lock cannot be had within `timeoutMs`, `fn` runs anyway without it (it must
 * stay correct unlocked, only less economical) and `locked` is false.
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<LockOutcome<T>> {
  const staleMs = options.staleMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const pollMs = options.pollMs ?? 25;
  const info: LockInfo = { pid: process.pid, host: hostname(), created: Date.now(), nonce: randomBytes(8).toString('hex') };
  const deadline = Date.now() + timeoutMs;
  let held = false;
  for (;;) {
    info.created = Date.now();
    if (await tryCreate(path, info)) {
      held = true;
      break;
    }
    let seen: string | null = null;
    try {
      seen = await readFile(path, 'utf8');
    } catch {
      continue; // released in between: try again at once
    }
    if ((await staleness(path, seen, staleMs, Date.now())) !== null) {
      await breakLock(path, seen);
      continue;
    }
    if (Date.now() >= deadline) break;
    await sleep(pollMs * (0.5 + Math.random()), options.signal);
  }
  if (!held) return { locked: false, value: await fn() };
  try {
    return { locked: true, value: await fn() };
  } finally {
    await release(path, info.nonce);
  }
}
