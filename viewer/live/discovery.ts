/**
 * Finding the live runs under a results root: run directories holding `live.json` (harness/live/control.ts
 * LiveAnnouncement) whose pid is alive. A live.json whose process is gone (a crashed runner) is stale:
 * reported as such, never removed (the viewer writes nothing under ROOT but its caches).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { LiveAnnouncement } from '../../harness/live/control.ts';
import { isMovedAsideName } from '../../eval/layout.ts';

/** The announcement file's name in a run directory. */
export const LIVE_FILE = 'live.json';

/** One live.json found under ROOT. */
export interface FoundLive {
  /** The run directory relative to ROOT, POSIX separators ('.' for ROOT itself), as the run list names it. */
  dir: string;
  abs: string;
  /** The announcement, or null when live.json cannot be read as one (then `problem` says why). */
  announcement: LiveAnnouncement | null;
  problem: string | null;
  /** The announcing process is alive (false: a stale live.json). */
  alive: boolean;
}

/** Directories never holding runs (a run's own recording, screenshots, the viewer's cache, moved-aside runs are walked past). */
const SKIP = new Set(['recording', 'action_screenshots', 'node_modules', '.git', '.vncua-viewer']);
/** Files that make a directory a run (its subdirectories are not walked). */
const RUN_MARKS = ['task.json', 'execution.json', 'partial_execution.json', 'result.json', LIVE_FILE];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether process `pid` exists (EPERM: it does, another user's). */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `text` as a LiveAnnouncement, or the reason it is not one. Only loopback http: URLs are accepted (the endpoint listens on 127.0.0.1). */
export function parseAnnouncement(text: string): { announcement: LiveAnnouncement } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { problem: 'live.json is not JSON (still being written, or damaged)' };
  }
  const a = data as Partial<LiveAnnouncement> | null;
  if (typeof a !== 'object' || a === null || a.version !== 1) return { problem: 'live.json is not a version 1 announcement' };
  if (typeof a.token !== 'string' || a.token.length === 0) return { problem: 'live.json has no token' };
  if (typeof a.pid !== 'number' || !Number.isSafeInteger(a.pid)) return { problem: 'live.json has no pid' };
  let url: URL;
  try {
    url = new URL(String(a.url));
  } catch {
    return { problem: 'live.json has no valid url' };
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) return { problem: `live.json names ${url.protocol}//${url.hostname}: only a loopback http: endpoint is followed` };
  return { announcement: { version: 1, url: url.origin, token: a.token, pid: a.pid, started_at: typeof a.started_at === 'number' ? a.started_at : 0 } };
}

/** Read `<abs>/live.json` (null when there is none). */
export async function readLive(root: string, abs: string): Promise<FoundLive | null> {
  let text: string;
  try {
    text = await readFile(join(abs, LIVE_FILE), 'utf8');
  } catch {
    return null;
  }
  const dir = relative(root, abs).split(sep).join('/') || '.';
  const p = parseAnnouncement(text);
  if ('problem' in p) return { dir, abs, announcement: null, problem: p.problem, alive: false };
  return { dir, abs, announcement: p.announcement, problem: null, alive: pidAlive(p.announcement.pid) };
}

/**
 * Every live.json under `root` (ROOT itself included), alive or stale, in path order. The walk stops at run
 * directories and skips recordings, screenshots, dot directories and the viewer's caches; `maxDepth` levels at most.
 */
export async function findLive(root: string, opts: { maxDepth?: number; signal?: AbortSignal } = {}): Promise<FoundLive[]> {
  const out: FoundLive[] = [];
  const maxDepth = opts.maxDepth ?? 8;
  const walk = async (abs: string, depth: number): Promise<void> => {
    if (opts.signal?.aborted) return;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch {
      return;
    }
    const names = new Set(entries.map((e) => e.name));
    if (names.has(LIVE_FILE)) {
      const found = await readLive(root, abs);
      if (found) out.push(found);
    }
    if (RUN_MARKS.some((m) => names.has(m)) || depth >= maxDepth) return;
    const subdirs = entries.filter((e) => e.isDirectory() && !SKIP.has(e.name) && !e.name.startsWith('.') && !isMovedAsideName(e.name)).map((e) => e.name);
    for (const name of subdirs.sort()) await walk(join(abs, name), depth + 1);
  };
  await walk(root, 0);
  return out;
}
