/**
 * The heuristic judge: signs that a run failed, read from its trace and its recording's frames.
 * - stuck: `stuckSteps` actions in a row (not wait, not finish) each left the screen pixel-identical
 *   to the screen before it (frames replayed from recording/ at each action's start and at the next
 *   one's start, the cursor left out);
 * - loop: the last actions repeat a cycle of 1-3 actions (same action and params) `loopRepeats` times,
 *   or the screens after them cycle through the same 2-3 screens that often;
 * - repeated errors: `errorRepeats` failed actions in a row with the same error code.
 * A sign found: fail. None: unknown (the heuristics can tell a failure, never a success).
 * `findSigns()` is I/O-free; `screenHashes()` replays the recording.
 */
import { createHash } from 'node:crypto';
import type { TraceEntry } from '../../harness/trace/schema.ts';
import type { Replayer } from '../../recorder/replay/replayer.ts';
import type { JudgeSpec } from './spec.ts';

/** Defaults of the heuristic judge's thresholds. */
export const HEURISTIC_DEFAULTS = { stuckSteps: 3, loopRepeats: 3, errorRepeats: 3 } as const;

/** One sign of failure, with the entries it spans. */
export interface Sign {
  kind: 'stuck' | 'loop' | 'repeated_errors';
  /** First and last trace entry index it spans. */
  from: number;
  to: number;
  /** One line. */
  detail: string;
}

/** Screens around each entry: `before[i]` when entry i started, `after[i]` when the next one started (or the recording ended); null where the recording does not say. */
export interface EntryScreens {
  before: Array<string | null>;
  after: Array<string | null>;
}

type Entry = Pick<TraceEntry, 'action' | 'params'> & { error?: { code: string } | undefined; started_at?: number | undefined };

const PASSIVE = new Set(['wait', 'finish']);

/** The signs of failure in a run (see the file comment). */
export function findSigns(entries: readonly Entry[], screens: EntryScreens | null, spec: Extract<JudgeSpec, { type: 'heuristic' }>): Sign[] {
  const stuckSteps = spec.stuckSteps ?? HEURISTIC_DEFAULTS.stuckSteps;
  const loopRepeats = spec.loopRepeats ?? HEURISTIC_DEFAULTS.loopRepeats;
  const errorRepeats = spec.errorRepeats ?? HEURISTIC_DEFAULTS.errorRepeats;
  const signs: Sign[] = [];
  // Stuck: actions in a row that changed nothing on screen.
  if (screens) {
    let run: number[] = [];
    const flush = () => {
      if (run.length >= stuckSteps)
        signs.push({
          kind: 'stuck',
          from: run[0]!,
          to: run[run.length - 1]!,
          detail: `${run.length} actions in a row left the screen unchanged (entries ${run[0]}-${run[run.length - 1]})`,
        });
      run = [];
    };
    entries.forEach((e, i) => {
      if (PASSIVE.has(e.action)) return;
      const b = screens.before[i];
      const a = screens.after[i];
      if (b != null && a != null && a === b) run.push(i);
      else flush();
    });
    flush();
  }
  // Loop: a cycle of 1-3 identical actions repeated at the end (finish and waits left out).
  const acts = entries.map((e, i) => ({ i, e })).filter(({ e }) => !PASSIVE.has(e.action));
  const sig = acts.map(({ e }) => `${e.action}:${JSON.stringify(e.params)}`);
  for (let p = 1; p <= 3 && signs.every((s) => s.kind !== 'loop'); p++) {
    let reps = 1;
    for (let k = sig.length - 2 * p; k >= 0; k -= p) {
      if (sig.slice(k, k + p).join('|') !== sig.slice(sig.length - p).join('|')) break;
      reps++;
    }
    // A single action repeated is a loop only when it is not making progress (else it is scrolling a list, pressing Down...).
    if (
      reps >= loopRepeats &&
      sig.length >= p * reps &&
      (p > 1 ||
        !screens ||
        screenCycles(
          acts.slice(-reps).map(({ i }) => screens.after[i] ?? null),
          1,
        ))
    ) {
      const from = acts[acts.length - p * reps]!.i;
      signs.push({
        kind: 'loop',
        from,
        to: acts[acts.length - 1]!.i,
        detail: `the last ${p === 1 ? 'action' : `${p} actions`} repeated ${reps} times (${sig.slice(sig.length - p).join(', ')})`,
      });
    }
  }
  // Loop by screens: the screens after the last actions cycle among 2-3 screens.
  if (screens && signs.every((s) => s.kind !== 'loop')) {
    const after = acts.map(({ i }) => screens.after[i] ?? null);
    for (let p = 2; p <= 3; p++) {
      const n = p * loopRepeats;
      if (after.length < n) continue;
      const tail = after.slice(-n);
      if (tail.every((h) => h !== null) && new Set(tail).size === p && screenCycles(tail, p)) {
        signs.push({
          kind: 'loop',
          from: acts[acts.length - n]!.i,
          to: acts[acts.length - 1]!.i,
          detail: `the screen cycled through the same ${p} screens over the last ${n} actions`,
        });
        break;
      }
    }
  }
  // Repeated errors.
  let errs: number[] = [];
  let code: string | null = null;
  const flushErrors = () => {
    if (errs.length >= errorRepeats)
      signs.push({
        kind: 'repeated_errors',
        from: errs[0]!,
        to: errs[errs.length - 1]!,
        detail: `${errs.length} failed actions in a row with ${code} (entries ${errs[0]}-${errs[errs.length - 1]})`,
      });
    errs = [];
    code = null;
  };
  entries.forEach((e, i) => {
    const c = e.error?.code ?? null;
    if (c === null || (code !== null && c !== code)) flushErrors();
    if (c !== null) {
      code = c;
      errs.push(i);
    }
  });
  flushErrors();
  return signs;
}

/** Whether `hashes` repeat with period `p` (h[k] === h[k - p] throughout). */
function screenCycles(hashes: ReadonlyArray<string | null>, p: number): boolean {
  for (let k = p; k < hashes.length; k++) if (hashes[k] === null || hashes[k] !== hashes[k - p]) return false;
  return true;
}

/** The screens around each entry, hashed (sha1 of the RGB pixels), from the run's recording; null when it has none or it cannot be replayed. */
export async function screenHashes(dir: string, entries: ReadonlyArray<{ started_at?: number | undefined }>, signal?: AbortSignal): Promise<EntryScreens | null> {
  if (entries.length === 0 || entries.some((e) => e.started_at === undefined)) return null;
  let replay: Replayer;
  try {
    // The replayer (and sharp under it) only when a judge needs it: vncua/eval loads no heavy package at import.
    const { Replayer } = await import('../../recorder/replay/replayer.ts');
    replay = await Replayer.open(dir);
  } catch {
    return null;
  }
  if (replay.recording.connections.length === 0) return null;
  const hashAt = async (t: number): Promise<string | null> => {
    signal?.throwIfAborted();
    const f = await replay.frameAt(t);
    if (!f || (f.stale && f.stale.reason !== 'end_of_data')) return null;
    return createHash('sha1').update(f.rgb).digest('hex');
  };
  const starts = entries.map((e) => e.started_at!);
  // Instants in non-decreasing order (the replayer only moves forward): each entry's start, then the end of the data.
  const instants = [...starts, Math.max(replay.dataEnd, starts[starts.length - 1]!)];
  for (let k = 1; k < instants.length; k++) instants[k] = Math.max(instants[k]!, instants[k - 1]!);
  const hashes: Array<string | null> = [];
  for (const t of instants) hashes.push(await hashAt(t));
  return { before: hashes.slice(0, entries.length), after: hashes.slice(1) };
}
