/**
 * A person's takeover of a run, as the Agent carries it out (the TakeoverHooks of live-control.ts): each of
 * their events goes at once through the agent's own VNC connection (InputDriver.sendRaw: no second
 * connection, the driver's pointer and buttons stay in step) and into the coalescer (human-input.ts); each
 * action it completes is recorded like the agent's (actor "human"), one at a time and in order. A timer
 * makes a pending action final when its deadline passes (a click with no second press, typing that
 * stopped). At handback, what the person still holds is released (and recorded as such), everything
 * pending is recorded, and end() resolves once the trace holds it all.
 *
 * Bad events (not a pointer or key event, coordinates or keysyms that are not numbers) are dropped;
 * coordinates are clamped to the screen. Events that arrive while there is no live connection (the agent
 * had not connected yet, or the connection dropped) wait, in order, while one is made (at most
 * MAX_QUEUED_EVENTS; if it cannot be made they are dropped: nothing is recorded that the desktop did not get).
 */
import type { HumanInput } from '../live/control.ts';
import { now } from '../trace/clock.ts';
import type { Point } from './arguments.ts';
import { HumanInputCoalescer, type CoalescerOptions, type HumanAction } from './human-input.ts';
import type { InputDriver } from './input.ts';

/** Most events kept while a connection is being made. */
export const MAX_QUEUED_EVENTS = 10_000;

/** What a takeover needs from the Agent. */
export interface TakeoverIO {
  /** The live connection's driver, or null when not connected. */
  driver(): InputDriver | null;
  /** Make a connection (the agent's own, re-made if it dropped). */
  connect(): Promise<InputDriver>;
  /** The person's input starts: the previous action's grace window ends (ActionRecorder.inputStarting). */
  inputStarting(): void;
  /** Record one action (actor "human"); called one at a time, in order. */
  record(action: HumanAction): Promise<void>;
}

/** One person's takeover (see the file comment). */
export class HumanTakeover {
  readonly #io: TakeoverIO;
  readonly #coalescer: HumanInputCoalescer;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  /** Events waiting for a connection (null: none being made). */
  #queued: HumanInput[] | null = null;
  /** The connection being made for queued events. */
  #connecting: Promise<void> = Promise.resolve();
  /** Actions recorded (or being recorded) so far. */
  actions = 0;

  constructor(io: TakeoverIO, restingPointer: Point | null, options: CoalescerOptions = {}) {
    this.#io = io;
    this.#coalescer = new HumanInputCoalescer(options);
    this.#coalescer.setRestingPointer(restingPointer);
  }

  /** One event of the person's: sent to the desktop, then coalesced. */
  input(event: HumanInput): void {
    if (this.#ended) return;
    const e = valid(event);
    if (!e) return;
    const d = this.#queued ? null : this.#io.driver();
    if (!d) {
      this.#queue(e);
      return;
    }
    this.#send(d, e);
  }

  /** Keep `e` until a connection is made (asking for one), then send what was kept, in order. */
  #queue(e: HumanInput): void {
    if (this.#queued) {
      if (this.#queued.length < MAX_QUEUED_EVENTS) this.#queued.push(e);
      return;
    }
    const q = [e];
    this.#queued = q;
    this.#connecting = this.#io.connect().then(
      (d) => {
        this.#queued = null;
        if (!this.#ended) for (const x of q) this.#send(d, x);
      },
      () => {
        this.#queued = null; // no connection: the events never reached the desktop, so nothing is recorded
      },
    );
  }

  #send(d: InputDriver, e: HumanInput): void {
    const sent = e.type === 'pointer' ? clampTo(e, d.size) : e;
    try {
      d.sendRaw(sent);
    } catch {
      return; // the connection closed under it: not delivered, not recorded
    }
    this.#io.inputStarting();
    this.#record(this.#coalescer.push(sent, now()));
    this.#schedule();
  }

  /** The takeover ends: release what is held (through the connection, if any), record what is pending; resolves once all of it is recorded. */
  async end(): Promise<void> {
    if (!this.#ended) {
      // Events waiting for a connection go out first (then the releases of what they hold).
      await this.#connecting;
      this.#ended = true;
      clearTimeout(this.#timer);
      const d = this.#io.driver();
      const t = now();
      for (const e of this.#coalescer.releases()) {
        try {
          d?.sendRaw(e);
        } catch {
          // the connection is gone: nothing is held on the desktop side any more
        }
        this.#record(this.#coalescer.push(e, t, true));
      }
      try {
        d?.releaseAll();
      } catch {
        // closed
      }
      this.#record(this.#coalescer.flush());
    }
    await this.#chain;
  }

  #record(actions: HumanAction[]): void {
    for (const a of actions) {
      this.actions++;
      this.#chain = this.#chain.then(() => this.#io.record(a)).catch(() => {});
    }
  }

  /** A timer for the coalescer's next deadline. */
  #schedule(): void {
    clearTimeout(this.#timer);
    const at = this.#coalescer.deadline;
    if (at === null || this.#ended) return;
    this.#timer = setTimeout(
      () => {
        if (this.#ended) return;
        this.#record(this.#coalescer.due(now()));
        this.#schedule();
      },
      Math.max(0, at - now()),
    );
  }
}

/** The event if it is a well-formed pointer or key event, else null. */
function valid(e: unknown): HumanInput | null {
  if (typeof e !== 'object' || e === null) return null;
  const v = e as Record<string, unknown>;
  const int = (x: unknown, max: number) => typeof x === 'number' && Number.isInteger(x) && x >= 0 && x <= max;
  if (v.type === 'pointer' && Number.isFinite(v.x) && Number.isFinite(v.y) && int(v.buttonMask, 255)) {
    return { type: 'pointer', x: v.x as number, y: v.y as number, buttonMask: v.buttonMask as number };
  }
  if (v.type === 'key' && int(v.keysym, 0xffffffff) && typeof v.down === 'boolean') return { type: 'key', keysym: v.keysym as number, down: v.down };
  return null;
}

/** A pointer event with its position rounded into the screen. */
function clampTo(e: Extract<HumanInput, { type: 'pointer' }>, size: { width: number; height: number }): HumanInput {
  const c = (v: number, n: number) => Math.max(0, Math.min(n - 1, Math.round(v)));
  return { type: 'pointer', x: c(e.x, size.width), y: c(e.y, size.height), buttonMask: e.buttonMask };
}
