/**
 * Suite progress: the runner's events and a snapshot of where it stands, and two renderers:
 * a live block redrawn in place on a TTY (done/total, successes so far, ETA, each worker's status),
 * and plain lines otherwise (one per finished or retried run).
 */
import type { Writable } from 'node:stream';

/** What one worker is doing. */
export interface WorkerStatus {
  worker: number;
  state: 'idle' | 'starting desktop' | 'running agent' | 'checking desktop' | 'stopping desktop' | 'done';
  /** `taskId@WxH` of its current run. */
  job?: string;
  attempt?: number;
  /** Epoch ms when it entered this state. */
  since: number;
}

/** Where the suite stands. */
export interface ProgressSnapshot {
  /** Runs in this shard (skipped ones included). */
  total: number;
  /** Runs already finished on disk, skipped. */
  skipped: number;
  /** Runs finished in this invocation (any status, infra_error included). */
  done: number;
  /** Of those, runs whose success check held at some step. */
  successes: number;
  /** Of those, runs that ended infra_error. */
  infraErrors: number;
  /** Epoch ms when the suite started. */
  startedAt: number;
  /** Estimated ms until every remaining run is done (null until one finished). */
  etaMs: number | null;
  workers: WorkerStatus[];
}

/** What the runner reports. */
export type ProgressEvent =
  | { type: 'start' }
  | { type: 'skip'; job: string }
  | { type: 'worker'; worker: number }
  | { type: 'retry'; job: string; attempt: number; error: { code: string; message: string } }
  | { type: 'done'; job: string; status: string; success: boolean | null; attempts: number; durationMs: number; dir: string }
  | { type: 'end'; cancelled: boolean };

/** The runner's progress callback. */
export type ProgressListener = (event: ProgressEvent, snapshot: ProgressSnapshot) => void;

/** A renderer: its listener, and stop() to finish the display. */
export interface ProgressRenderer {
  listener: ProgressListener;
  stop(): void;
}

/** "1m05s", "12s". */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '?';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** The headline: `12/40 done (3 skipped), 9 succeeded, 1 infra error, ETA 2m10s`. */
export function summaryLine(s: ProgressSnapshot): string {
  const parts = [`${s.done + s.skipped}/${s.total} done${s.skipped ? ` (${s.skipped} skipped)` : ''}`, `${s.successes} succeeded`];
  if (s.infraErrors) parts.push(`${s.infraErrors} infra error${s.infraErrors === 1 ? '' : 's'}`);
  parts.push(`elapsed ${formatDuration(Date.now() - s.startedAt)}`, `ETA ${formatDuration(s.etaMs)}`);
  return parts.join(', ');
}

/** One line per worker. */
export function workerLine(w: WorkerStatus, now = Date.now()): string {
  const what = w.job ? ` ${w.job}${w.attempt && w.attempt > 1 ? ` (attempt ${w.attempt})` : ''}` : '';
  return `  worker ${w.worker + 1}: ${w.state}${what}${w.state === 'idle' || w.state === 'done' ? '' : ` ${formatDuration(now - w.since)}`}`;
}

/** Plain lines: one per finished run, retry and the end. */
export function plainProgress(out: Writable): ProgressRenderer {
  return {
    listener(e, s) {
      if (e.type === 'start') out.write(`eval: ${s.total} runs, ${s.skipped} already done, ${s.workers.length} worker${s.workers.length === 1 ? '' : 's'}\n`);
      else if (e.type === 'retry') out.write(`eval: ${e.job}: infra failure on attempt ${e.attempt} (${e.error.code}: ${e.error.message.split('\n')[0]}); retrying\n`);
      else if (e.type === 'done') {
        const ok = e.success === true ? 'success' : e.success === false ? 'no success' : 'success unknown';
        out.write(`eval: [${s.done + s.skipped}/${s.total}] ${e.job}: ${e.status}, ${ok}, ${formatDuration(e.durationMs)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}\n`);
      } else if (e.type === 'end') out.write(`eval: ${e.cancelled ? 'cancelled; ' : ''}${summaryLine(s)}\n`);
    },
    stop() {},
  };
}

/** A block redrawn in place (ANSI cursor movement), refreshed on every event and every `refreshMs`. */
export function ttyProgress(out: Writable & { columns?: number }, refreshMs = 500): ProgressRenderer {
  let lines = 0;
  let last: ProgressSnapshot | undefined;
  const log: string[] = [];
  const draw = () => {
    if (!last) return;
    // A pty that reports no size (columns 0 or undefined) gets 100 columns.
    const width = Math.max(20, (out.columns || 100) - 1);
    const block = [summaryLine(last), ...last.workers.map((w) => workerLine(w))].map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
    let text = lines > 0 ? `\x1b[${lines}F` : '';
    // Lines that scroll above the live block (retries, finished runs) are written first.
    for (const l of log.splice(0)) text += `\x1b[2K${l}\n`;
    for (const l of block) text += `\x1b[2K${l}\n`;
    text += '\x1b[J';
    lines = block.length;
    out.write(text);
  };
  const timer = setInterval(draw, refreshMs);
  timer.unref();
  return {
    listener(e, s) {
      last = s;
      if (e.type === 'retry') log.push(`retry ${e.job}: attempt ${e.attempt} hit ${e.error.code}`);
      else if (e.type === 'done') log.push(`${e.success === true ? 'ok  ' : e.status === 'infra_error' ? 'INFR' : 'fail'} ${e.job} (${e.status}, ${formatDuration(e.durationMs)})`);
      draw();
    },
    stop() {
      clearInterval(timer);
      draw();
    },
  };
}
