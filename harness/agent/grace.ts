/**
 * The grace monitor: after an action whose immediate success check said "not yet", re-check in the
 * background while the page settles, so a success the action caused a moment later is not missed.
 *
 * - On a framebuffer update (the screen changed): check. At most one check is in flight; updates that
 *   arrive meanwhile make it run once more when it answers (coalesced).
 * - When the screen goes quiet (no update for `quietMs` after one): check once more. A task page can
 *   change its DOM without a visible change (a hidden marker set by a timer), so the quiet check and the
 *   deadline check do not wait for pixels.
 * - At the grace deadline: one last check, then the monitor ends.
 * - It ends at the first true answer (reported once through `onSuccess`), at the deadline, or at
 *   stop() (the next action that sends input starts). The answer of a check still in flight at stop()
 *   is dropped: it was sent before the next action's input, but the page may run it after that input
 *   (a busy renderer), so what it sees may be the next action's doing. bench/success-race.ts caught
 *   exactly that once in 800 runs on a loaded machine; the next action's own checks see a success that
 *   stays.
 *
 * On a static screen it costs one check, at the deadline (and none if the next action starts sooner).
 * It never blocks the caller: everything runs on timers and update events; `done` tells when it is over.
 */
import type { ProbeEvidence } from '../cdp/sentinel.ts';

/** A check's answer and when it arrived (epoch ms). */
export interface TimedAnswer {
  readonly ok: boolean | null;
  readonly evidence: ProbeEvidence | null;
  /** Epoch ms when the answer arrived. */
  readonly at: number;
}

/** The screen's update feed: the framebuffer version now, and a listener called after each applied update. */
export interface ScreenFeed {
  readonly version: number;
  /** Add a listener; returns the function that removes it. */
  onUpdate(listener: () => void): () => void;
}

/** What a GraceMonitor needs. */
export interface GraceMonitorOptions {
  /** One success check (never rejects: a failure answers ok null). */
  check: () => Promise<TimedAnswer>;
  /** The screen's updates; null when there is no live connection (then only the deadline check runs). */
  screen: ScreenFeed | null;
  /** The framebuffer version when the immediate check started: an update since then counts as a change. */
  versionAtCheck: number;
  /** Time left until the deadline check, in ms. */
  graceLeftMs: number;
  /** The screen is quiet after this long without an update (ms). */
  quietMs: number;
  /** Called once, with the first true answer; `done` waits for it. */
  onSuccess: (answer: TimedAnswer) => Promise<void> | void;
}

/** Re-checks success after one action until true, the deadline, or stop(); see the file comment. */
export class GraceMonitor {
  /** Checks started so far. */
  checks = 0;
  /** The true answer, once seen. */
  success: TimedAnswer | null = null;
  /** Settles when the monitor is over: no check in flight, no timer armed, onSuccess (if any) done. Never rejects. */
  readonly done: Promise<void>;

  readonly #o: GraceMonitorOptions;
  #resolve!: () => void;
  #stopped = false;
  #ended = false;
  #inFlight = false;
  /** Something happened while a check was in flight: check again when it answers. */
  #again = false;
  /** The deadline passed: end after the check it asked for. */
  #expiring = false;
  #seen: number;
  #quiet: NodeJS.Timeout | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;

  /** Starts monitoring at once (a change since `versionAtCheck` triggers a check now). */
  constructor(options: GraceMonitorOptions) {
    this.#o = options;
    this.done = new Promise<void>((r) => (this.#resolve = r));
    this.#seen = options.versionAtCheck;
    this.#deadline = setTimeout(() => this.#onDeadline(), Math.max(0, options.graceLeftMs));
    const screen = options.screen;
    if (screen) {
      this.#unsubscribe = screen.onUpdate(() => this.#onUpdate());
      if (screen.version !== this.#seen) this.#onUpdate();
    }
  }

  /** Check now (a later action that sends no input saw success: this action's window gets it too). */
  poke(): void {
    this.#request();
  }

  /** True until the monitor is over. */
  get running(): boolean {
    return !this.#ended;
  }

  /** The next action starts: no new check, and the answer of a check in flight is dropped; `done` settles now. Idempotent. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#disarm();
    this.#end();
  }

  #onUpdate(): void {
    if (this.#stopped) return;
    const v = this.#o.screen?.version ?? this.#seen;
    if (v === this.#seen) return; // an update that changed no pixels (a cursor shape, a pseudo-rectangle)
    this.#seen = v;
    clearTimeout(this.#quiet);
    this.#quiet = setTimeout(() => this.#request(), this.#o.quietMs);
    this.#request();
  }

  #onDeadline(): void {
    this.#deadline = undefined;
    this.#expiring = true;
    clearTimeout(this.#quiet);
    this.#quiet = undefined;
    this.#request();
  }

  #request(): void {
    if (this.#stopped) return;
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    void this.#run();
  }

  async #run(): Promise<void> {
    this.#inFlight = true;
    this.#again = false;
    this.checks++;
    let answer: TimedAnswer | null;
    try {
      answer = await this.#o.check();
    } catch {
      answer = null;
    }
    if (this.#ended) return; // stopped meanwhile: the answer may reflect the next action
    if (answer?.ok === true) {
      this.success = answer;
      this.#stopped = true;
      this.#disarm();
      try {
        await this.#o.onSuccess(answer);
      } catch {
        // the caller's handler keeps its own errors; the monitor is over either way
      }
      this.#inFlight = false;
      this.#end();
      return;
    }
    this.#inFlight = false;
    if (this.#again) void this.#run();
    else if (this.#expiring) {
      this.#stopped = true;
      this.#disarm();
      this.#end();
    }
  }

  #disarm(): void {
    clearTimeout(this.#quiet);
    clearTimeout(this.#deadline);
    this.#quiet = undefined;
    this.#deadline = undefined;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#resolve();
  }
}
