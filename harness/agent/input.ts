/**
 * Input sequences over one VNC connection, paced so that every event lands exactly once.
 *
 * Pacing rules (measured on Xvnc 1.12 and x11vnc 0.9.16 with Chromium 156: bench/agent-pacing.ts,
 * bench/agent-overhead.ts, figures in harness/agent/README.md):
 * - After every button press or release: an RFB round trip (round-trip.ts), then at least
 *   MIN_BUTTON_GAP_MS since the event was sent.
 *   - x11vnc reads input in batches from its polling loop and, within one batch, applies the
 *     last pointer position before earlier button changes (a release lands where the next move
 *     goes) or drops a press/release pair entirely. Waiting for the round trip puts every
 *     button change in its own batch. Fixed delays do not work: x11vnc stalls for up to ~360 ms,
 *     and events queued during a stall are batched together whatever the spacing was.
 *   - Xvnc injects each event at once (~2 ms to the page), but Chromium mis-handles button events
 *     that carry the same X timestamp (millisecond resolution): a double click counted as two
 *     single clicks, a release reported at the next position. The 2 ms gap after the server has
 *     read the event gives every button event its own timestamp.
 * - Pointer moves without a button change, and key events, are not paced (neither server
 *   reorders or drops them), except inside drags, which need time between moves, and around a
 *   key held during pointer events (Shift for horizontal scrolling): x11vnc may apply a batch's
 *   pointer events after its key events, so a round trip separates them.
 * - Every sequence ends with a round trip, so when an action returns the server has read all
 *   its input, and the next action's events cannot be merged with it.
 * - A sequence that is interrupted (abort, timeout, error) releases whatever it holds (buttons,
 *   keys) before it rethrows, if the connection is still open.
 */
import { isVncuaError } from '../errors.ts';
import { KEYSYM, isPause, keysymsToPrime, type KeyStroke } from '../keys/index.ts';
import type { HumanInput } from '../live/control.ts';
import type { VncClient } from '../rfb/index.ts';
import type { Point } from './arguments.ts';
import { RoundTrip, sleep } from './round-trip.ts';

/** Least time between a button event and the next event (gives each its own X timestamp). */
export const MIN_BUTTON_GAP_MS = 2;
/** Time between the moves of a drag (about one frame at 60 Hz, so the page sees each move). */
export const DRAG_STEP_MS = 16;
/** Number of intermediate moves of a drag (plus a nudge at each end). */
export const DRAG_STEPS = 10;
/** Pause after the press of a drag and before its release (drag-and-drop sources need time to start a drag session). */
export const DRAG_HOLD_MS = 60;
/** Pixels of the first nudge of a drag: beyond the 4-5 px drag thresholds of Chromium and GTK. */
export const DRAG_NUDGE_PX = 8;
/** Least time between scroll notches: Chromium merges wheel events that arrive closer together. */
export const SCROLL_GAP_MS = 20;
/**
 * Longest span, from sending one press of a multi-click to the server's acknowledgement of the next, that
 * still surely counts as one double/triple click: below GTK's 400 ms double-click time (Chromium follows it),
 * with room for the X server's own delay. A busy machine stretches the round trips (8 desktops on 2 cores:
 * 400-700 ms between presses seen), and the page then sees separate single clicks.
 */
export const MULTI_CLICK_MAX_GAP_MS = 250;
/** After a multi-click whose presses came too far apart: wait past any double-click time, then click again. */
export const MULTI_CLICK_RESET_MS = 600;
/** Attempts at a multi-click whose presses keep coming too far apart. */
export const MULTI_CLICK_ATTEMPTS = 5;
/**
 * Before each attempt at a multi-click, round trips until one completes within this (the process and the server
 * answer promptly again: stalls of seconds were seen while 8 desktops started), for at most CALM_TIMEOUT_MS.
 * x11vnc answers in ~43 ms (median).
 */
export const CALM_ROUND_TRIP_MS = 80;
/** Longest wait for a calm moment before a multi-click attempt (then it is made anyway). */
export const CALM_TIMEOUT_MS = 5000;

/** How a click went: attempts made, and the widest span between two presses of the last attempt (ms; 0 for a single click). */
export interface ClickReport {
  attempts: number;
  widestGapMs: number;
}

/** Options every input sequence takes. */
export interface InputOptions {
  signal?: AbortSignal | undefined;
}

/** Options of click(). */
export interface ClickOptions extends InputOptions {
  /** After each attempt of a multi-click: did the page count it (true / false), or unknown (null)? See multi-click.ts. */
  landed?: (() => Promise<boolean | null>) | undefined;
}

/** Sends paced input over one VncClient; remembers which keysyms it bound on the server (keymap priming). */
export class InputDriver {
  /** Keysyms this connection has primed on the server (see harness/keys/plan.ts). */
  readonly mapped = new Set<number>();
  private readonly rt: RoundTrip;
  private mask = 0;
  private held: number[] = [];
  /** Events were sent since the last completed round trip. */
  private unsynced = false;
  private startVersion = 0;

  constructor(
    readonly client: VncClient,
    /** Where the pointer is believed to be before this client sent any event. */
    private initialPointer: Point,
  ) {
    this.rt = new RoundTrip(client);
  }

  /** Screen size. */
  get size(): { width: number; height: number } {
    return this.client.resolution();
  }

  /** The last pointer position sent (or believed). */
  get pointer(): Point {
    const p = this.client.pointer;
    return p ? { x: p.x, y: p.y } : { ...this.initialPointer };
  }

  /** Wait until the server has read everything sent so far (at once if nothing was sent since the last round trip). */
  async sync(o: InputOptions = {}): Promise<void> {
    if (!this.unsynced) return;
    this.unsynced = false;
    try {
      await this.rt.sync({ signal: o.signal });
    } catch (e) {
      this.unsynced = true;
      throw e;
    }
  }

  /** Move the pointer (buttons unchanged). */
  async move(p: Point, o: InputOptions = {}): Promise<void> {
    await this.guard(async () => {
      this.pointerTo(p.x, p.y);
      await this.sync(o);
    });
  }

  /**
   * Move to `p`, then press and release `bit` `count` times (1, 2, 3 → click counts 1, 2, 3). A multi-click whose
   * presses came more than MULTI_CLICK_MAX_GAP_MS apart (send of one to acknowledgement of the next) may have
   * reached the page as separate clicks: it is made again after MULTI_CLICK_RESET_MS, up to MULTI_CLICK_ATTEMPTS times.
   * With `o.landed` (the page's own click count, over CDP) its answer decides instead when it has one. Each attempt
   * waits for a calm moment first (calm()).
   */
  async click(p: Point, bit: number, count: number, o: ClickOptions = {}): Promise<ClickReport> {
    const report: ClickReport = { attempts: 0, widestGapMs: 0 };
    await this.guard(async () => {
      this.pointerTo(p.x, p.y);
      for (;;) {
        if (count > 1) await this.calm(o);
        report.attempts++;
        report.widestGapMs = 0;
        let lastPressSent = 0;
        for (let i = 0; i < count; i++) {
          const sent = performance.now();
          await this.button(bit, true, o);
          if (i > 0) report.widestGapMs = Math.max(report.widestGapMs, performance.now() - lastPressSent);
          lastPressSent = sent;
          await this.button(bit, false, o);
        }
        if (report.attempts >= MULTI_CLICK_ATTEMPTS) break;
        // The page's word first (when it can tell); else the timing.
        const landed = count > 1 && o.landed ? await o.landed() : null;
        if (landed === true || (landed === null && report.widestGapMs <= MULTI_CLICK_MAX_GAP_MS)) break;
        await sleep(MULTI_CLICK_RESET_MS, o.signal);
      }
      await this.sync(o);
    });
    return report;
  }

  /** Press `bit` at `from`, move in steps to `to` (with waits, so drag-and-drop and sliders follow), release. */
  async drag(from: Point, to: Point, bit: number, o: InputOptions = {}): Promise<void> {
    await this.guard(async () => {
      this.pointerTo(from.x, from.y);
      await this.sync(o);
      await this.button(bit, true, o);
      await sleep(DRAG_HOLD_MS, o.signal);
      const { width, height } = this.size;
      const dx = to.x - from.x;
      const dy = to.y - from.y;
      const len = Math.hypot(dx, dy);
      // A first nudge beyond the drag threshold, towards the target (or sideways for a zero-length drag).
      const ux = len > 0 ? dx / len : 1;
      const uy = len > 0 ? dy / len : 0;
      const nudge = Math.min(DRAG_NUDGE_PX, Math.max(len, 1));
      const path: Point[] = [{ x: from.x + ux * nudge, y: from.y + uy * nudge }];
      for (let i = 1; i <= DRAG_STEPS; i++) path.push({ x: from.x + (dx * i) / DRAG_STEPS, y: from.y + (dy * i) / DRAG_STEPS });
      // Arrive, then move by one pixel and back: drop targets see a dragover at the final position.
      path.push({ x: to.x + (to.x > 0 ? -1 : 1), y: to.y }, { x: to.x, y: to.y });
      for (const q of path) {
        this.pointerTo(clamp(Math.round(q.x), width), clamp(Math.round(q.y), height));
        await this.sync(o);
        await sleep(DRAG_STEP_MS, o.signal);
      }
      await sleep(DRAG_HOLD_MS, o.signal);
      await this.button(bit, false, o);
      await this.sync(o);
    });
  }

  /** Move to `p`, then press and release the wheel button `wheel.bit` `repeat` times, with Shift held if `wheel.shift`. */
  async scroll(p: Point, wheel: { bit: number; shift: boolean }, repeat: number, o: InputOptions = {}): Promise<void> {
    await this.guard(async () => {
      this.pointerTo(p.x, p.y);
      if (wheel.shift) {
        this.key(KEYSYM.Shift_L, true);
        // x11vnc applies a batch's pointer events after its key events: let it take Shift first.
        await this.sync(o);
      }
      for (let i = 0; i < repeat; i++) {
        const t = performance.now();
        await this.button(wheel.bit, true, o);
        await this.button(wheel.bit, false, o);
        if (i < repeat - 1) await waitUntil(t + SCROLL_GAP_MS, o.signal);
      }
      if (wheel.shift) {
        this.key(KEYSYM.Shift_L, false);
      }
      await this.sync(o);
    });
  }

  /** Send a key plan (from planTypeText / planKeyPress): KeyEvents in order, pauses honoured. */
  async keys(plan: KeyStroke[], o: InputOptions = {}): Promise<void> {
    await this.guard(async () => {
      for (const step of plan) {
        if (isPause(step)) {
          await this.sync(o);
          await sleep(step.pauseMs, o.signal);
          continue;
        }
        if (o.signal?.aborted) await sleep(0, o.signal);
        this.key(step.keysym, step.down);
        if (step.down) for (const k of keysymsToPrime([step.keysym], this.mapped)) this.mapped.add(k);
      }
      await this.sync(o);
    });
  }

  /**
   * Send a person's event as it came (a takeover: harness/live/control.ts HumanInput), unpaced, keeping this
   * driver's buttons and held keys in step with it, so the pointer stays where the person leaves it and
   * releaseAll() lets go of whatever they still hold.
   */
  sendRaw(e: HumanInput): void {
    if (e.type === 'pointer') {
      this.mask = e.buttonMask;
      this.pointerTo(e.x, e.y);
    } else if (e.down && this.held.includes(e.keysym)) {
      // A key held down repeating: sent again, held once.
      this.client.keyEvent(e.keysym, true);
      this.unsynced = true;
    } else this.key(e.keysym, e.down);
  }

  /** Send a KeyEvent and remember what is held. */
  private key(keysym: number, down: boolean): void {
    this.client.keyEvent(keysym, down);
    this.unsynced = true;
    if (down) this.held.push(keysym);
    else {
      const i = this.held.lastIndexOf(keysym);
      if (i >= 0) this.held.splice(i, 1);
    }
  }

  private pointerTo(x: number, y: number): void {
    this.client.pointerEvent(x, y, this.mask);
    this.unsynced = true;
  }

  /** Press or release `bit` at the current position, then pace (see the file comment). */
  private async button(bit: number, down: boolean, o: InputOptions): Promise<void> {
    if (o.signal?.aborted) await sleep(0, o.signal);
    const { x, y } = this.pointer;
    this.mask = down ? this.mask | bit : this.mask & ~bit;
    const sent = performance.now();
    this.client.pointerEvent(x, y, this.mask);
    this.unsynced = true;
    await this.sync(o);
    await waitUntil(sent + MIN_BUTTON_GAP_MS, o.signal);
  }

  /** Round trips until one takes at most CALM_ROUND_TRIP_MS, or CALM_TIMEOUT_MS passed. */
  private async calm(o: InputOptions): Promise<void> {
    const end = performance.now() + CALM_TIMEOUT_MS;
    for (;;) {
      const t = performance.now();
      this.unsynced = true;
      await this.sync(o);
      const now = performance.now();
      if (now - t <= CALM_ROUND_TRIP_MS || now > end) return;
    }
  }

  /** The framebuffer version when the last input sequence began (to wait for its effects: Agent.waitForInputEffects). */
  get inputStartVersion(): number {
    return this.startVersion;
  }

  /** Run a sequence; if it fails, release held buttons and keys (when the connection is still open), then rethrow. */
  private async guard(body: () => Promise<void>): Promise<void> {
    this.startVersion = this.client.framebuffer.version;
    try {
      await body();
    } catch (e) {
      this.releaseAll();
      throw e;
    }
  }

  /** Release every held key (in reverse) and button; best effort, synchronous. */
  releaseAll(): void {
    if (this.client.closed) {
      this.held = [];
      this.mask = 0;
      return;
    }
    this.unsynced = true;
    try {
      for (const k of this.held.reverse()) this.client.keyEvent(k, false);
      if (this.mask !== 0) {
        const { x, y } = this.pointer;
        this.mask = 0;
        this.client.pointerEvent(x, y, 0);
      }
    } catch (e) {
      if (!isVncuaError(e, 'RFB_ERR_CLOSED')) throw e;
    } finally {
      this.held = [];
      this.mask = 0;
    }
  }
}

function clamp(v: number, size: number): number {
  return Math.max(0, Math.min(size - 1, v));
}

/** Wait until performance.now() reaches `t` (no wait if it already has). */
async function waitUntil(t: number, signal?: AbortSignal): Promise<void> {
  const left = t - performance.now();
  if (left > 0) await sleep(left, signal);
  else if (signal?.aborted) await sleep(0, signal);
}
