/**
 * Suite progress: the runner's events and a snapshot of where it stands, and two renderers:
 * a live block redrawn in place on a TTY (done/total, successes so far, ETA, each worker's status),
 * and plain lines otherwise (one per finished or retried run).
 */
import type { Writable } from 'node:stream';

/** What one worker is doing. */
export interface WorkerStatus {
  worker: number;
  /** Its name when it is not a local worker (a queue worker's `host:pid #slot`); shown instead of its number. */
  name?: string;
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
  /** Those infra errors by code (the last attempt's). */
  infraCodes: Record<string, number>;
  /** Epoch ms when the suite started. */
  startedAt: number;
  /** Estimated ms until every remaining run is done (null until one finished). */
  etaMs: number | null;
  workers: WorkerStatus[];
  /** The queue the workers take runs from (`vncua eval --queue`; its URL without password), when queued. */
  queue?: string;
}

/** What the runner reports. */
export type ProgressEvent =
  | { type: 'start' }
  | { type: 'skip'; job: string }
  | { type: 'worker'; worker: number }
  | { type: 'retry'; job: string; attempt: number; error: { code: string; message: string } }
  | { type: 'done'; job: string; status: string; success: boolean | null; attempts: number; durationMs: number; dir: string; error?: { code: string; message: string } }
  | { type: 'end'; cancelled: boolean; configError?: { code: string; message: string; job: string } };

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

/** The start of an error message: up to its first `; ` (the facts; the hint follows), at most 200 characters. */
export function errorGist(message: string): string {
  const first = message.split('\n')[0]!.split('; ')[0]!;
  return first.length > 200 ? `${first.slice(0, 199)}…` : first;
}

/** What a finished run's line says about its error: `PAGE_ERR_HTTP_STATUS: the task page … answered HTTP 404`. */
export function errorNote(error: { code: string; message: string } | undefined): string {
  return error ? `${error.code}: ${errorGist(error.message)}` : '';
}

/** The headline: `12/40 done (3 skipped), 9 succeeded, 1 infra error (PAGE_ERR_UNREACHABLE), ETA 2m10s`. */
export function summaryLine(s: ProgressSnapshot): string {
  const parts = [`${s.done + s.skipped}/${s.total} done${s.skipped ? ` (${s.skipped} skipped)` : ''}`, `${s.successes} succeeded`];
  if (s.infraErrors) {
    const codes = Object.entries(s.infraCodes ?? {}).map(([code, n]) => (n > 1 ? `${code} ×${n}` : code));
    parts.push(`${s.infraErrors} infra error${s.infraErrors === 1 ? '' : 's'}${codes.length ? ` (${codes.join(', ')})` : ''}`);
  }
  parts.push(`elapsed ${formatDuration(Date.now() - s.startedAt)}`, `ETA ${formatDuration(s.etaMs)}`);
  return parts.join(', ');
}

/** One line per worker. */
export function workerLine(w: WorkerStatus, now = Date.now()): string {
  const what = w.job ? ` ${w.job}${w.attempt && w.attempt > 1 ? ` (attempt ${w.attempt})` : ''}` : '';
  return `  worker ${w.name ?? w.worker + 1}: ${w.state}${what}${w.state === 'idle' || w.state === 'done' ? '' : ` ${formatDuration(now - w.since)}`}`;
}

/** Plain lines: one per finished run, retry and the end. */
export function plainProgress(out: Writable): ProgressRenderer {
  return {
    listener(e, s) {
      if (e.type === 'start')
        out.write(
          `eval: ${s.total} runs, ${s.skipped} already done, ${s.queue ? `workers from the queue at ${s.queue}` : `${s.workers.length} worker${s.workers.length === 1 ? '' : 's'}`}\n`,
        );
      else if (e.type === 'retry') out.write(`eval: ${e.job}: infra failure on attempt ${e.attempt} (${e.error.code}: ${e.error.message.split('\n')[0]}); retrying\n`);
      else if (e.type === 'done') {
        const ok = e.success === true ? 'success' : e.success === false ? 'no success' : 'success unknown';
        const note = errorNote(e.error);
        out.write(
          `eval: [${s.done + s.skipped}/${s.total}] ${e.job}: ${e.status}${note ? ` (${note})` : ''}, ${ok}, ${formatDuration(e.durationMs)}${e.attempts > 1 ? `, ${e.attempts} attempts` : ''}\n`,
        );
      } else if (e.type === 'end') {
        const why = e.configError ? `stopped by ${e.configError.code} (${e.configError.job}); ` : e.cancelled ? 'cancelled; ' : '';
        out.write(`eval: ${why}${summaryLine(s)}\n`);
      }
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
      else if (e.type === 'done') {
        const note = errorNote(e.error);
        log.push(`${e.success === true ? 'ok  ' : e.status === 'infra_error' ? 'INFR' : 'fail'} ${e.job} (${e.status}, ${formatDuration(e.durationMs)})${note ? ` ${note}` : ''}`);
      } else if (e.type === 'end' && e.configError) log.push(`stopped by ${e.configError.code} (${e.configError.job})`);
      draw();
    },
    stop() {
      clearInterval(timer);
      draw();
    },
  };
}
