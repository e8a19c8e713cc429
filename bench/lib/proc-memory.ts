/** PSS and RSS (bytes) of one process, from /proc/PID/smaps_rollup; null when it is gone (or unreadable). */
import { readFileSync } from 'node:fs';

/** PSS (shared pages split between the processes sharing them) and RSS of `pid`, bytes; null when it is gone. */
export function memoryOf(pid: number): { pss: number; rss: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
    return { pss: kb('Pss'), rss: kb('Rss') };
  } catch {
    return null;
  }
}
