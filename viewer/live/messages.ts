/**
 * What `vncua serve` tells its page about live runs (types only: the page imports them too). Sent as JSON text
 * messages on the `api/live/events` WebSocket; `api/live/runs` and `api/live/run` answer the same shapes.
 */
import type { LiveState } from '../../harness/live/control.ts';
import type { TraceEntry } from '../../harness/trace/schema.ts';

/** A coded problem, as the page shows it. */
export interface LiveProblem {
  code: string;
  message: string;
}

/** One live run as the viewer knows it. `connecting`: its events stream is being opened; `unreachable`: its endpoint does not answer. */
export interface LiveRunInfo {
  /** The run directory relative to ROOT, as the run list names it. */
  dir: string;
  state: LiveState | 'connecting' | 'unreachable';
  holder: string | null;
  help: string | null;
  steps: number;
  pid: number;
  started_at: number;
  /** Why the state is `unreachable` (SERVE_ERR_LIVE_UNREACHABLE). */
  error: LiveProblem | null;
}

/** A live.json that does not make its run live: its process is gone, or it cannot be read (left on disk as it is). */
export interface StaleLive {
  dir: string;
  code: 'SERVE_ERR_NOT_LIVE';
  message: string;
}

/** Every live run under ROOT. */
export interface LiveRunsMessage {
  type: 'runs';
  runs: LiveRunInfo[];
  stale: StaleLive[];
  /** Bumped each time a run starts or stops being live (its row in the run list changed then). */
  changes: number;
}

/** One run's live state: `run` null when it is not live (then `notLive` says why). */
export interface LiveRunMessage {
  type: 'run';
  run: LiveRunInfo | null;
  notLive: LiveProblem | null;
}

/** Entries of the run's trace new or changed since the last message (all of them in the first). */
export interface LiveStepsMessage {
  type: 'steps';
  entries: TraceEntry[];
}

/** The run's trace cannot be read now (it is retried as it changes). */
export interface LiveTraceErrorMessage {
  type: 'trace-error';
  code: string;
  message: string;
}

/** The run has ended and its trace is final: the recorded trace viewer can show it. */
export interface LiveEndedMessage {
  type: 'ended';
  dir: string;
}

/** Any message of the events socket. */
export type LiveMessage = LiveRunsMessage | LiveRunMessage | LiveStepsMessage | LiveTraceErrorMessage | LiveEndedMessage;
