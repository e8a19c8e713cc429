/**
 * How many desktops this machine can hold at once: `vncua eval`'s default --workers.
 *
 *   workers = max(1, min(cores, floor(available memory / DESKTOP_MEMORY_BYTES)))
 *
 * - cores: `os.availableParallelism()` (the CPUs this process may run on). One desktop per core:
 *   Chromium's page work, Xvnc's encoding and the agent's decoding all burst at each action.
 * - available memory: `os.freemem()` (Linux: MemAvailable, what can be allocated without swapping),
 *   capped by the cgroup limit (`process.constrainedMemory()`) when there is one.
 * - DESKTOP_MEMORY_BYTES: one desktop's memory while a task runs plus its worker's share of the
 *   runner, measured by bench/desktop-cost.ts (basic suite, replay agent, one worker). The desktop's
 *   processes (Xvnc, matchbox, websockify, Chromium) peaked at 426-456 MiB PSS at 1280x800 and
 *   1920x1080 natively (2026-11-25 and -27), 225-259 MiB in another run (PSS splits the pages shared
 *   with other processes, e.g. other desktops' Chromium libraries, so it varies with what else runs;
 *   the higher figure is used; RSS stayed 910-950 MiB), 396-413 MiB in a container; the runner's RSS
 *   grew by up to 149 MiB with one worker (agent, live framebuffer, recording proxy, lazily loaded
 *   modules): 456 + 149 = 605 MiB, plus a 1/8 margin: 680 MiB. The same bench measured 0.4-0.8 CPU
 *   cores per desktop (median run, on a loaded machine; p90 up to 1), hence one desktop per core.
 */
import { availableParallelism, freemem } from 'node:os';

/** Memory budget of one desktop (and its worker's share of the runner), bytes. See the file comment. */
export const DESKTOP_MEMORY_BYTES = 680 * 1024 * 1024;

/** What the default is computed from. */
export interface MachineResources {
  cores: number;
  /** Memory that can be allocated without swapping, bytes. */
  availableBytes: number;
}

/** The recommendation and why. */
export interface WorkerAdvice extends MachineResources {
  workers: number;
  /** Desktops the cores allow, and the memory. */
  byCores: number;
  byMemory: number;
  /** What bounds `workers`, for messages: e.g. `2 cores` or `1.1 GiB available memory at 400 MiB per desktop`. */
  limitedBy: string;
}

/** The default number of workers for these resources (at least 1). */
export function recommendedWorkers(m: MachineResources, perDesktopBytes = DESKTOP_MEMORY_BYTES): WorkerAdvice {
  const byCores = Math.max(1, Math.floor(m.cores));
  const byMemory = Math.max(0, Math.floor(m.availableBytes / perDesktopBytes));
  const workers = Math.max(1, Math.min(byCores, byMemory));
  const gib = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GiB`;
  const limitedBy =
    byMemory < byCores ? `${gib(m.availableBytes)} available memory at ${Math.round(perDesktopBytes / 1024 ** 2)} MiB per desktop` : `${byCores} core${byCores === 1 ? '' : 's'}`;
  return { ...m, workers, byCores, byMemory, limitedBy };
}

/** This machine's cores and available memory (cgroup limit included). */
export function machineResources(): MachineResources {
  let available = freemem();
  const limit = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() : 0;
  // constrainedMemory() is 0 or a huge number when there is no limit.
  if (limit && limit > 0 && limit < Number.MAX_SAFE_INTEGER) available = Math.min(available, Math.max(0, limit - process.memoryUsage.rss()));
  return { cores: availableParallelism(), availableBytes: available };
}

/** The one-line warning when more workers are asked for than recommended, else null. */
export function workersWarning(asked: number, advice: WorkerAdvice): string | null {
  if (asked <= advice.workers) return null;
  return `--workers ${asked} is more than this machine can hold; recommended: ${advice.workers} (${advice.limitedBy})`;
}

/** The one-line warning when workers + pooled desktops are more than the available memory holds, else null. */
export function poolMemoryWarning(workers: number, pool: number, advice: WorkerAdvice): string | null {
  if (workers + pool <= advice.byMemory) return null;
  return `--workers ${workers} with --pool ${pool} keeps up to ${workers + pool} desktops alive; the available memory holds ${advice.byMemory} (${(advice.availableBytes / 1024 ** 3).toFixed(1)} GiB at ${Math.round(DESKTOP_MEMORY_BYTES / 1024 ** 2)} MiB per desktop)`;
}
