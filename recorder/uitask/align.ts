/**
 * Timing for uitask traces: uitask's execution.json has no timestamps, so each action's
 * `started_at` / `ended_at` are inferred from the input its client sent, as recorded in the
 * client stream (PointerEvents and KeyEvents with their recording timestamps).
 *
 * Method: the events are cut into atoms (atoms.ts: free motion, one button from press to release,
 * one key stroke). A monotone alignment by dynamic programming then gives each action a run of
 * consecutive atoms, or none, at least total cost (expect.ts): an action matched to input that
 * fits it costs 0, a misfit (other position, keysym, button, count) a little, an action with no
 * input MISSING_COST, and an atom left to no action its NOISE_COST (free motion is nearly free:
 * clients move the pointer on their own). Ties go to the earlier action taking the input.
 * Cost: O(actions × atoms in the beam × span length) time (ALIGN_BEAM), (actions + 1) × (atoms + 1) Int32 of memory.
 *
 * Times: a matched action runs from the first event of its atoms to the last. Actions with no
 * input (wait, a failed attempt, input that was not recorded) are placed between their matched
 * neighbours, consecutive ones splitting the gap evenly; `finish` at the end of the trace goes to
 * the end of the recording. Every guess that could be wrong is reported in `warnings`.
 */
import { roundMs } from '../../harness/trace/clock.ts';
import type { EntryTiming, TraceEntry } from '../../harness/trace/schema.ts';
import { toAtoms, type Atom, type ClientInputEvent } from './atoms.ts';
import { actionModel, noiseCost, type SpanIssue } from './expect.ts';

export type { ClientInputEvent } from './atoms.ts';

/** Warning codes of the alignment (each warning names the entry it is about). */
export const ALIGN_WARNINGS = {
  UITASK_ALIGN_NO_INPUT: 'The client stream holds no PointerEvent or KeyEvent: action times are placed evenly over the recording, or are 0 when its span is unknown.',
  UITASK_ALIGN_MISSING: 'An action that sends input matched no input events; it was placed between its neighbours.',
  UITASK_ALIGN_AMBIGUOUS: 'Identical consecutive actions found input for only some of them; which one got it is a guess (the earlier one).',
  UITASK_ALIGN_PARTIAL: 'An action matched only part of the input it should have sent (fewer presses, notches, characters or strokes).',
  UITASK_ALIGN_POSITION_MISMATCH: "The matched pointer input is farther than POSITION_TOLERANCE_PX from the action's position.",
  UITASK_ALIGN_INPUT_MISMATCH: 'The matched input differs from the action (other button, keysyms or direction).',
  UITASK_ALIGN_EXTRA_INPUT: 'Button presses or key strokes matched no action.',
} as const;

/** One of ALIGN_WARNINGS' codes. */
export type AlignWarningCode = keyof typeof ALIGN_WARNINGS;

/** A problem found while aligning. */
export interface AlignWarning {
  code: AlignWarningCode;
  message: string;
}

/** An entry with its inferred timing (epoch ms). */
export type AlignedEntry = TraceEntry & EntryTiming;

/** How one entry's times were found. */
export interface ActionMatch {
  index: number;
  /** input: from its matched events; between: placed between neighbours; end: at the recording's end; unknown: no time information (0). */
  placement: 'input' | 'between' | 'end' | 'unknown';
  /** Number of client events matched to it. */
  events: number;
  /** Cost of its match (0 = exactly as expected); the missing cost when placed. */
  cost: number;
}

/** Options of alignUitaskTrace. */
export interface AlignOptions {
  /** When the recording started (epoch ms): the lower bound for actions before the first matched input. */
  startAt?: number | undefined;
  /** When the recording ended (epoch ms): where a trailing finish is placed, and the upper bound for trailing waits. */
  endAt?: number | undefined;
}

/** What alignUitaskTrace returns. */
export interface AlignResult {
  /** The entries in order, with started_at / ended_at / duration_ms filled. */
  entries: AlignedEntry[];
  warnings: AlignWarning[];
  /** Per entry, how its time was found. */
  matches: ActionMatch[];
}

const NOISE = -1;
const MISSING = -2;

/**
 * Infer each entry's timing from the client's input events (epoch ms).
 * `entries` as read by harness/trace readTrace (timing absent); `clientEvents` in any order.
 */
export function alignUitaskTrace(entries: readonly TraceEntry[], clientEvents: readonly ClientInputEvent[], options: AlignOptions = {}): AlignResult {
  const atoms = toAtoms(clientEvents);
  const models = entries.map(actionModel);
  const spans = bestSpans(atoms, models);
  const warnings: AlignWarning[] = [];
  if (clientEvents.length === 0) {
    const known = options.startAt !== undefined || options.endAt !== undefined;
    warnings.push({
      code: 'UITASK_ALIGN_NO_INPUT',
      message: `The client stream holds no input events; ${entries.length} action time(s) were ${known ? 'placed evenly over the recording' : 'set to 0 (the recording span is unknown)'}.`,
    });
  }

  // Matched groups.
  const groups = spans.map((s) => {
    if (!s) return null;
    const taken = atoms.slice(s[0], s[1]);
    return { t0: minOf(taken, (a) => a.t0)!, t1: maxOf(taken, (a) => a.t1)!, events: taken.reduce((n, a) => n + a.events, 0), atoms: taken };
  });
  const times: Array<[number, number]> = new Array(entries.length);
  const matches: ActionMatch[] = entries.map((_, i) => ({ index: i, placement: 'input', events: groups[i]?.events ?? 0, cost: 0 }));
  for (let i = 0; i < entries.length; i++) {
    const g = groups[i];
    if (g) {
      times[i] = [g.t0, g.t1];
      const scorer = models[i]!.scorer()!;
      for (const a of g.atoms) scorer.add(a);
      matches[i]!.cost = scorer.cost();
      for (const issue of dedupe(scorer.issues())) warnings.push({ code: issue.code, message: `${describe(entries[i]!)}: ${issue.message}.` });
    }
  }
  placeUnmatched(entries, groups, times, matches, atoms, options);

  for (let i = 0; i < entries.length; i++) {
    if (groups[i]) continue;
    const m = models[i]!;
    matches[i]!.cost = m.missingCost;
    if (!m.expectsInput || clientEvents.length === 0) continue;
    const [a, b] = times[i]!;
    warnings.push({ code: 'UITASK_ALIGN_MISSING', message: `${describe(entries[i]!)}: no input events match it; placed between its neighbours (${fmt(a)} .. ${fmt(b)}).` });
    const twin = [i - 1, i + 1].find((k) => groups[k] && sameAction(entries[k]!, entries[i]!));
    if (twin !== undefined) {
      warnings.push({
        code: 'UITASK_ALIGN_AMBIGUOUS',
        message: `${describe(entries[i]!)} is identical to entry ${twin}, which took the input found; which of them really sent it is a guess.`,
      });
    }
  }

  const taken = new Set<Atom>(groups.flatMap((g) => g?.atoms ?? []));
  const extra = atoms.filter((a) => a.kind !== 'move' && !taken.has(a));
  if (extra.length > 0) {
    const keys = extra.filter((a) => a.kind === 'keys').length;
    warnings.push({
      code: 'UITASK_ALIGN_EXTRA_INPUT',
      message: `${extra.length} input unit(s) matched no action (${keys} key stroke(s), ${extra.length - keys} button press(es)), first at ${fmt(extra[0]!.t0)}; neighbouring actions may be misaligned.`,
    });
  }

  const out = entries.map((e, i) => withTiming(e, times[i]![0], times[i]![1]));
  return { entries: out, warnings, matches };
}

/**
 * Beam of the alignment: in each row (actions done so far), starts costing more than the row's best
 * plus this are not extended. About four missing actions: a path that bad never recovers in practice,
 * and the beam keeps long noisy sessions fast.
 */
export const ALIGN_BEAM = 20;

/** The least-cost monotone alignment: for each entry, [first atom, end atom) or null. */
function bestSpans(atoms: readonly Atom[], models: ReturnType<typeof actionModel>[]): Array<[number, number] | null> {
  const A = models.length;
  const N = atoms.length;
  const W = N + 1;
  // Costs of two rows (actions done: i and i + 1); back pointers of every cell, for the path.
  let cur = new Float64Array(W).fill(Infinity);
  let next = new Float64Array(W).fill(Infinity);
  const back = new Int32Array((A + 1) * W).fill(NOISE);
  const noise = atoms.map(noiseCost);
  cur[0] = 0;
  for (let i = 0; i <= A; i++) {
    const row = i * W;
    let best = Infinity;
    for (let j = 0; j < N; j++) {
      const c = cur[j]! + noise[j]!;
      if (c < cur[j + 1]!) {
        cur[j + 1] = c;
        back[row + j + 1] = NOISE;
      }
      if (cur[j]! < best) best = cur[j]!;
    }
    if (cur[N]! < best) best = cur[N]!;
    if (i === A) break;
    const model = models[i]!;
    const nextRow = row + W;
    next.fill(Infinity);
    const limit = best + ALIGN_BEAM;
    for (let j = 0; j <= N; j++) {
      const base = cur[j]!;
      if (base > limit) continue;
      const scorer = model.scorer();
      if (scorer) {
        for (let k = j; k < N; k++) {
          if (!scorer.add(atoms[k]!)) break;
          const c = base + scorer.cost();
          if (c < next[k + 1]!) {
            next[k + 1] = c;
            back[nextRow + k + 1] = j;
          }
        }
      }
      // `<=`: on a tie, this action goes without input and the earlier actions keep theirs.
      const c = base + model.missingCost;
      if (c <= next[j]!) {
        next[j] = c;
        back[nextRow + j] = MISSING;
      }
    }
    [cur, next] = [next, cur];
  }
  const spans: Array<[number, number] | null> = new Array(A).fill(null);
  let i = A;
  let j = N;
  while (i > 0 || j > 0) {
    const b = back[i * W + j]!;
    if (b === NOISE) j--;
    else if (b === MISSING) i--;
    else {
      spans[i - 1] = [b, j];
      i--;
      j = b;
    }
  }
  return spans;
}

/** Give unmatched entries times between their matched neighbours (a trailing finish: the recording's end). */
function placeUnmatched(
  entries: readonly TraceEntry[],
  groups: ReadonlyArray<{ t0: number; t1: number } | null>,
  times: Array<[number, number]>,
  matches: ActionMatch[],
  atoms: readonly Atom[],
  options: AlignOptions,
): void {
  const firstInput = minOf(atoms, (a) => a.t0);
  const lastInput = maxOf(atoms, (a) => a.t1);
  let i = 0;
  while (i < entries.length) {
    if (groups[i]) {
      i++;
      continue;
    }
    let k = i;
    while (k + 1 < entries.length && !groups[k + 1]) k++;
    const left = i > 0 ? groups[i - 1]! : null;
    const right = k + 1 < entries.length ? groups[k + 1]! : null;
    const end = options.endAt ?? lastInput;
    let lo = left?.t1 ?? options.startAt ?? right?.t0 ?? firstInput ?? end;
    let hi = right?.t0 ?? end ?? lo;
    let placement: ActionMatch['placement'] = 'between';
    if (lo === undefined || hi === undefined) {
      lo = hi = 0;
      placement = 'unknown';
    }
    if (hi < lo) hi = lo;
    let n = k - i + 1;
    if (!right && entries[k]!.action === 'finish' && placement !== 'unknown') {
      times[k] = [hi, hi];
      matches[k]!.placement = 'end';
      n--;
    }
    for (let m = 0; m < n; m++) {
      times[i + m] = [lo + ((hi - lo) * m) / n, lo + ((hi - lo) * (m + 1)) / n];
      matches[i + m]!.placement = placement;
    }
    i = k + 1;
  }
}

/** `entry` with timing, fields in execution.json order. */
function withTiming(entry: TraceEntry, startedAt: number, endedAt: number): AlignedEntry {
  const s = roundMs(startedAt);
  const e = Math.max(s, roundMs(endedAt));
  const out: Record<string, unknown> = {
    index: entry.index,
    action: entry.action,
    params: entry.params,
    task_marked_complete: entry.task_marked_complete,
    started_at: s,
    ended_at: e,
    duration_ms: roundMs(e - s),
  };
  if ('error' in entry && entry.error !== undefined) out.error = entry.error;
  if (entry.meta !== undefined) out.meta = entry.meta;
  return out as AlignedEntry;
}

function describe(e: TraceEntry): string {
  return `entry ${e.index} (${e.action})`;
}

function sameAction(a: TraceEntry, b: TraceEntry): boolean {
  return a.action === b.action && JSON.stringify(a.params) === JSON.stringify(b.params);
}

function dedupe(issues: SpanIssue[]): SpanIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.code}\n${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function minOf<T>(items: readonly T[], f: (x: T) => number): number | undefined {
  let m: number | undefined;
  for (const x of items) m = m === undefined ? f(x) : Math.min(m, f(x));
  return m;
}

function maxOf<T>(items: readonly T[], f: (x: T) => number): number | undefined {
  let m: number | undefined;
  for (const x of items) m = m === undefined ? f(x) : Math.max(m, f(x));
  return m;
}

function fmt(t: number): string {
  return new Date(t).toISOString();
}
