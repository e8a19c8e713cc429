/**
 * `Agent`: subclass it, implement `act()` with your model, call `run()`.
 *
 * ```ts
 * class MyAgent extends Agent {
 *   async act(): Promise<boolean> {
 *     const png = await this.screenshot();                       // base64 PNG, cursor drawn
 *     const step = await myModel.next(this.task, png, { signal: this.signal });
 *     if (step.done) { await this.finish(); return true; }
 *     await this.mouseClick({ position: step.at, button: 'left', clickType: 'single' });
 *     return false;
 *   }
 * }
 * const result = await new MyAgent({ outputDir, vncUrl, cdpUrl, task }).run({ maxSteps: 30 });
 * ```
 *
 * Contract:
 * - `run()` calls `act()` until it returns `true` (or `finish()` was called), `maxSteps` act() calls
 *   were made, the signal fires, or act() throws; it never rejects. It writes `result.json`,
 *   `execution.json` (the finalized trace) and, on error, `error.txt` into `outputDir`.
 *   `steps` in the result is the number of act() calls that returned.
 * - `run()` never writes over a finished run: when `outputDir` already holds `execution.json` or
 *   `result.json` it resolves `{ status: 'error', error: { code: 'OUTPUT_ERR_RUN_EXISTS' } }` and
 *   touches nothing, unless the `overwrite` option is set, which moves that directory aside to
 *   `outputDir.1` (`.2`, …) first. A directory with only a partial run (a crash) is written over.
 * - Every primitive is recorded as one trace entry (snake_case action and params) with
 *   `started_at` / `ended_at` around the action and `task_marked_complete` from the success check
 *   run after it. When that check says "not yet", it is re-checked in the background while the screen
 *   settles, for `successGraceMs` (verdict.ts); a success seen then marks that entry complete. After the
 *   run's tail, one final check; result.json gets `success`, `success_at` and the `evidence`. A bad argument is recorded as a failed attempt with its `error` and rethrown
 *   (ACTION_ERR_BAD_ARGUMENT, ACTION_ERR_OFF_SCREEN, ACTION_ERR_UNKNOWN_KEY, with
 *   `details: { argument, value, allowed }`). An error that act() does not catch ends the run
 *   with status `error`; the trace keeps every entry.
 * - The VNC connection is made when the first action or screenshot needs it, and re-made once
 *   when it dropped between actions (else AGENT_ERR_CONNECTION_LOST).
 * - With allowedDomains / blockedDomains, run() attaches the navigation guard (harness/guard) to the browser over
 *   CDP before the first step (GUARD_ERR_START if it cannot: never an unguarded run). Every blocked request goes into
 *   the next entry's `meta.domain_blocked` ({ url, rule, step, resource_type, at }), result.json's `domain_blocked`
 *   count, and takeDomainNotices() (model adapters put "domain not allowed: URL" into their next prompt).
 * - Model calls an agent records with attachMeta({ model_calls: [...] }) are summed into result.json's
 *   `model_calls`, `input_tokens`, `output_tokens` and `cost_usd` (harness/trace/model-calls.ts reads
 *   each call's `tokens` and `cost_usd`), calls attached after the last entry included.
 * - Cancelling the run's signal abandons the current act() at once; `this.signal` (pass it to
 *   your model calls) fires, and so do the waits of any action in progress.
 * - Live (harness/live/control.ts: the Agent is a LiveControl): `pause()` pauses the loop after the
 *   current act() returns, `resume()` lets it go on, `askForHelp(reason)` (from act()) flags the run
 *   (state 'help') and pauses after that step. `takeover(who)` pauses after the current step and gives
 *   a person mouse and keyboard: their input goes through this agent's own VNC connection and is
 *   recorded as trace entries with `actor: "human"` (human-input.ts turns raw events into actions);
 *   `handback(who)` releases what they hold and resumes the loop. Paused time counts against neither
 *   stepTimeoutMs nor a model adapter's budgetMs; cancelling a paused run ends it 'cancelled' with the
 *   trace intact. With the `live` option (default on), run() serves the run for watchers and takeover
 *   through the class's `liveEndpoint` (startLiveEndpoint: live.json in outputDir while it runs); a
 *   failure to start it is noted in result.json's `live_error` and the run goes on.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { follow, race } from '../cancel.ts';
import { PageInput } from '../cdp/page-input.ts';
import { SuccessChecker } from '../cdp/success.ts';
import { VncuaError, isVncuaError } from '../errors.ts';
import { isPause, parseKeys, planKeyPress, planTypeText } from '../keys/index.ts';
import { roundMs } from '../trace/clock.ts';
import { ModelUsageTally } from '../trace/model-calls.ts';
import { FINISH_STATUSES, type ActionName, type FinishStatus, type RunResult, type RunStatus, type StopStatus } from '../trace/schema.ts';
import { finishedRunFiles, moveAside, runExistsError } from '../trace/out-dir.ts';
import { TraceWriter } from '../trace/writer.ts';
import {
  BUTTON_BITS,
  CLICK_COUNTS,
  CLICK_TYPES,
  MOUSE_BUTTONS,
  NAVIGATION_DIRECTIONS,
  SCROLL_WHEEL,
  SCROLL_DIRECTIONS,
  checkChoice,
  checkObject,
  checkPosition,
  checkRepeat,
  checkSeconds,
  checkString,
  jsonSafe,
  type ClickType,
  type MouseButton,
  type NavigationDirection,
  type Point,
  type ScrollDirection,
} from './arguments.ts';
import type { HumanInput, LiveControl, LiveEndpoint, LiveEndpointOptions, LiveState, LiveStatus } from '../live/control.ts';
import { startLiveEndpoint } from '../live/endpoint.ts';
import type { Framebuffer } from '../rfb/framebuffer.ts';
import { AgentConnection, isConnectError } from './connection.ts';
import { RunDomainGuard } from './domain-guard.ts';
import { RunAuth } from './run-auth.ts';
import { hasSecretPlaceholder } from '../secrets/placeholders.ts';
import type { RunSecrets } from '../secrets/run-secrets.ts';
import type { HumanAction } from './human-input.ts';
import { LiveRunControl } from './live-control.ts';
import { HumanTakeover } from './takeover.ts';
import type { InputDriver } from './input.ts';
import { resolveAgentOptions, resolveRunOptions, type AgentOptions, type ResolvedAgentOptions, type RunOptions } from './options.ts';
import type { CaptureFormat } from '../rfb/screenshot.ts';
import type { ScreenFeed } from './grace.ts';
import { ActionRecorder, cancelledError, errorInfo } from './recorder.ts';
import { RunVerdict } from './verdict.ts';
import type { RecorderFactory, RecordingHandle } from './recording.ts';
import { sleep } from './round-trip.ts';
import { waitForEffects, waitForPainted } from './screen-waits.ts';
import { pageClickCheck } from './multi-click.ts';
import { typeTextChecked } from './type-text.ts';

/** What run() resolves to (and writes to result.json). */
export type AgentRunResult = RunResult;

/** Options of mouseClick(). */
export interface MouseClickOptions {
  /** Where to click (default: where the pointer is). */
  position?: Point;
  /** Default 'left'. */
  button?: MouseButton;
  /** Default 'single'. */
  clickType?: ClickType;
}

/** Options of mouseDrag(). */
export interface MouseDragOptions {
  start: Point;
  end: Point;
  /** Default 'left'. */
  button?: MouseButton;
}

/** Options of mouseScroll(). */
export interface MouseScrollOptions {
  position: Point;
  direction: ScrollDirection;
  /** Number of wheel notches, 1..100 (default 1). */
  repeat?: number;
}

/** Options of screenshot(). */
export interface AgentScreenshotOptions {
  /** Draw the cursor at the pointer position (default true, as uitask does). */
  cursor?: boolean;
}

/** Statuses an adapter may end a run with (endRun): its guards', a stop status (a refusal or safety check mapped), the cost cap. */
export type EndRunStatus = 'safety_check' | 'stuck' | 'parse_error' | 'timeout' | StopStatus | 'cost_cap';

/** The abort reason endRun() uses: the run ends with `status` (and `error` and `reason`, if given). */
class EndRun {
  constructor(
    readonly status: EndRunStatus,
    readonly error: { code: string; message: string } | undefined,
    readonly reason?: string,
  ) {}
}

/** What finish() takes: `status` (default 'finished') and `reason` end the run with that status; other keys are recorded as given. */
export interface FinishParams extends Record<string, unknown> {
  /** 'finished' (the task is done), or why the agent stops without doing it: ambiguity, needs_human, sensitive_action, problem. */
  status?: FinishStatus;
  /** Why, in the agent's words (result.json's `reason`). */
  reason?: string;
}

/** Options of captureScreen(). */
export interface CaptureScreenOptions extends CaptureFormat {
  /** Draw the cursor at the pointer position (default true). */
  cursor?: boolean;
}

/** What captureScreen() returns: the encoded image, its size, the screen size, and a digest of the image for "same screen" checks. */
export interface ScreenCapture {
  base64: string;
  mimeType: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
  screenWidth: number;
  screenHeight: number;
  /** sha1 of the encoded image (equal images give equal hashes: the encoders are deterministic). */
  hash: string;
}

/** How long run() waits for an action that was running when the run ended. */
const IN_FLIGHT_GRACE_MS = 5000;
/** How long starting the recording proxy may take. */
const RECORDER_START_TIMEOUT_MS = 10_000;
/** The screen is quiet after this long without a change (the post-processor's quiet window too). */
const QUIET_SCREEN_MS = 300;
/** A recorded run ends once the screen is quiet after the last action, or after this long at most (the post-processor's default settle cap). */
const RECORDING_TAIL_MAX_MS = 1000;
/** Timeout of each success check. */
const CHECK_TIMEOUT_MS = 5000;
/** How long starting the live endpoint may take. */
const LIVE_START_TIMEOUT_MS = 5000;
/** How long attaching the navigation guard may take. */
const GUARD_START_TIMEOUT_MS = 10_000;

/** What starts a run's live endpoint (harness/live/endpoint.ts startLiveEndpoint). */
export type LiveEndpointStarter = (options: LiveEndpointOptions) => Promise<LiveEndpoint>;

interface RunState {
  controller: AbortController;
  /** Extra data for the next trace entry's meta (attachMeta). */
  meta: Record<string, unknown> | undefined;
  /** Every meta.model_calls item attached during the run, summed for result.json. */
  usage: ModelUsageTally;
  recorder: ActionRecorder;
  /** The run's success checks: after each action, in its grace window, and the final one. */
  verdict: RunVerdict;
  inFlight: Set<Promise<unknown>>;
  /** finish() was called: the run ends after the current act(). */
  finished: boolean;
  /** A person's takeover in progress. */
  takeover: HumanTakeover | null;
  /** Entries a person made (actor "human"). */
  humanSteps: number;
  /** The status and reason finish() was given (null: none, or plain 'finished'). */
  stop: { status: FinishStatus; reason: string | undefined } | null;
  /** finish({ status: 'needs_human' }) asked for help instead of ending (needsHuman 'ask'): act()'s `true` is not the end. */
  helpAsked: boolean;
  /** The live endpoint serves this run (a person can answer a help request). */
  served: boolean;
  /** The navigation guard (allowedDomains / blockedDomains), or null. */
  guard: RunDomainGuard | null;
  /** The auth bindings applied in the browser, or null. */
  auth: RunAuth | null;
}

const idleSignal = new AbortController().signal;

/** The base class of every agent: primitives that drive the desktop, recorded into a trace; subclasses implement act(). */
export abstract class Agent implements LiveControl {
  /**
   * The recorder of runs whose options give no `recorder`: none here (this bare Agent records only when
   * given one); the package root's Agent (`import { Agent } from 'vncua'`) sets the recording proxy.
   * Read through the instance's class, so a subclass may set its own.
   */
  static defaultRecorder: RecorderFactory | null = null;

  /**
   * What serves a run live (watchers, status, takeover) when the `live` option is on: startLiveEndpoint
   * (harness/live/endpoint.ts); null: none. Read through the instance's class, so a subclass (or a test) may set its own.
   */
  static liveEndpoint: LiveEndpointStarter | null = startLiveEndpoint;

  /** The validated options, with the VNC and CDP endpoints resolved (the password is kept out of it). */
  readonly options: Readonly<Omit<ResolvedAgentOptions, 'password' | 'secrets'>>;
  /** The run's secrets and auth bindings (never in `options`, never written). */
  readonly #secrets: RunSecrets;
  readonly #connection: AgentConnection;
  #checker: SuccessChecker | null = null;
  #run: RunState | null = null;
  /** The current run's recording, if any (told to redact a secret's key events). */
  #recording: RecordingHandle | null = null;
  #signal: AbortSignal = idleSignal;
  /** Settles when the last action called has settled (actions run one at a time). */
  #queue: Promise<void> = Promise.resolve();
  /** The loop's pause point and the live status. */
  readonly #live = new LiveRunControl();
  readonly #framebufferListeners = new Set<(fb: Framebuffer | null) => void>();

  /** Validates the options (AGENT_ERR_BAD_OPTIONS naming the field). Connects nothing. */
  constructor(options: AgentOptions) {
    const { password, secrets, ...rest } = resolveAgentOptions(options, (new.target as typeof Agent).defaultRecorder);
    this.options = Object.freeze(rest);
    this.#secrets = secrets;
    this.#connection = new AgentConnection({ url: rest.vncUrl, password });
    this.#connection.onChange((client) => {
      const fb = client?.framebuffer ?? null;
      for (const l of [...this.#framebufferListeners]) {
        try {
          l(fb);
        } catch {
          // a listener's failure is its own
        }
      }
    });
  }

  /** The task given in the options (undefined if none). */
  get task(): string | undefined {
    return this.options.task;
  }

  /** Fires when the current run is cancelled, times out or ends: pass it to model calls so they stop at once. */
  get signal(): AbortSignal {
    return this.#signal;
  }

  /** One step: look at the screen, call the model, perform actions. Resolve true when the task is done. */
  abstract act(): Promise<boolean>;

  // ------------------------------------------------------------------ run loop

  /** Call act() until done, maxSteps, cancellation or an error; write result.json and execution.json. Never rejects. */
  async run(options: RunOptions = {}): Promise<AgentRunResult> {
    const t0 = performance.now();
    // Its rejection is the run's to report (below), never an unhandled one while the run starts.
    if (options?.ready instanceof Promise) options.ready.catch(() => {});
    if (this.#run) {
      return {
        status: 'error',
        steps: 0,
        durationMs: 0,
        error: { code: 'AGENT_ERR_ILLEGAL_STATE', message: 'run() was called while a run of this agent is in progress; await it first (its files were left alone).' },
      };
    }
    const writer = new TraceWriter(this.options.outputDir);
    const controller = new AbortController();
    const verdict = new RunVerdict({
      inspect: this.options.cdpUrl === null ? null : (o) => this.#successChecker().inspect(o),
      screen: () => this.#screenFeed(),
      markComplete: (index, check) => writer.markComplete(index, check),
      graceMs: this.options.successGraceMs,
      quietMs: QUIET_SCREEN_MS,
      checkTimeoutMs: CHECK_TIMEOUT_MS,
    });
    const state: RunState = {
      controller,
      meta: undefined,
      usage: new ModelUsageTally(),
      recorder: new ActionRecorder(writer, verdict.actionChecks(controller.signal), () => {
        const m = state.meta;
        state.meta = undefined;
        return m;
      }),
      verdict,
      inFlight: new Set(),
      finished: false,
      takeover: null,
      humanSteps: 0,
      stop: null,
      helpAsked: false,
      served: false,
      guard: null,
      auth: null,
    };
    this.#run = state;
    this.#signal = controller.signal;
    // Live from now on: a takeover or pause() asked for while the run starts is honoured before its first act().
    this.#live.begin({
      start: () => {
        state.takeover = new HumanTakeover(this.#takeoverIO(state, controller.signal), this.#connection.current?.pointer ?? null);
      },
      input: (e) => state.takeover?.input(e),
      end: async () => {
        const t = state.takeover;
        state.takeover = null;
        await t?.end();
      },
    });
    const refused = await this.#claimOutputDir();
    if (refused) {
      await this.#live.end();
      this.#run = null;
      controller.abort(cancelledError('a run that could not start'));
      return { status: 'error', steps: 0, durationMs: roundMs(performance.now() - t0), error: refused };
    }
    let status: RunStatus = 'error';
    let error: unknown;
    let endError: { code: string; message: string } | undefined;
    let endReason: string | undefined;
    let steps = 0;
    let opened = false;
    let recording: RecordingHandle | null = null;
    let connecting: Promise<void> | null = null;
    let user: AbortSignal | undefined;
    let unfollowUser = () => {};
    let endpoint = null as LiveEndpoint | null;
    let liveError: { code: string; message: string } | undefined;
    /** The live endpoint starting (beside the recorder, the connection and the task page's readiness); never rejects. */
    let liveStarting: Promise<void> | null = null;
    let guardStarting: Promise<void> | null = null;
    try {
      await writer.open();
      opened = true;
      // The navigation guard attaches beside the recorder and the connection; no step runs unguarded.
      if (this.options.domainPolicy && this.options.cdpUrl !== null) {
        const guard = new RunDomainGuard(
          this.options.cdpUrl,
          this.options.domainPolicy,
          (meta) => {
            if (this.#run === state) this.attachMeta(meta);
          },
          // An unguarded browser must not go on: the run ends with GUARD_ERR_LOST (status error).
          (e) => {
            if (!controller.signal.aborted) controller.abort(e);
          },
        );
        state.guard = guard;
        guardStarting = guard.start(controller.signal, GUARD_START_TIMEOUT_MS);
        guardStarting.catch(() => {});
      }
      // Auth bindings attach after the guard (so the guard judges a request first), before the first step.
      if (this.#secrets.bindings.length > 0 && this.options.cdpUrl !== null) {
        const auth = new RunAuth(
          this.options.cdpUrl,
          this.#secrets.bindings,
          (meta) => {
            if (this.#run === state) this.attachMeta(meta);
          },
          (e) => {
            if (!controller.signal.aborted) controller.abort(e);
          },
        );
        state.auth = auth;
        const after = guardStarting ?? Promise.resolve();
        const authStarting = after.then(() => auth.start(controller.signal, GUARD_START_TIMEOUT_MS));
        authStarting.catch(() => {});
        guardStarting = authStarting;
      }
      const starter = this.options.live ? (this.constructor as typeof Agent).liveEndpoint : null;
      if (starter) {
        liveStarting = Promise.resolve()
          .then(() => starter({ dir: this.options.outputDir, control: this, title: this.options.task, signal: controller.signal, timeoutMs: LIVE_START_TIMEOUT_MS }))
          .then(
            (e) => {
              endpoint = e;
              state.served = true;
            },
            (e) => {
              // The run goes on without a live view; result.json says why (not when the run itself stopped it).
              if (!controller.signal.aborted) liveError = errorInfo(e, 'LIVE_ERR_LISTEN');
            },
          );
      }
      const run = resolveRunOptions(options);
      const recorder = this.options.record ? this.options.recorder : null;
      if (recorder) {
        try {
          recording = await recorder({
            upstreamUrl: this.options.vncUrl,
            dir: join(this.options.outputDir, 'recording'),
            signal: controller.signal,
            timeoutMs: RECORDER_START_TIMEOUT_MS,
          });
        } catch (e) {
          if (isVncuaError(e)) throw e;
          throw new VncuaError(
            'RECORDER_ERR_NOT_STARTED',
            `The recording proxy could not be started: ${(e as Error)?.message ?? String(e)}. Pass record: false to run without recording.`,
            { cause: e },
          );
        }
        this.#connection.redirect(recording.url, recording);
        this.#recording = recording;
      }
      // Record from the start of the run, not from the first action that needs the screen (a first
      // `wait` would have no "before" frame); with `ready`, connect while the desktop gets ready. A
      // failure here shows again at the first action.
      connecting =
        recorder || run.ready
          ? this.#connection.driver(controller.signal).then(
              () => {},
              () => {},
            )
          : null;
      user = run.signal;
      unfollowUser = follow(user, controller, (reason) => cancelledError('the run', reason));
      await guardStarting;
      if (run.ready) {
        // A function opens what the run needs only now that the guard and the auth bindings are attached.
        const ready = typeof run.ready === 'function' ? run.ready() : run.ready;
        ready.catch(() => {});
        await race(ready, { signal: controller.signal });
      }
      await connecting;
      // Served before the first step, so watchers see the run from its start.
      await liveStarting;
      let done = false;
      while (!done && steps < run.maxSteps && !controller.signal.aborted) {
        // A pause (pause(), askForHelp(), a takeover) happens here, between steps; cancelling ends it.
        await this.#live.gate(controller.signal);
        // A cost cap reached by the last step's model calls: stop before the next act() (and its model call).
        const capped = this.#costCap(state);
        if (capped) {
          controller.abort(capped);
          break;
        }
        this.#live.stepStarted();
        if (state.guard) state.guard.step = steps + 1;
        if (state.auth) state.auth.step = steps + 1;
        done = await this.#step(controller);
        steps++;
        done ||= state.finished;
        // needs_human with needsHuman 'ask': the step asked for help (the gate pauses); the run goes on after it.
        if (state.helpAsked && !state.finished) done = false;
        state.helpAsked = false;
      }
      if (done) {
        status = state.stop?.status ?? 'finished';
        endReason = state.stop?.reason;
      } else if (controller.signal.aborted) throw controller.signal.reason;
      else status = 'max_steps';
    } catch (e) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      if (isVncuaError(reason, 'AGENT_ERR_CANCELLED')) status = 'cancelled';
      else if (reason instanceof EndRun) {
        status = reason.status;
        endError = reason.error;
        endReason = reason.reason;
      } else {
        status = 'error';
        error = reason ?? e;
      }
    } finally {
      unfollowUser();
      if (!controller.signal.aborted) controller.abort(cancelledError('an action called after the run ended'));
    }
    await liveStarting;
    try {
      return await this.#endRun({ state, writer, verdict, status, error, endError, endReason, steps, opened, recording, connecting, user, liveError, t0 });
    } finally {
      try {
        await endpoint?.close();
      } catch {
        // close() never rejects; guarded all the same
      }
    }
  }

  /** After the loop: a takeover is recorded and ended, the tail recorded, the trace finalized, everything closed, result.json written. */
  async #endRun(r: {
    state: RunState;
    writer: TraceWriter;
    verdict: RunVerdict;
    status: RunStatus;
    error: unknown;
    endError: { code: string; message: string } | undefined;
    endReason: string | undefined;
    steps: number;
    opened: boolean;
    recording: RecordingHandle | null;
    connecting: Promise<void> | null;
    user: AbortSignal | undefined;
    liveError: { code: string; message: string } | undefined;
    t0: number;
  }): Promise<AgentRunResult> {
    const { state, writer, verdict, steps, opened, recording, connecting, user, t0 } = r;
    let { status, error } = r;
    const endError = r.endError;
    // A person still holding the run (it was cancelled or ended meanwhile): what they hold is released, their pending actions recorded.
    await this.#live.end();
    await settle(state.inFlight, IN_FLIGHT_GRACE_MS);
    await connecting;
    this.#run = null;
    // The tail: the screen's answer to the last action is recorded, and success is checked until the last
    // action's grace window has passed (a late success rewrites its entry), before the trace is finalized.
    if (recording && status !== 'cancelled') await this.#recordTail();
    if (opened) await verdict.finish(status === 'cancelled' ? AbortSignal.abort() : user);
    await state.guard?.close();
    await state.auth?.close();
    if (opened) {
      try {
        await writer.finalize();
      } catch (e) {
        if (status !== 'error') error = e;
        status = 'error';
      }
    }
    await this.#closeAll();
    if (recording) {
      try {
        await recording.close();
      } catch {
        // The recording keeps what was written; the run's own result stands.
      }
    }
    this.#connection.redirect(null);
    this.#recording = null;
    const result: AgentRunResult = { status, steps, durationMs: roundMs(performance.now() - t0) };
    if (status === 'error') result.error = errorInfo(error, 'AGENT_ERR_ACT_FAILED');
    else if (endError) result.error = { code: endError.code, message: endError.message };
    if (r.endReason !== undefined && status !== 'error') result.reason = r.endReason;
    Object.assign(result, verdict.result(), state.usage.totals());
    // Present only when there is something to say (a run that never paused reads as before).
    if (this.#live.pausedMs > 0) result.paused_ms = roundMs(this.#live.pausedMs);
    if (this.#live.helpRequests > 0) result.help_requests = this.#live.helpRequests;
    if (state.humanSteps > 0) result.human_steps = state.humanSteps;
    if (state.guard) result.domain_blocked = state.guard.blocked;
    if (r.liveError) result.live_error = r.liveError;
    try {
      // A finished run that appeared after #claimOutputDir() (another process) is not written over.
      if (!isVncuaError(error, 'OUTPUT_ERR_RUN_EXISTS')) {
        await writer.writeResult(result);
        if (status === 'error') await writer.writeError(error);
      }
    } catch {
      // Nothing more can be recorded (the directory is not writable); the result is still returned.
    }
    return result;
  }

  /** Null when outputDir holds no finished run, or held one and `overwrite` moved it aside; else the error to resolve with (nothing touched). */
  async #claimOutputDir(): Promise<{ code: string; message: string } | null> {
    const dir = this.options.outputDir;
    const found = await finishedRunFiles(dir);
    if (found.length === 0) return null;
    if (!this.options.overwrite) {
      const e = runExistsError(dir, found, 'Give another outputDir, or the overwrite option to move the old run aside (outputDir.1, ...).');
      return { code: e.code, message: e.message };
    }
    try {
      await moveAside(dir);
      return null;
    } catch (e) {
      return errorInfo(e, 'OUTPUT_ERR_NOT_WRITABLE');
    }
  }

  /** One act() call, abandoned at once if the run's signal fires or stepTimeoutMs passes. */
  async #step(controller: AbortController): Promise<boolean> {
    const ms = this.options.stepTimeoutMs;
    const act = race(() => Promise.resolve(this.act()), {
      signal: controller.signal,
      timeoutMs: ms,
      mapError: (c) =>
        c.kind === 'timeout'
          ? new VncuaError('AGENT_ERR_STEP_TIMEOUT', `act() did not return within stepTimeoutMs (${ms} ms); the run was stopped.`, { details: { stepTimeoutMs: ms } })
          : c.reason,
      // A step timeout stops the whole run (a no-op when the run's signal fired).
      onAbort: (e) => controller.abort(e),
    });
    return (await act) === true;
  }

  /**
   * With a recording on, the screen's answer to the last action belongs to the session: keep the
   * connection until the screen is quiet (at most RECORDING_TAIL_MAX_MS), so the post-processor's
   * last "after" frame shows the settled screen.
   */
  async #recordTail(): Promise<void> {
    try {
      await this.#connection.current?.client.waitForQuiet({ quietMs: QUIET_SCREEN_MS, timeoutMs: RECORDING_TAIL_MAX_MS });
    } catch {
      // the connection is gone: nothing more to record
    }
  }

  async #closeAll(): Promise<void> {
    try {
      await this.#connection.close();
    } catch {
      // already gone
    }
    const checker = this.#checker;
    this.#checker = null;
    try {
      await checker?.close();
    } catch {
      // already gone
    }
  }

  // ------------------------------------------------------------------ live: pause, help, takeover (harness/live/control.ts)

  /** Pause the loop after the current act() returns; resolves once it is paused (see live-control.ts). Do not await it inside act(): use askForHelp(). AGENT_ERR_ILLEGAL_STATE outside a run. */
  pause(): Promise<void> {
    return this.#live.pause();
  }

  /** Let a paused loop go on (a person holding the run hands back: what they hold is released, their pending actions recorded). Nothing outside a run. */
  resume(): Promise<void> {
    return this.#live.resume();
  }

  /** From act(): ask a person for help. The status says 'help' (with `reason`) at once; the loop pauses after this step until resume() or a person's handback. */
  askForHelp(reason: string): void {
    this.#live.askForHelp(reason);
  }

  /** The live state now: running, paused, help, or ended (outside a run). */
  get liveState(): LiveState {
    return this.#live.status().state;
  }

  /** Time the current (or last) run's loop has spent paused, ms (pause(), askForHelp(), takeovers; the ongoing pause included). */
  get pausedMs(): number {
    return this.#live.pausedMs;
  }

  /** The live status: state, who holds the run, the help reason, act() calls made. */
  status(): LiveStatus {
    return this.#live.status();
  }

  /** Calls `listener` on every status change; returns the unsubscribe function. */
  onStatus(listener: (status: LiveStatus) => void): () => void {
    return this.#live.onStatus(listener);
  }

  /** The framebuffer of the live VNC connection (null before the first connection, after a drop until the re-connection, and after the run). */
  framebuffer(): Framebuffer | null {
    return this.#connection.current?.client.framebuffer ?? null;
  }

  /** Calls `listener` when the connection changes (connected, re-connected: its framebuffer; closed or dropped: null); returns the unsubscribe function. */
  onFramebuffer(listener: (fb: Framebuffer | null) => void): () => void {
    this.#framebufferListeners.add(listener);
    return () => void this.#framebufferListeners.delete(listener);
  }

  /** Pause after the current step and give `who` mouse and keyboard; resolves once they hold it. LIVE_ERR_TAKEN (details.holder) when someone else does. */
  takeover(who: string): Promise<LiveStatus> {
    return this.#live.takeover(who);
  }

  /** `who` gives control back: what they hold is released, their actions recorded, the loop resumes. LIVE_ERR_NOT_HOLDER (details.holder) when they do not hold it. */
  handback(who: string): Promise<LiveStatus> {
    return this.#live.handback(who);
  }

  /** A person's input: sent through this agent's VNC connection and recorded (actor "human") while `who` holds the run; dropped otherwise. */
  input(who: string, event: HumanInput): void {
    this.#live.input(who, event);
  }

  /** What a takeover in run `state` uses: this agent's connection and its trace. */
  #takeoverIO(state: RunState, signal: AbortSignal) {
    return {
      driver: () => this.#connection.current,
      connect: () => this.#connection.driver(signal),
      inputStarting: () => state.recorder.inputStarting(),
      record: (a: HumanAction) => this.#recordHuman(state, a),
    };
  }

  /** Record a person's action in the trace, after any action still in progress (one at a time, as every action). */
  #recordHuman(state: RunState, a: HumanAction): Promise<void> {
    const p = this.#queue
      .then(() => state.recorder.recordHuman(a))
      .then(() => {
        state.humanSteps++;
      });
    this.#queue = p.catch(() => undefined);
    const tracked = p.catch(() => {
      // A failed write keeps the entry in the trace (the next write includes it); nothing to do here.
    });
    state.inFlight.add(tracked);
    void tracked.then(() => state.inFlight.delete(tracked));
    return tracked;
  }

  // ------------------------------------------------------------------ recorded primitives

  /** Move the pointer to `position` (no button held). Recorded as mouse_move. */
  mouseMove(position: Point): Promise<void> {
    return this.#action(
      'mouse_move',
      () => ({ position: point(position) }),
      () => ({ position }),
      async (signal) => {
        const d = await this.#driver(signal);
        await d.move(checkPosition('position', position, d.size), { signal });
      },
    );
  }

  /** Click (single, double or triple) with a button at `position` (default: where the pointer is). Recorded as mouse_click. */
  mouseClick(options: MouseClickOptions = {}): Promise<void> {
    let button: MouseButton = 'left';
    let clickType: ClickType = 'single';
    return this.#action(
      'mouse_click',
      () => ({ position: options.position === undefined ? undefined : point(options.position), button, click_type: clickType }),
      () => ({ position: options?.position, button: options?.button, click_type: options?.clickType }),
      async (signal) => {
        const o = checkObject('options', options, ['position', 'button', 'clickType']);
        button = checkChoice('button', o.button ?? 'left', MOUSE_BUTTONS);
        clickType = checkChoice('clickType', o.clickType ?? 'single', CLICK_TYPES);
        const d = await this.#driver(signal);
        const at = o.position === undefined ? d.pointer : checkPosition('position', o.position, d.size);
        const count = CLICK_COUNTS[clickType];
        // A multi-click is checked against the page's own click count when CDP can tell (multi-click.ts).
        const page = count > 1 ? await this.#pageInput(signal) : null;
        const check = page ? await pageClickCheck(page, count, signal) : null;
        const r = await d.click(at, BUTTON_BITS[button], count, { signal, landed: check?.landed });
        // A multi-click made again (the page counted separate clicks, or its presses came too far apart): say so in the trace.
        if (r.attempts > 1) this.attachMeta({ click_attempts: r.attempts, click_widest_gap_ms: Math.round(r.widestGapMs), click_count_seen: check?.lastDetail() });
      },
    );
  }

  /** Press a button at `start`, move to `end` in steps (drag-and-drop and sliders follow), release. Recorded as mouse_drag. */
  mouseDrag(options: MouseDragOptions): Promise<void> {
    let button: MouseButton = 'left';
    return this.#action(
      'mouse_drag',
      () => ({ start: point(options.start), end: point(options.end), button }),
      () => ({ start: options?.start, end: options?.end, button: options?.button }),
      async (signal) => {
        const o = checkObject('options', options, ['start', 'end', 'button']);
        button = checkChoice('button', o.button ?? 'left', MOUSE_BUTTONS);
        const d = await this.#driver(signal);
        const start = checkPosition('start', o.start, d.size);
        const end = checkPosition('end', o.end, d.size);
        await d.drag(start, end, BUTTON_BITS[button], { signal });
      },
    );
  }

  /** Turn the wheel `repeat` notches in `direction` at `position` (X buttons 4/5; Shift + 4/5 for left/right, see SCROLL_WHEEL). Recorded as mouse_scroll. */
  mouseScroll(options: MouseScrollOptions): Promise<void> {
    let direction: ScrollDirection = 'down';
    let repeat = 1;
    return this.#action(
      'mouse_scroll',
      () => ({ position: point(options.position), direction, repeat }),
      () => ({ position: options?.position, direction: options?.direction, repeat: options?.repeat }),
      async (signal) => {
        const o = checkObject('options', options, ['position', 'direction', 'repeat']);
        direction = checkChoice('direction', o.direction, SCROLL_DIRECTIONS);
        repeat = checkRepeat(o.repeat ?? 1);
        const d = await this.#driver(signal);
        const at = checkPosition('position', o.position, d.size);
        await d.scroll(at, SCROLL_WHEEL[direction], repeat, { signal });
      },
    );
  }

  /** Press a key combination ("Enter", "ctrl+shift+p", "alt f"): keys pressed in order, released in reverse. Recorded as press_keys. */
  pressKeys(keys: string): Promise<void> {
    return this.#action(
      'press_keys',
      () => ({ keys }),
      () => ({ keys }),
      async (signal) => {
        const combo = parseKeys(keys);
        const d = await this.#driver(signal);
        await d.keys(planKeyPress(combo, { alreadyMapped: d.mapped }), { signal });
      },
    );
  }

  /**
   * Type `text` exactly (any Unicode; "\n" is Return, "\t" is Tab). Recorded as type_text. A character the server
   * may drop (not on a US keymap) is checked over CDP and inserted with Input.insertText if it was dropped (see
   * type-text.ts; the entry's meta says so). `{{secret:NAME}}` types the run's secret NAME (the `secrets` option, an
   * auth binding's variable): the trace keeps the placeholder, the recording redacts its key events (meta
   * `secret_spans` names the secrets typed); an unknown name is SECRET_ERR_UNKNOWN.
   */
  typeText(text: string): Promise<void> {
    return this.#action(
      'type_text',
      () => ({ text }),
      () => ({ text }),
      async (signal) => {
        checkString('text', text);
        const parts = hasSecretPlaceholder(text) ? this.#secrets.expand(text) : [{ text, secret: null }];
        for (const p of parts) planTypeText(p.text, { prime: false });
        const d = await this.#driver(signal);
        const typed: string[] = [];
        for (const p of parts) {
          if (p.text === '') continue;
          if (p.secret === null) {
            const meta = await typeTextChecked(d, p.text, () => this.#pageInput(signal), { signal });
            if (meta) this.attachMeta(meta);
            continue;
          }
          // A secret: typed as key events only (no CDP fallback, which would read the field back), each of them
          // redacted in the recording (the recorder is told how many come, before they are sent).
          const strokes = planTypeText(p.text, { alreadyMapped: d.mapped });
          this.#recording?.redactKeyEvents?.(strokes.filter((k) => !isPause(k)) as Array<{ keysym: number; down: boolean }>);
          await d.keys(strokes, { signal });
          typed.push(p.secret);
        }
        if (typed.length) this.attachMeta({ secret_spans: typed });
      },
    );
  }

  /** What the active page received, over CDP (null without a cdpUrl or an answer). */
  async #pageInput(signal: AbortSignal): Promise<PageInput | null> {
    if (this.options.cdpUrl === null) return null;
    this.#checker ??= new SuccessChecker(this.options.cdpUrl, this.options.successCheck);
    const session = await this.#checker.activeSession({ signal, timeoutMs: CHECK_TIMEOUT_MS });
    return session ? PageInput.open(session) : null;
  }

  /** Go back or forward in the browser's history (Alt+Left / Alt+Right, as a user would). Recorded as page_navigation. */
  pageNavigation(direction: NavigationDirection): Promise<void> {
    return this.#action(
      'page_navigation',
      () => ({ direction }),
      () => ({ direction }),
      async (signal) => {
        const dir = checkChoice('direction', direction, NAVIGATION_DIRECTIONS);
        const d = await this.#driver(signal);
        await d.keys(planKeyPress(parseKeys(dir === 'back' ? 'alt+Left' : 'alt+Right')), { signal });
      },
    );
  }

  /** Wait `seconds` (0..3600; cut short if the run is cancelled). Recorded as wait. */
  wait(seconds: number): Promise<void> {
    return this.#action(
      'wait',
      () => ({ seconds }),
      () => ({ seconds }),
      async (signal) => {
        await sleep(checkSeconds(seconds) * 1000, signal);
      },
    );
  }

  /**
   * End the run after this act(): the task is done (`status` 'finished', the default), or the agent stops without doing
   * it and says why: `{ status: 'ambiguity' | 'needs_human' | 'sensitive_action' | 'problem', reason }` (result.json's
   * status and `reason`; scores count these apart). Any other key is recorded as given. A status not among these, or a
   * reason that is not a string, is ACTION_ERR_BAD_ARGUMENT. With the needsHuman option 'ask' and the run served live,
   * `needs_human` asks for help (askForHelp(reason)) instead: the run pauses after this step and goes on once a person
   * hands back (the entry's meta says `help_requested: true`). Recorded as finish.
   */
  finish(params: FinishParams = {}): Promise<void> {
    return this.#action(
      'finish',
      () => jsonSafe(params) as Record<string, unknown>,
      () => params,
      async () => {
        const p = checkObject('params', params, Object.keys(params ?? {}));
        const status = p.status === undefined ? 'finished' : checkChoice('status', p.status, FINISH_STATUSES);
        const reason = p.reason === undefined ? undefined : checkString('reason', p.reason);
        const run = this.#run!;
        if (status === 'needs_human' && this.options.needsHuman === 'ask' && run.served) {
          this.askForHelp(reason ?? 'The agent needs a person (finish with status needs_human).');
          run.helpAsked = true;
          this.attachMeta({ help_requested: true });
          return;
        }
        run.stop = status === 'finished' && reason === undefined ? null : { status, reason };
        run.finished = true;
      },
    );
  }

  // ------------------------------------------------------------------ utilities (not recorded)

  /** The screen as a base64 PNG, with the cursor drawn in by default. */
  async screenshot(options: AgentScreenshotOptions = {}): Promise<string> {
    const signal = this.#run?.controller.signal;
    const d = await this.#driver(signal);
    const shot = await d.client.screenshot({ cursor: options.cursor ?? true, signal });
    return shot.base64;
  }

  /**
   * The screen as PNG or JPEG, optionally scaled to `size` (the image a model expects; image coordinate x maps back to
   * x * screenWidth / width), with the cursor drawn in by default, and a hash of the image for "same screen" checks.
   */
  async captureScreen(options: CaptureScreenOptions = {}): Promise<ScreenCapture> {
    const signal = this.#run?.controller.signal;
    const d = await this.#driver(signal);
    const { cursor = true, ...format } = options;
    const c = await d.client.capture({ ...format, cursor, signal });
    return {
      base64: c.base64,
      mimeType: c.mimeType,
      width: c.width,
      height: c.height,
      screenWidth: c.screenWidth,
      screenHeight: c.screenHeight,
      hash: createHash('sha1').update(c.data).digest('hex'),
    };
  }

  /**
   * Wait until the screen stops changing (no update for `quietMs`, default 300), at most `timeoutMs` (default 2000);
   * true when it went quiet. What an agent does before looking: animations end, menus open, late content paints.
   */
  async waitForQuietScreen(options: { quietMs?: number; timeoutMs?: number } = {}): Promise<boolean> {
    const signal = this.#run?.controller.signal;
    const d = await this.#driver(signal);
    return d.client.waitForQuiet({ quietMs: options.quietMs ?? QUIET_SCREEN_MS, timeoutMs: options.timeoutMs ?? 2000, signal });
  }

  /**
   * After an input action: wait until the screen changed since that action began (at most `changeTimeoutMs`, default
   * 1000), then until it is quiet (`quietMs`, default 300; at most `timeoutMs`, default 3000). See screen-waits.ts.
   */
  async waitForInputEffects(options: { changeTimeoutMs?: number; quietMs?: number; timeoutMs?: number } = {}): Promise<{ changed: boolean; quiet: boolean }> {
    const signal = this.#run?.controller.signal;
    const d = await this.#driver(signal);
    return waitForEffects(d.client, d.inputStartVersion, { quietMs: QUIET_SCREEN_MS, ...options, signal });
  }

  /** Wait until the screen is not blank (a cursor aside; at most `timeoutMs`, default 10 000): true once it shows something. See screen-waits.ts. */
  async waitForPaintedScreen(options: { timeoutMs?: number } = {}): Promise<boolean> {
    const signal = this.#run?.controller.signal;
    const d = await this.#driver(signal);
    return waitForPainted(d.client, { ...options, signal });
  }

  /** The URL of the browser's active page over CDP, or null when unknown (no cdpUrl, or no answer). */
  async currentUrl(): Promise<string | null> {
    if (this.options.cdpUrl === null) return null;
    this.#checker ??= new SuccessChecker(this.options.cdpUrl, this.options.successCheck);
    return this.#checker.activeUrl({ signal: this.#run?.controller.signal, timeoutMs: CHECK_TIMEOUT_MS });
  }

  /**
   * End the current run at once with `status` (for adapters: a safety check the policy does not acknowledge, a stuck
   * loop, replies that cannot be parsed, a spent budget). result.json gets the status and `error`; the trace keeps
   * every entry. act() in progress is abandoned, as on cancellation. Does nothing outside a run.
   */
  protected endRun(status: EndRunStatus, error?: { code: string; message: string }, reason?: string): void {
    const run = this.#run;
    if (!run || run.controller.signal.aborted) return;
    run.controller.abort(new EndRun(status, error, reason));
  }

  /**
   * Before a model call: when the run's cost cap (maxCostUsd) or the shared one (costBudget) is reached, end the run with
   * status `cost_cap` and return true (the caller makes no call; act() is abandoned as on cancellation). Throws
   * AGENT_ERR_COST_UNKNOWN when a cap is set and some call of the run had no price. False outside a run.
   */
  protected stopAtCostCap(): boolean {
    const run = this.#run;
    if (!run || run.controller.signal.aborted) return false;
    const capped = this.#costCap(run);
    if (!capped) return false;
    run.controller.abort(capped);
    return true;
  }

  /** The EndRun of a reached cost cap, or null; AGENT_ERR_COST_UNKNOWN when a cap is set and a call had no price. */
  #costCap(run: RunState): EndRun | null {
    const cap = this.options.maxCostUsd;
    const budget = this.options.costBudget;
    if (cap === null && budget === null) return null;
    if (run.usage.hasUnpriced) {
      throw new VncuaError(
        'AGENT_ERR_COST_UNKNOWN',
        'A cost cap is set (maxCostUsd, --max-cost or --max-suite-cost) but a model call of this run has no price (no cost_usd), so the cap cannot be kept: give the model a price (the prices option or -- --prices FILE).',
        { details: { maxCostUsd: cap, suiteLimitUsd: budget?.limitUsd ?? null } },
      );
    }
    const spent = run.usage.pricedUsd;
    if (cap !== null && spent >= cap) {
      return new EndRun('cost_cap', {
        code: 'AGENT_ERR_COST_CAP',
        message: `The run's model calls cost $${spent}, reaching its cap of $${cap} (maxCostUsd / --max-cost); it stopped before the next model call.`,
      });
    }
    if (budget?.reached) {
      return new EndRun('cost_cap', {
        code: 'EVAL_ERR_SUITE_COST_CAP',
        message: `The suite's model calls cost $${budget.spentUsd}, reaching its cap of $${budget.limitUsd} (--max-suite-cost); this run stopped before its next model call (its own calls: $${spent}).`,
      });
    }
    return null;
  }

  /**
   * What the navigation guard blocked since the last call, as notices for the model's next prompt ("domain not
   * allowed: URL (rule)"), oldest first; empty without a guard. Model adapters put them beside the next screenshot.
   */
  protected takeDomainNotices(): string[] {
    return this.#run?.guard?.takeNotices() ?? [];
  }

  /** Merge `meta` into the `meta` of the next recorded trace entry (model usage, latency...); its `model_calls` items also count in result.json's totals. Does nothing outside a run. */
  protected attachMeta(meta: Record<string, unknown>): void {
    const run = this.#run;
    if (!run) return;
    const merged: Record<string, unknown> = { ...(run.meta ?? {}) };
    const safe = jsonSafe(meta) as Record<string, unknown>;
    const before = run.usage.pricedUsd;
    run.usage.addMeta(safe);
    this.options.costBudget?.add(run.usage.pricedUsd - before);
    for (const [k, v] of Object.entries(safe)) {
      const prev = merged[k];
      merged[k] = Array.isArray(prev) && Array.isArray(v) ? [...prev, ...v] : v;
    }
    run.meta = merged;
  }

  /** The screen size in pixels. */
  async clientResolution(): Promise<{ width: number; height: number }> {
    const d = await this.#driver(this.#run?.controller.signal);
    return d.size;
  }

  /** Does the active page show the success sentinel? null when CDP gives no answer (or no cdpUrl was given). */
  checkTaskSuccess(): Promise<boolean | null> {
    return this.#check(this.#run?.controller.signal);
  }

  async #check(signal: AbortSignal | undefined): Promise<boolean | null> {
    if (this.options.cdpUrl === null) return null;
    return this.#successChecker().check({ signal, timeoutMs: CHECK_TIMEOUT_MS });
  }

  /** The success checker (made on first use; needs a cdpUrl). */
  #successChecker(): SuccessChecker {
    this.#checker ??= new SuccessChecker(this.options.cdpUrl!, this.options.successCheck);
    return this.#checker;
  }

  /** The live VNC connection's framebuffer updates, or null when not connected. */
  #screenFeed(): ScreenFeed | null {
    const client = this.#connection.current?.client;
    if (!client) return null;
    return {
      get version() {
        return client.framebuffer.version;
      },
      onUpdate(listener) {
        const f = () => listener();
        client.on('update', f);
        return () => void client.off('update', f);
      },
    };
  }

  // ------------------------------------------------------------------ internals

  async #driver(signal: AbortSignal | undefined): Promise<InputDriver> {
    return this.#connection.driver(signal);
  }

  /** Run one primitive inside the current run: record it (success or failed attempt) and track it until it settles. */
  #action<T>(action: ActionName, params: () => Record<string, unknown>, given: () => unknown, perform: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const run = this.#run;
    if (!run) {
      return Promise.reject(new VncuaError('AGENT_ERR_ILLEGAL_STATE', `${action} can only be performed from act() while run() is in progress.`, { details: { action } }));
    }
    const signal = run.controller.signal;
    const refuse = () => Promise.reject(isVncuaError(signal.reason) ? signal.reason : cancelledError(action, signal.reason));
    if (signal.aborted) return refuse();
    // One action at a time, in call order, even if act() forgets an await: pacing relies on it.
    const previous = this.#queue;
    const p = previous.then(() => {
      if (signal.aborted) return refuse();
      return run.recorder.record(action, params, given, async () => {
        try {
          return await perform(signal);
        } catch (e) {
          throw connectionLostDuring(action, e);
        }
      });
    });
    this.#queue = p.then(
      () => undefined,
      () => undefined,
    );
    run.inFlight.add(p);
    const forget = () => run.inFlight.delete(p);
    p.then(forget, forget);
    return p;
  }
}

/** `{ x, y }` of a point as given (extra keys dropped), for the trace. */
function point(p: Point): Point {
  return { x: p.x, y: p.y };
}

/** A connection that closed in the middle of an action becomes AGENT_ERR_CONNECTION_LOST. */
function connectionLostDuring(action: ActionName, e: unknown): unknown {
  if (!isVncuaError(e, 'RFB_ERR_CLOSED') || isConnectError(e)) return e;
  return new VncuaError('AGENT_ERR_CONNECTION_LOST', `The VNC connection dropped during ${action}; part of its input may have been delivered. The next action reconnects.`, {
    cause: e,
    details: { action },
  });
}

/** Wait until every promise settled, or `ms` passed. */
async function settle(promises: Set<Promise<unknown>>, ms: number): Promise<void> {
  if (promises.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.allSettled([...promises]), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}
