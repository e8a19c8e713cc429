/**
 * When the screen "settled" after an action: the first instant s ≥ ended_at after which no update
 * completes for QUIET_MS, searched no later than a cap (ended_at + settleMs, and never past the next
 * action's started_at).
 *
 * Why 300 ms: a click's visible effect reaches the client in ~35 ms on this stack (page handler, the
 * next paint, the VNC server's update), and a page that reacts keeps sending updates at least every
 * frame (16 ms) while it changes; a caret blinks every ~530 ms, so a blinking caret alone still lets
 * the screen count as settled between blinks. An animation that never pauses for 300 ms does not
 * settle: the frame at the cap is used (settled: false).
 */
import type { Replayer } from '../replay/replayer.ts';

/** No update for this long (ms) means the screen has settled. */
export const QUIET_MS = 300;

/** Where the "after" frame of an action is taken. */
export interface SettleResult {
  /** Instant whose frame to use (epoch ms). */
  at: number;
  /** True when a quiet window was seen before the cap; false when the cap (or the end of the data) came first. */
  settled: boolean;
}

/**
 * Find the settle instant after `endedAt`. The search stops at `capAt` (ended_at + settleMs) and at
 * `nextStart` (the next action's started_at). The screen counts as settled when no update completes for
 * `quietMs` after the last one, or — when the next action starts sooner — none completes before it starts
 * (the after frame is then exactly the screen the next action acted on). `dataEnd` is how far the
 * recording is known to reach (and, before it, where the stream shown is damaged or cannot be replayed:
 * Replayer.knownUntil): quiet past it cannot be confirmed.
 */
export async function settleAfter(replayer: Replayer, endedAt: number, capAt: number, nextStart: number, dataEnd: number, quietMs = QUIET_MS): Promise<SettleResult> {
  const cap = Math.max(endedAt, Math.min(capAt, nextStart));
  let q = endedAt;
  for (;;) {
    const u = await replayer.nextUpdateAfter(q);
    const window = Math.min(q + quietMs, cap);
    if (u !== null && u <= window) {
      q = u;
      continue;
    }
    // Nothing completes in (q, window]. Is that known (the data reaches that far, undamaged)?
    const known = Math.min(dataEnd, await replayer.knownUntil(q));
    const covered = known >= window;
    if (covered && q + quietMs <= cap) return { at: q, settled: true };
    if (covered && cap === nextStart && cap < capAt) return { at: q, settled: true };
    return { at: Math.max(q, Math.min(cap, known)), settled: false };
  }
}
