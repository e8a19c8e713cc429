/**
 * The run's success verdict: a check right after each action (blocking, ~2 ms), a grace monitor
 * (grace.ts) after each action whose check said "not yet", and one final check after the run's tail.
 *
 * - A success seen in an action's grace window is attributed to that action's trace entry (rewritten
 *   with `task_marked_complete: true` and `success_check` evidence). The window closes when the next
 *   action that sends input starts; a re-check still in flight then is dropped (the page may run it
 *   after that input), and the next action's own checks take over.
 * - Except after `wait` and `finish`, which send no input and so cannot cause a success: they leave the
 *   running monitor alone (an agent that calls finish right after its last action still gets that
 *   action's window), and when their own immediate check sees a success while that monitor runs, the
 *   monitor checks at once, so the entry that caused it is marked too. When no window is open after
 *   them, they get one, on behalf of the last entry that sent input.
 * - So every late success (grace or final) goes to the last entry that sent input before the check
 *   started (the entry itself when none did); an immediate one marks its own entry, as uitask's check does.
 * - Once the run has a success, no monitor starts and no final check runs: a run that succeeded pays
 *   nothing extra.
 * - `result()` gives result.json's `success`, `success_at` and `evidence`: the success of the earliest
 *   entry (the scorer's success_index), with when its check answered and what it saw.
 */
import type { CheckAnswer } from '../cdp/success.ts';
import { race } from '../cancel.ts';
import { now } from '../trace/clock.ts';
import type { ActionName, EntrySuccess, RunEvidence } from '../trace/schema.ts';
import { GraceMonitor, type ScreenFeed, type TimedAnswer } from './grace.ts';
import type { ActionChecks } from './recorder.ts';

/** The check right after an action, with what the monitor needs to take over. */
export interface ImmediateCheck {
  answer: TimedAnswer;
  /** The framebuffer version when the check started (-1 without a connection). */
  version: number;
  /** performance.now() when the action ended (the grace window starts there). */
  endedAt: number;
}

/** What a RunVerdict needs from the Agent. */
export interface RunVerdictOptions {
  /** One success check, or null when there is no success check at all (no CDP endpoint). */
  inspect: ((opts: { signal?: AbortSignal | undefined; timeoutMs: number }) => Promise<CheckAnswer>) | null;
  /** The live connection's update feed, if connected. */
  screen: () => ScreenFeed | null;
  /** Rewrite entry `index` as complete, with the late check's evidence. */
  markComplete: (index: number, check: EntrySuccess) => Promise<unknown>;
  /** The grace window after each action (ms); 0 disables the monitors (the final check stays). */
  graceMs: number;
  /** The screen is quiet after this long without an update (ms). */
  quietMs: number;
  /** Timeout of each check (ms). */
  checkTimeoutMs: number;
}

/** What result.json says about success. */
export interface RunSuccess {
  success: boolean | null;
  success_at: number | null;
  evidence: RunEvidence | null;
}

/** Actions that send no input: they cannot cause a success, so they do not end the previous action's grace window. */
export const INPUT_FREE_ACTIONS: ReadonlySet<ActionName> = new Set<ActionName>(['wait', 'finish']);

/** How long the final check may take when the run was cancelled (the user is waiting to quit). */
const CANCELLED_CHECK_TIMEOUT_MS = 1000;

/** The success checks of one run (see the file comment). */
export class RunVerdict {
  readonly #o: RunVerdictOptions;
  #first: RunEvidence | null = null;
  /** Some check answered true or false. */
  #answered = false;
  #monitor: GraceMonitor | null = null;
  /** The entry the running monitor watches for. */
  #monitorIndex = -1;
  /** Monitors not over yet, and late marks being written. */
  readonly #pending = new Set<Promise<unknown>>();
  #lastIndex = -1;
  /** The last entry whose action sends input (-1: none yet). */
  #lastInputIndex = -1;
  /** Checks run by grace monitors and the final check (for tests and benchmarks). */
  lateChecks = 0;

  constructor(options: RunVerdictOptions) {
    this.#o = options;
  }

  /** The evidence an entry gets for a true answer. */
  static entryCheck(answer: TimedAnswer, phase: EntrySuccess['phase']): EntrySuccess | undefined {
    if (answer.ok !== true || !answer.evidence) return undefined;
    return { phase, at: answer.at, ...answer.evidence };
  }

  /** The ActionRecorder's view of this verdict (immediate checks honour `signal`). */
  actionChecks(signal: AbortSignal): ActionChecks {
    return {
      actionStarting: (action) => this.actionStarting(action),
      check: () => this.check(signal),
      recorded: (index, check, action) => this.recorded(index, check, action),
    };
  }

  /** `action` is about to start: unless it sends no input, the previous action's monitor starts no new check. */
  actionStarting(action: ActionName): void {
    if (!INPUT_FREE_ACTIONS.has(action)) this.#stopMonitor();
  }

  #stopMonitor(): void {
    this.#monitor?.stop();
    this.#monitor = null;
  }

  /** The check right after an action (never rejects; null answer without CDP or on failure). */
  async check(signal: AbortSignal | undefined): Promise<ImmediateCheck> {
    const endedAt = performance.now();
    const version = this.#o.screen()?.version ?? -1;
    const answer = await this.#inspect(signal, this.#o.checkTimeoutMs);
    return { answer, version, endedAt };
  }

  /** The entry of `check` (an `action`) was recorded at `index`: note a success, or start the grace monitor. */
  recorded(index: number, check: ImmediateCheck, action: ActionName): void {
    this.#lastIndex = Math.max(this.#lastIndex, index);
    if (!INPUT_FREE_ACTIONS.has(action)) this.#lastInputIndex = Math.max(this.#lastInputIndex, index);
    const running = this.#monitor?.running === true && this.#monitorIndex < index;
    if (check.answer.ok === true) {
      this.#note(index, check.answer, 'immediate');
      // Only input-free actions ran since the monitor's action: the success is that action's.
      if (running) this.#monitor!.poke();
      return;
    }
    if (running || this.#first !== null || this.#o.graceMs <= 0 || this.#o.inspect === null) return;
    this.#stopMonitor();
    // After wait or finish (whose own window this is), a late success is the last input action's.
    const target = INPUT_FREE_ACTIONS.has(action) && this.#lastInputIndex >= 0 ? this.#lastInputIndex : index;
    const m = new GraceMonitor({
      check: () => {
        this.lateChecks++;
        return this.#inspect(undefined, this.#o.checkTimeoutMs);
      },
      screen: this.#o.screen(),
      versionAtCheck: check.version,
      graceLeftMs: check.endedAt + this.#o.graceMs - performance.now(),
      quietMs: this.#o.quietMs,
      onSuccess: (a) => this.#late(target, a, 'grace'),
    });
    this.#monitor = m;
    this.#monitorIndex = target;
    this.#track(m.done);
  }

  /**
   * The run is over (call after the recording tail): unless a success was seen, let the last action's grace
   * window run out (`signal` cuts it short), then check once more and attribute a success to the last entry
   * that sent input. Every monitor has ended and every late mark is written when this resolves.
   */
  async finish(signal: AbortSignal | undefined): Promise<void> {
    const m = this.#monitor;
    if (m && (this.#first === null || this.#first.entry_index > this.#monitorIndex) && !signal?.aborted) {
      await race(m.done, { signal }).catch(() => {}); // m.done never rejects: only the signal cuts the wait short
    }
    this.#stopMonitor();
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
    if (this.#first !== null || this.#lastIndex < 0 || this.#o.inspect === null) return;
    this.lateChecks++;
    const a = await this.#inspect(undefined, signal?.aborted ? CANCELLED_CHECK_TIMEOUT_MS : this.#o.checkTimeoutMs);
    if (a.ok === true) await this.#late(this.#lastInputIndex >= 0 ? this.#lastInputIndex : this.#lastIndex, a, 'final');
  }

  /** result.json's success fields. */
  result(): RunSuccess {
    const e = this.#first;
    return { success: e ? true : this.#answered ? false : null, success_at: e?.at ?? null, evidence: e };
  }

  async #inspect(signal: AbortSignal | undefined, timeoutMs: number): Promise<TimedAnswer> {
    const inspect = this.#o.inspect;
    if (!inspect) return { ok: null, evidence: null, at: now() };
    let a: CheckAnswer;
    try {
      a = await inspect({ signal, timeoutMs });
    } catch {
      a = { ok: null, evidence: null };
    }
    if (a.ok !== null) this.#answered = true;
    const evidence = a.ok === true ? (a.evidence ?? { rule: 'text' as const, pattern: '', snippet: '', url: '' }) : null;
    return { ok: a.ok, evidence, at: now() };
  }

  async #late(index: number, answer: TimedAnswer, phase: 'grace' | 'final'): Promise<void> {
    const check = RunVerdict.entryCheck(answer, phase);
    this.#note(index, answer, phase);
    if (!check) return;
    const write = this.#o.markComplete(index, check).catch(() => {
      // The entry stays marked in memory: the next write of the trace (or finalize) carries it.
    });
    this.#track(write);
    await write;
  }

  #note(index: number, answer: TimedAnswer, phase: EntrySuccess['phase']): void {
    if (answer.ok !== true) return;
    if (!answer.evidence || (this.#first !== null && this.#first.entry_index <= index)) return;
    this.#first = { ...answer.evidence, at: answer.at, entry_index: index, phase };
  }

  #track(p: Promise<unknown>): void {
    this.#pending.add(p);
    void p.finally(() => this.#pending.delete(p));
  }
}
