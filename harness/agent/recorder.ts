/**
 * Records each primitive into the run's trace: `started_at` / `ended_at` from the shared clock
 * around the action itself, then the success check, then one `TraceWriter.append` (which resolves
 * once partial_execution.json on disk holds the entry), then hands the entry to the run's success
 * checks (which may re-check it in its grace window, see verdict.ts). A failed attempt is recorded
 * with its `error` and its params as given; the error is then rethrown to the caller.
 */
import { VncuaError, errorInfo } from '../errors.ts';
import { now } from '../trace/clock.ts';
import type { ActionName, ExecutionEntry, TraceEntryInput } from '../trace/schema.ts';
import type { TraceWriter } from '../trace/writer.ts';
import { jsonSafe } from './arguments.ts';
import { RunVerdict, type ImmediateCheck } from './verdict.ts';

/** The code recorded for an error that is not a VncuaError. */
export const UNKNOWN_ACTION_ERROR = 'ACTION_ERR_FAILED';

/** The success checks around each action (a RunVerdict in the Agent). */
export interface ActionChecks {
  /** `action` is about to start. */
  actionStarting(action: ActionName): void;
  /** The check right after an action; never rejects. */
  check(): Promise<ImmediateCheck>;
  /** The entry of `check` (an `action`) was appended at `index`. */
  recorded(index: number, check: ImmediateCheck, action: ActionName): void;
}

/** `{ code, message }` of any thrown value (harness/errors.ts). */
export { errorInfo } from '../errors.ts';

/** Records actions into one trace. */
export class ActionRecorder {
  /** Entries appended so far by this recorder. */
  count = 0;

  constructor(
    private readonly writer: TraceWriter,
    private readonly checks: ActionChecks,
    /** Returns (and clears) extra data for the next entry's `meta` (see Agent.attachMeta). */
    private readonly takeMeta: () => Record<string, unknown> | undefined = () => undefined,
  ) {}

  /**
   * Run `perform`, then record `action` with `params` (snake_case, as the trace schema wants).
   * `failedParams` are recorded instead when the action fails (the arguments as the caller gave them).
   */
  async record<T>(action: ActionName, params: () => Record<string, unknown>, failedParams: () => unknown, perform: () => Promise<T>): Promise<T> {
    this.checks.actionStarting(action);
    const startedAt = now();
    let result: T;
    try {
      result = await perform();
    } catch (e) {
      const endedAt = now();
      const check = await this.checks.check();
      const safe = jsonSafe(failedParams());
      await this.append(
        {
          action,
          params: (typeof safe === 'object' && safe !== null && !Array.isArray(safe) ? safe : { value: safe }) as Record<string, unknown>,
          task_marked_complete: check.answer.ok,
          started_at: startedAt,
          ended_at: endedAt,
          error: errorInfo(e, UNKNOWN_ACTION_ERROR),
        },
        check,
      );
      throw e;
    }
    const endedAt = now();
    const check = await this.checks.check();
    await this.append({ action, params: params(), task_marked_complete: check.answer.ok, started_at: startedAt, ended_at: endedAt } as TraceEntryInput, check);
    return result;
  }

  /** Input that is not one of the agent's primitives (a person's, during a takeover) starts: the previous action's grace window ends here. */
  inputStarting(): void {
    this.checks.actionStarting('mouse_move');
  }

  /**
   * Record an action a person performed during a takeover (actor "human"): it already happened, between
   * `started_at` and `ended_at` (its first and last event); the success check runs now, as after any action.
   * The agent's pending meta (attachMeta) is left for the agent's next entry.
   */
  async recordHuman(done: { action: ActionName; params: Record<string, unknown>; started_at: number; ended_at: number; meta?: Record<string, unknown> }): Promise<ExecutionEntry> {
    this.checks.actionStarting(done.action);
    const check = await this.checks.check();
    const entry = { action: done.action, actor: 'human', params: done.params, task_marked_complete: check.answer.ok, started_at: done.started_at, ended_at: done.ended_at };
    return this.append({ ...entry, ...(done.meta ? { meta: done.meta } : {}) } as TraceEntryInput, check, false);
  }

  private async append(entry: TraceEntryInput, check: ImmediateCheck, takeMeta = true): Promise<ExecutionEntry> {
    const meta = takeMeta ? this.takeMeta() : entry.meta;
    const success_check = RunVerdict.entryCheck(check.answer, 'immediate');
    const full = { ...entry, success_check, meta } as TraceEntryInput;
    const written = await this.writer.append(full);
    this.count++;
    this.checks.recorded(written.index, check, written.action);
    return written;
  }
}

/** AGENT_ERR_CANCELLED for an action attempted after the run was cancelled. */
export function cancelledError(what: string, cause?: unknown): VncuaError {
  return new VncuaError('AGENT_ERR_CANCELLED', `${what} was not performed: the run was cancelled.`, { cause });
}
