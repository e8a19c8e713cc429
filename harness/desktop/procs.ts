/**
 * Process-group bookkeeping through /proc (Linux). A desktop is one process group led by
 * docker/start.sh, so "is everything gone" means "no live process has that pgid".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** One /proc/PID/stat line, parsed: state letter, parent pid, process group, start time. */
export interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgid: number;
  /** Start time in clock ticks since boot: with the pid, identifies a process across pid reuse. */
  startTicks: number;
}

/** Parse a /proc/PID/stat line (the command name may hold spaces and parentheses). */
export function parseProcStat(pid: number, line: string): ProcStat | undefined {
  const end = line.lastIndexOf(')');
  if (end < 0) return undefined;
  const f = line.slice(end + 2).split(' ');
  const ppid = Number(f[1]);
  const pgid = Number(f[2]);
  const startTicks = Number(f[19]);
  if (!f[0] || !Number.isInteger(ppid) || !Number.isInteger(pgid)) return undefined;
  return { pid, state: f[0], ppid, pgid, startTicks };
}

/** The stat of one process, or undefined when it does not exist. */
export function procStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** True when `pid` exists and is not a zombie (an exited process not yet reaped). */
export function isAlive(pid: number): boolean {
  const s = procStat(pid);
  return s !== undefined && s.state !== 'Z';
}

/** The names of /proc's process directories (its numeric entries). */
function procPidNames(): string[] {
  try {
    return readdirSync('/proc').filter((name) => {
      const c = name.charCodeAt(0);
      return c >= 48 && c <= 57;
    });
  } catch {
    return [];
  }
}

/** `root` and every live process descending from it (e.g. a container's processes, from its init's host pid). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of procPidNames()) {
    const s = procStat(Number(name));
    if (!s || s.state === 'Z') continue;
    const list = children.get(s.ppid) ?? [];
    list.push(s.pid);
    children.set(s.ppid, list);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const p = stack.pop()!;
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** Pids of the live (non-zombie) processes whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of procPidNames()) {
    const s = procStat(Number(name));
    if (s && s.pgid === pgid && s.state !== 'Z') out.push(s.pid);
  }
  return out;
}

/**
 * Pids of live processes whose environment holds `VNCUA_DESKTOP_TAG=<tag>`: start.sh tags
 * every part of a desktop, which finds the ones that left its process group (Chromium's
 * crashpad handler daemonizes).
 */
export function taggedProcesses(tag: string): number[] {
  const needle = Buffer.from(`\0VNCUA_DESKTOP_TAG=${tag}\0`);
  const first = Buffer.from(`VNCUA_DESKTOP_TAG=${tag}\0`);
  const out: number[] = [];
  for (const name of procPidNames()) {
    try {
      const env = readFileSync(`/proc/${name}/environ`);
      if (env.includes(needle) || env.subarray(0, first.length).equals(first)) out.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return out.filter((pid) => pid !== process.pid && isAlive(pid));
}

/** Send `sig` to every process of group `pgid`; false when the group is already empty. */
export function signalGroup(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Wait until group `pgid` has no live process; resolves false if `timeoutMs` passes first. */
export async function waitGroupGone(pgid: number, timeoutMs: number, pollMs = 10): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (performance.now() >= deadline) return false;
    await sleep(pollMs);
  }
}

/**
 * Stop group `pgid` led by `leader`: SIGTERM the leader (it tears its group down itself) or,
 * when the leader is already dead, the whole group; SIGKILL whatever is left after
 * `graceMs`. Resolves once no live process of the group remains (or after the kill grace).
 */
export async function stopGroup(pgid: number, leader: number, graceMs = 6000): Promise<boolean> {
  if (groupMembers(pgid).length === 0) return true;
  if (isAlive(leader)) {
    try {
      process.kill(leader, 'SIGTERM');
    } catch {
      signalGroup(pgid, 'SIGTERM');
    }
  } else {
    signalGroup(pgid, 'SIGTERM');
  }
  if (await waitGroupGone(pgid, graceMs)) return true;
  signalGroup(pgid, 'SIGKILL');
  return waitGroupGone(pgid, 2000);
}

/** SIGTERM, then SIGKILL after `graceMs`, the processes tagged `tag`; resolves when none is left. */
export async function stopTagged(tag: string, graceMs = 1000): Promise<boolean> {
  const deadline = performance.now() + graceMs;
  for (;;) {
    const pids = taggedProcesses(tag);
    if (pids.length === 0) return true;
    const sig = performance.now() < deadline ? 'SIGTERM' : 'SIGKILL';
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
    if (performance.now() > deadline + 2000) return false;
    await sleep(20);
  }
}
