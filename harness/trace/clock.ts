/**
 * The one clock every timestamp in a run comes from: trace entries (`started_at`, `ended_at`)
 * and, later, the recorder's frames/bytes. Both must stamp from this function so that a frame
 * and an action can be aligned exactly, with no offset between two clocks.
 *
 * Why not `Date.now()`:
 * - it has 1 ms resolution, too coarse to order an action against frames a few ms apart;
 * - it follows the system wall clock, which NTP or an admin can step backwards or forwards in
 *   the middle of a run: an action could then "end" before it started, or two clocks read at
 *   the same instant could disagree by the size of the step.
 *
 * `performance.timeOrigin + performance.now()` is epoch milliseconds (timeOrigin is the wall
 * clock captured once, when the process started) advanced by a monotonic timer. It never goes
 * backwards within this process and has sub-millisecond precision. The price: over a long run it
 * can drift from the system wall clock (NTP slews are not seen), and two PROCESSES each have their
 * own origin, so timestamps from different processes may differ by a few ms. Stamp everything
 * that must align from this process, through this function.
 *
 * Values are rounded to the microsecond (3 decimals) so traces stay compact; rounding keeps the
 * clock monotonic (non-decreasing) and epoch ms × 1000 stays well below 2^53.
 */

/** Epoch milliseconds with microsecond precision, monotonic within the process; the shared clock of traces and recordings. */
export function now(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
}

/** Rounds a millisecond value to the microsecond, as `now()` does (used for durations). */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
