/**
 * Paces the endpoint's FramebufferUpdates so that watching costs the agent a bounded share of its
 * time. Updates go out in frames: every watcher with a request waiting (and nothing on its way) is
 * served in the same frame, so watchers that wait for the same change get the same bytes, built once
 * (UpdateCache). After a frame that took c ms of the agent process's time (building updates and
 * handing them to sockets), the next frame waits until c / UPDATE_BUDGET ms after it began, at most
 * MAX_FRAME_INTERVAL_MS; and while the agent is acting (state "running"), frames are at least
 * RUNNING_FRAME_INTERVAL_MS apart (10 a second: plenty to watch, and the watchers' own decoding,
 * on the same machine, competes less with the agent's loop). While a person holds control or the
 * run is paused, only the budget paces. A change on a quiet screen goes out at once; on a busy
 * one, changes in between are merged into the next frame.
 */

/** The share of the agent process's time the endpoint's updates may take, all watchers together. */
export const UPDATE_BUDGET = 0.03;
/** The longest the budget makes a frame wait, ms. */
export const MAX_FRAME_INTERVAL_MS = 200;
/** The shortest interval between frames while the agent is acting, ms. */
export const RUNNING_FRAME_INTERVAL_MS = 100;

/** A watcher as the pacer sees it. */
export interface Paced {
  /** Build and send the update its waiting request can have now; true when it sent one. */
  sendUpdate(): boolean;
}

/** See the file comment. */
export class UpdatePacer {
  private readonly ready = new Set<Paced>();
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private notBefore = 0;
  /** Frames run so far, and the agent-process time they took (ms). */
  frames = 0;
  busyMs = 0;

  /** True while the agent is acting (frames at least RUNNING_FRAME_INTERVAL_MS apart). */
  running = false;

  /** `now`: the clock, in ms (tests give their own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** `w` has a request waiting and could send: serve it in the next frame. */
  want(w: Paced): void {
    this.ready.add(w);
    if (this.timer || this.immediate) return;
    const wait = this.notBefore - this.now();
    if (wait > 0) this.timer = setTimeout(() => this.frame(), wait);
    else this.immediate = setImmediate(() => this.frame());
  }

  /** `w` is gone. */
  forget(w: Paced): void {
    this.ready.delete(w);
  }

  /** Stop (the endpoint is closing). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    this.ready.clear();
  }

  private frame(): void {
    this.timer = null;
    this.immediate = null;
    const start = this.now();
    const due = [...this.ready];
    this.ready.clear();
    let sent = false;
    for (const w of due) if (w.sendUpdate()) sent = true;
    if (!sent) return;
    const cost = this.now() - start;
    this.frames++;
    this.busyMs += cost;
    this.notBefore = start + Math.max(Math.min(cost / UPDATE_BUDGET, MAX_FRAME_INTERVAL_MS), this.running ? RUNNING_FRAME_INTERVAL_MS : 0);
  }
}
