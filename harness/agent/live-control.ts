/**
 * The run loop's pause point and the live status (harness/live/control.ts): pause() and resume(), an
 * agent's askForHelp(), a person's takeover and handback. One per Agent; begin() and end() frame each run.
 *
 * - The loop calls gate() before each act(): it returns at once unless a pause was asked for (pause(), a
 *   pending takeover, askForHelp() during the step that just ended); then the loop stays there until
 *   resume(), a handback, or the run's signal (gate() rejects with its reason). So a pause always comes
 *   after the current act() has returned, and the step timeout never runs while paused.
 * - askForHelp(reason) sets state 'help' at once (a viewer flags the run) and pauses after the step.
 * - takeover(who) resolves once the loop is paused and `who` holds mouse and keyboard (the hooks' start());
 *   another person's takeover meanwhile is LIVE_ERR_TAKEN (details.holder). input() from the holder goes to
 *   the hooks, anyone else's is dropped. handback(who) lets the hooks record what is pending and release
 *   what is held (end()), then resumes the loop; LIVE_ERR_NOT_HOLDER from anyone else. A handback by a
 *   person whose takeover is still waiting for the step to end withdraws it (the takeover resolves with a
 *   status whose holder is not theirs).
 * - resume() ends any pause: a person's takeover too (as their handback would) and a waiting one (withdrawn).
 * - Outside a run (before begin(), after end()) state is 'ended': pause(), askForHelp(), takeover() and
 *   handback() are AGENT_ERR_ILLEGAL_STATE; a takeover still waiting when the run ends rejects so.
 * - Paused time (from the loop reaching the gate until it leaves) is counted in pausedMs.
 */
import { race } from '../cancel.ts';
import { VncuaError } from '../errors.ts';
import type { HumanInput, LiveState, LiveStatus } from '../live/control.ts';

/** What a takeover does with the person's input (the Agent's human takeover, takeover.ts). */
export interface TakeoverHooks {
  /** `who` now holds mouse and keyboard. */
  start(who: string): void;
  /** The holder's input. */
  input(event: HumanInput): void;
  /** The holder hands back (or the run ends): release what they hold, record what is pending. Never rejects. */
  end(): Promise<void>;
}

/** Longest `who` accepted (a name shown in the viewer). */
export const MAX_WHO_LENGTH = 200;

interface PendingTakeover {
  who: string;
  promise: Promise<LiveStatus>;
  resolve: (s: LiveStatus) => void;
  reject: (e: unknown) => void;
}

/** The pause point of a run loop and its live status (see the file comment). */
export class LiveRunControl {
  #active = false;
  #state: LiveState = 'ended';
  #holder: string | null = null;
  #help: string | null = null;
  #steps = 0;
  /** pause() asked for a pause after the current step. */
  #pauseAsked = false;
  /** askForHelp() was called: pause after the current step. */
  #helpAsked = false;
  #pending: PendingTakeover | null = null;
  #pauseWaiters: Array<() => void> = [];
  /** Set while the loop waits in gate(): releases it. */
  #release: (() => void) | null = null;
  #pausedSince: number | null = null;
  #pausedMs = 0;
  #helpRequests = 0;
  #hooks: TakeoverHooks | null = null;
  /** The holder's handback in progress (their input is dropped meanwhile). */
  #handingBack: Promise<void> | null = null;
  readonly #listeners = new Set<(s: LiveStatus) => void>();

  /** The status now. */
  status(): LiveStatus {
    return { state: this.#state, holder: this.#holder, help: this.#help, steps: this.#steps };
  }

  /** True while a run is in progress. */
  get active(): boolean {
    return this.#active;
  }

  /** Time the current (or last) run's loop has spent paused, ms, the ongoing pause included. */
  get pausedMs(): number {
    return this.#pausedMs + (this.#pausedSince === null ? 0 : performance.now() - this.#pausedSince);
  }

  /** askForHelp() calls in the current (or last) run. */
  get helpRequests(): number {
    return this.#helpRequests;
  }

  /** Calls `listener` on every status change; returns the unsubscribe function. */
  onStatus(listener: (s: LiveStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** A run starts: state 'running', counters at zero; a takeover goes through `hooks`. */
  begin(hooks: TakeoverHooks): void {
    this.#active = true;
    this.#hooks = hooks;
    this.#state = 'running';
    this.#holder = null;
    this.#help = null;
    this.#steps = 0;
    this.#pauseAsked = false;
    this.#helpAsked = false;
    this.#pausedMs = 0;
    this.#pausedSince = null;
    this.#helpRequests = 0;
    this.#emit();
  }

  /** An act() call starts. */
  stepStarted(): void {
    this.#steps++;
    this.#emit();
  }

  /** The loop's pause point before each act() (see the file comment); rejects with the signal's reason when it fires while paused. */
  async gate(signal: AbortSignal): Promise<void> {
    if (!this.#active || !(this.#pauseAsked || this.#helpAsked || this.#pending)) return;
    const released = new Promise<void>((resolve) => {
      this.#release = () => {
        this.#release = null;
        resolve();
      };
    });
    this.#pausedSince = performance.now();
    this.#state = this.#helpAsked ? 'help' : 'paused';
    for (const w of this.#pauseWaiters.splice(0)) w();
    if (this.#pending) this.#grant();
    else this.#emit();
    try {
      await race(released, { signal });
    } finally {
      this.#release = null;
      this.#countPause();
    }
    if (this.#active) {
      this.#state = 'running';
      this.#emit();
    }
  }

  /** Pause after the current act(): resolves once the loop is paused (at once if it is), or the pause was withdrawn by resume(), or the run ended. */
  pause(): Promise<void> {
    if (!this.#active) return Promise.reject(notRunning('pause()'));
    if (this.#release) return Promise.resolve();
    this.#pauseAsked = true;
    return new Promise((resolve) => this.#pauseWaiters.push(resolve));
  }

  /** The agent asks a person for help: state 'help' now, and the loop pauses after this step until resume() or a handback. */
  askForHelp(reason: string): void {
    if (!this.#active) throw notRunning('askForHelp()');
    this.#helpRequests++;
    this.#help = String(reason);
    this.#helpAsked = true;
    if (this.#holder === null) this.#state = 'help';
    this.#emit();
  }

  /** End any pause and let the loop go on: a person holding the run hands back (what they hold is released, their pending actions recorded); a waiting takeover is withdrawn. */
  async resume(): Promise<void> {
    if (!this.#active) return;
    this.#pauseAsked = false;
    this.#helpAsked = false;
    this.#help = null;
    this.#withdraw();
    if (this.#holder !== null) await this.#endTakeover();
    for (const w of this.#pauseWaiters.splice(0)) w();
    this.#release?.();
    if (this.#state === 'help' && this.#active) {
      this.#state = 'running';
      this.#emit();
    }
  }

  /** Pause after the current step and give `who` mouse and keyboard; LIVE_ERR_TAKEN when another person holds them (or asked first). */
  takeover(who: string): Promise<LiveStatus> {
    const bad = badWho(who);
    if (bad) return Promise.reject(bad);
    if (!this.#active) return Promise.reject(notRunning('takeover()'));
    if (this.#holder === who && this.#handingBack === null) return Promise.resolve(this.status());
    const other = this.#holder ?? this.#pending?.who ?? null;
    if (other !== null && other !== who) {
      return Promise.reject(
        new VncuaError('LIVE_ERR_TAKEN', `${JSON.stringify(other)} holds mouse and keyboard of this run; wait until they hand back.`, { details: { holder: other } }),
      );
    }
    if (this.#pending) return this.#pending.promise;
    let resolve!: (s: LiveStatus) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<LiveStatus>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {});
    this.#pending = { who, promise, resolve, reject };
    // Paused now: granted at once (unless a handback is still being recorded: then at the next pause).
    if (this.#release && this.#handingBack === null) this.#grant();
    return promise;
  }

  /** `who` gives control back and the loop resumes; LIVE_ERR_NOT_HOLDER when they do not hold it. */
  async handback(who: string): Promise<LiveStatus> {
    const bad = badWho(who);
    if (bad) throw bad;
    if (!this.#active) throw notRunning('handback()');
    if (this.#pending?.who === who) {
      this.#withdraw();
      return this.status();
    }
    if (this.#holder !== who) {
      throw new VncuaError(
        'LIVE_ERR_NOT_HOLDER',
        this.#holder === null ? 'Nobody holds this run, so there is nothing to hand back.' : `${JSON.stringify(who)} does not hold this run; ${JSON.stringify(this.#holder)} does.`,
        { details: { holder: this.#holder } },
      );
    }
    await this.#endTakeover();
    this.#pauseAsked = false;
    this.#helpAsked = false;
    this.#release?.();
    return this.status();
  }

  /** A person's input: to the takeover hooks when `who` holds the run (and is not handing back), else dropped. */
  input(who: string, event: HumanInput): void {
    if (!this.#active || this.#holder !== who || this.#handingBack !== null) return;
    this.#hooks?.input(event);
  }

  /** The run is over: a takeover ends (recorded), a waiting one rejects, pause() callers resolve; state 'ended'. */
  async end(): Promise<void> {
    if (!this.#active) return;
    const pending = this.#pending;
    this.#pending = null;
    pending?.reject(notRunning('takeover()', 'the run ended before its current step did'));
    if (this.#holder !== null) await this.#endTakeover();
    this.#active = false;
    for (const w of this.#pauseWaiters.splice(0)) w();
    this.#release?.();
    this.#countPause();
    this.#hooks = null;
    this.#state = 'ended';
    this.#holder = null;
    this.#help = null;
    this.#emit();
  }

  #grant(): void {
    const p = this.#pending!;
    this.#pending = null;
    this.#holder = p.who;
    this.#helpAsked = false;
    this.#help = null;
    this.#state = 'paused';
    this.#hooks?.start(p.who);
    this.#emit();
    p.resolve(this.status());
  }

  /** A waiting takeover is withdrawn: it resolves with the status (whose holder is not its person). */
  #withdraw(): void {
    const p = this.#pending;
    this.#pending = null;
    p?.resolve(this.status());
  }

  #endTakeover(): Promise<void> {
    this.#handingBack ??= (async () => {
      try {
        await this.#hooks?.end();
      } finally {
        this.#holder = null;
        this.#handingBack = null;
        this.#emit();
      }
    })();
    return this.#handingBack;
  }

  #countPause(): void {
    if (this.#pausedSince === null) return;
    this.#pausedMs += performance.now() - this.#pausedSince;
    this.#pausedSince = null;
  }

  #emit(): void {
    const s = this.status();
    for (const l of [...this.#listeners]) {
      try {
        l(s);
      } catch {
        // a listener's failure is its own
      }
    }
  }
}

/** LIVE_ERR_BAD_REQUEST for a `who` that is not a non-empty name, else null. */
function badWho(who: unknown): VncuaError | null {
  if (typeof who === 'string' && who.trim().length > 0 && who.length <= MAX_WHO_LENGTH) return null;
  return new VncuaError(
    'LIVE_ERR_BAD_REQUEST',
    `who must name the person (a non-empty string of at most ${MAX_WHO_LENGTH} characters); got ${JSON.stringify(who) ?? String(who)}.`,
    {
      details: { who },
    },
  );
}

/** AGENT_ERR_ILLEGAL_STATE: `what` needs a run in progress. */
function notRunning(what: string, why = 'no run of this agent is in progress'): VncuaError {
  return new VncuaError('AGENT_ERR_ILLEGAL_STATE', `${what}: ${why}; it works while run() is in progress.`, { details: { method: what } });
}
