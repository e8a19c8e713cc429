/**
 * What input each trace action should have produced, as a cost model for alignment (align.ts):
 * a `SpanScorer` takes a candidate run of atoms (atoms.ts) one by one and says how badly that
 * run fits the action (0: exactly as expected), or that the action cannot contain the next atom.
 *
 * Matching is loose on purpose: uitask's client may send other keysyms than ours (no Shift
 * around capitals, Unicode keysyms, XF86Back for history), other scroll buttons (6/7 instead of
 * Shift + 4/5), or extra motion. So a wrong keysym, a wrong button, a position off by more than
 * POSITION_TOLERANCE_PX or a missing notch costs a little, while the kind of input (pointer
 * button vs wheel vs keys) decides what can match at all.
 *
 * Costs are in one unit: an action that finds no events costs MISSING_COST; input not taken by any
 * action costs NOISE_COST (cheap for free motion, which clients send on their own); a span that
 * fits with a flaw costs at least FLAW_COST, one missing part of its input at least PARTIAL_COST.
 * They are set so that splitting one action's input between two actions, or giving an action whose
 * input is missing a neighbour's stray motion, costs more than calling that action missing
 * (checked by fuzzing: 300 seeded sessions of 80 actions, each with one action's input removed).
 */
import { KEYSYM, UNICODE_KEYSYM_BASE, isModifierKeysym, isShiftKeysym, parseKeys } from '../../harness/keys/index.ts';
import type { TraceEntry } from '../../harness/trace/schema.ts';
import { isModifierOnly, isShiftOnly, isWheelBit, type Atom, type ButtonAtom, type KeysAtom, type MoveAtom } from './atoms.ts';

/** A pointer position farther than this from the action's params counts as a different place. */
export const POSITION_TOLERANCE_PX = 3;
/** Gaps inside one action's input longer than this cost more and more (actions are separated by model calls). */
export const FREE_GAP_MS = 1500;
/** Cost of an action that expects input but got none. */
export const MISSING_COST = 6;
/** Cost of a failed attempt (entry with `error`) that got no input: it often sent nothing. */
export const MISSING_FAILED_COST = 0.5;
/** Cost of leaving an atom to no action. */
export const NOISE_COST = { move: 0.1, button: 4, wheel: 2, keys: 3, modifiers: 1 } as const;
/**
 * Base cost of a span that does not fit its action exactly (another button, keysym, direction or
 * position): half of MISSING_COST, so that two flawed neighbours never beat one exact match and one
 * missing action.
 */
export const FLAW_COST = MISSING_COST / 2;
/**
 * Base cost of a span that holds only part of its action's input (fewer presses, notches, characters
 * or strokes): with NO_LEAD_COST more than MISSING_COST, so a neighbour's input is not split to give
 * part of it to an action whose own input is missing.
 */
export const PARTIAL_COST = MISSING_COST * 0.75;
/** Cost of a pointer action whose first press has no motion to its position before it (the motion may belong to it, or the client sends none). */
export const NO_LEAD_COST = 1.5;
/** Cost of a key stroke unrelated to the chord expected (plus FLAW_COST: more than MISSING_COST together). */
const UNRELATED_CHORD_COST = 3.5;

/** A free motion inside a key action's span (slightly more than noise, so spans never grow just to take motion). */
const MOVE_IN_KEY_SPAN = NOISE_COST.move + 0.01;

/** Codes of the problems a chosen span can have (they become warnings). */
export type SpanIssueCode = 'UITASK_ALIGN_PARTIAL' | 'UITASK_ALIGN_POSITION_MISMATCH' | 'UITASK_ALIGN_INPUT_MISMATCH';

/** A problem of a chosen span. */
export interface SpanIssue {
  code: SpanIssueCode;
  message: string;
}

/** Scores one candidate span of atoms for one action. */
export interface SpanScorer {
  /** Take the next atom into the span; false when the action cannot contain it (the span must end before it). */
  add(atom: Atom): boolean;
  /** Cost of the span so far as the whole input of the action (Infinity: not acceptable as it is). */
  cost(): number;
  /** What did not fit in the span so far. */
  issues(): SpanIssue[];
}

/** How an action is aligned. */
export interface ActionModel {
  /** Cost when no atom is matched to it. */
  missingCost: number;
  /** True when the action normally sends input (a missing match is then worth a warning). */
  expectsInput: boolean;
  /** A fresh scorer for a span starting here, or null when the action takes no input (wait, finish). */
  scorer(): SpanScorer | null;
}

/** The cost of leaving `atom` to no action. */
export function noiseCost(atom: Atom): number {
  if (atom.kind === 'move') return NOISE_COST.move;
  if (atom.kind === 'button') return isWheelBit(atom.bit) ? NOISE_COST.wheel : NOISE_COST.button;
  return isModifierOnly(atom) ? NOISE_COST.modifiers : NOISE_COST.keys;
}

interface Point {
  x: number;
  y: number;
}

function asPoint(v: unknown): Point | undefined {
  const p = v as Partial<Point> | null | undefined;
  return p && typeof p.x === 'number' && typeof p.y === 'number' && Number.isFinite(p.x) && Number.isFinite(p.y) ? { x: p.x, y: p.y } : undefined;
}

function dist(x: number, y: number, p: Point): number {
  return Math.hypot(x - p.x, y - p.y);
}

/** Cost of pressing at distance `d` from where the action says. */
function positionCost(d: number): number {
  return d <= POSITION_TOLERANCE_PX ? 0 : 1 + Math.min(d / 100, 2);
}

/** A lead motion this long before its press is stale (the client's own, or another action's), not the motion to the press. */
export const LEAD_STALE_MS = 500;
/** Most motions a pointer action's span may hold before its press. */
const MAX_LEAD_MOVES = 16;
/** A motion before a press, neither at the press nor at the action's position: a bit more than noise, so spans start at the motion that leads to the press. */
const STRAY_LEAD_COST = NOISE_COST.move + 0.05;

const BUTTON_BITS: Record<string, number> = { left: 1, middle: 2, right: 4 };
const CLICK_COUNTS: Record<string, number> = { single: 1, double: 2, triple: 3 };

/** Shared parts: internal gap costs, the running total and flaws. */
abstract class BaseScorer implements SpanScorer {
  protected acc = 0;
  /** The span does not fit exactly (FLAW_COST once). */
  protected flawed = false;
  protected last: Atom | null = null;
  protected readonly notes: SpanIssue[] = [];

  add(atom: Atom): boolean {
    const before = this.acc;
    if (this.last) {
      const gap = atom.t0 - this.last.t1;
      if (gap > FREE_GAP_MS) this.acc += Math.min(3, ((gap - FREE_GAP_MS) / 1000) * 0.3);
    }
    if (!this.take(atom)) {
      this.acc = before;
      return false;
    }
    this.last = atom;
    return true;
  }

  abstract cost(): number;

  issues(): SpanIssue[] {
    return [...this.notes, ...this.finalIssues()];
  }

  /** Account for `atom`; false to refuse it (before changing any state). */
  protected abstract take(atom: Atom): boolean;

  /** Issues known only at the end of the span. */
  protected finalIssues(): SpanIssue[] {
    return [];
  }

  /** The total: running cost, `extra`, and PARTIAL_COST plus `missing` units at `each` apiece when input is missing, else FLAW_COST if anything did not fit. */
  protected total(extra: number, missing: number, each: number): number {
    const partial = missing > 0;
    return this.acc + extra + (partial ? PARTIAL_COST + missing * each : this.flawed ? FLAW_COST : 0);
  }

  /** Note a misfit (costs FLAW_COST once). */
  protected flaw(code: SpanIssueCode, message: string): void {
    this.flawed = true;
    this.notes.push({ code, message });
  }
}

/**
 * Lead motions and the first press of a pointer action: a motion at the press or the target at most
 * LEAD_STALE_MS before the press is free, any other costs STRAY_LEAD_COST (more than noise), and a first press
 * with no free motion before it costs NO_LEAD_COST.
 */
class Lead {
  private moves: MoveAtom[] = [];
  private seen = false;
  private pressed = false;

  /** Take a motion before a press; false when there are too many. */
  push(m: MoveAtom): boolean {
    if (this.moves.length >= MAX_LEAD_MOVES) return false;
    this.moves.push(m);
    return true;
  }

  /** The press `a`: the cost of the motions before it. */
  press(a: ButtonAtom, at: Point | undefined): number {
    let c = 0;
    for (const m of this.moves) {
      const near = dist(m.x, m.y, { x: a.x0, y: a.y0 }) <= POSITION_TOLERANCE_PX || (at !== undefined && dist(m.x, m.y, at) <= POSITION_TOLERANCE_PX);
      if (near && a.t0 - m.t1 <= LEAD_STALE_MS) this.seen = true;
      else c += STRAY_LEAD_COST;
    }
    if (!this.pressed && !this.seen) c += NO_LEAD_COST;
    this.pressed = true;
    this.moves = [];
    return c;
  }

  /** Motions not followed by a press yet (strays). */
  get pendingCost(): number {
    return this.moves.length * STRAY_LEAD_COST;
  }
}

/** mouse_click: motion to the position, then `count` press/release pairs of one button there. */
class ClickScorer extends BaseScorer {
  private presses = 0;
  private readonly lead = new Lead();
  private worst = 0;

  constructor(
    private readonly bit: number,
    private readonly count: number,
    private readonly at: Point | undefined,
  ) {
    super();
  }

  protected take(a: Atom): boolean {
    if (a.kind === 'keys') return false;
    if (a.kind === 'move') return this.presses < this.count && this.lead.push(a);
    if (isWheelBit(a.bit) || this.presses >= this.count) return false;
    this.acc += this.lead.press(a, this.at);
    if (a.bit !== this.bit) {
      this.acc += 1;
      this.flaw('UITASK_ALIGN_INPUT_MISMATCH', `pressed mask bit ${a.bit}, expected ${this.bit}`);
    }
    if (this.at) {
      const d = dist(a.x0, a.y0, this.at);
      const c = positionCost(d);
      this.acc += c;
      if (c > 0) this.flawed = true;
      this.worst = Math.max(this.worst, d);
    }
    if (dist(a.x1, a.y1, { x: a.x0, y: a.y0 }) > POSITION_TOLERANCE_PX) {
      this.acc += 1;
      this.flaw('UITASK_ALIGN_INPUT_MISMATCH', 'the button moved while held (a drag, not a click)');
    }
    if (!a.released) this.acc += 1;
    this.presses++;
    return true;
  }

  cost(): number {
    if (this.presses === 0) return Infinity;
    return this.total(this.lead.pendingCost, this.count - this.presses, 1);
  }

  protected override finalIssues(): SpanIssue[] {
    const out: SpanIssue[] = [];
    if (this.presses < this.count) out.push({ code: 'UITASK_ALIGN_PARTIAL', message: `found ${this.presses} of ${this.count} press/release pairs` });
    if (this.worst > POSITION_TOLERANCE_PX) out.push({ code: 'UITASK_ALIGN_POSITION_MISMATCH', message: `pressed ${this.worst.toFixed(1)} px from the action's position` });
    return out;
  }
}

/** mouse_drag: motion to start, press there, motion, release at end. */
class DragScorer extends BaseScorer {
  private pressed = false;
  private readonly lead = new Lead();
  private off = { start: 0, end: 0 };

  constructor(
    private readonly bit: number,
    private readonly start: Point | undefined,
    private readonly end: Point | undefined,
  ) {
    super();
  }

  protected take(a: Atom): boolean {
    if (a.kind === 'keys' || this.pressed) return false;
    if (a.kind === 'move') return this.lead.push(a);
    if (isWheelBit(a.bit)) return false;
    this.acc += this.lead.press(a, this.start);
    if (a.bit !== this.bit) {
      this.acc += 1;
      this.flaw('UITASK_ALIGN_INPUT_MISMATCH', `dragged with mask bit ${a.bit}, expected ${this.bit}`);
    }
    if (this.start) this.off.start = dist(a.x0, a.y0, this.start);
    if (this.end) this.off.end = dist(a.x1, a.y1, this.end);
    const c = positionCost(this.off.start) + positionCost(this.off.end);
    this.acc += c;
    if (c > 0) this.flawed = true;
    if (!a.released) this.acc += 1;
    this.pressed = true;
    return true;
  }

  cost(): number {
    return this.pressed ? this.total(0, 0, 0) : Infinity;
  }

  protected override finalIssues(): SpanIssue[] {
    if (this.off.start <= POSITION_TOLERANCE_PX && this.off.end <= POSITION_TOLERANCE_PX) return [];
    return [{ code: 'UITASK_ALIGN_POSITION_MISMATCH', message: `pressed ${this.off.start.toFixed(1)} px from start, released ${this.off.end.toFixed(1)} px from end` }];
  }
}

type Direction = 'up' | 'down' | 'left' | 'right';

/** The direction of one wheel notch: bits 8/16 = up/down (left/right with Shift held), 32/64 = left/right. */
function notchDirection(bit: number, shift: boolean): Direction {
  if (bit === 8) return shift ? 'left' : 'up';
  if (bit === 16) return shift ? 'right' : 'down';
  return bit === 32 ? 'left' : 'right';
}

/** mouse_scroll: motion to the position, then `repeat` wheel notches (maybe with Shift held around them). */
class ScrollScorer extends BaseScorer {
  private notches = 0;
  private readonly lead = new Lead();
  private wrong = 0;
  private worst = 0;

  constructor(
    private readonly direction: Direction | undefined,
    private readonly repeat: number,
    private readonly at: Point | undefined,
  ) {
    super();
  }

  protected take(a: Atom): boolean {
    if (a.kind === 'keys') {
      if (!isShiftOnly(a)) return false;
      if (this.direction !== 'left' && this.direction !== 'right') this.acc += 0.5;
      return true;
    }
    if (a.kind === 'move') return this.lead.push(a);
    if (!isWheelBit(a.bit) || this.notches >= this.repeat * 2 + 2) return false;
    this.acc += this.lead.press(a, this.at);
    if (this.direction && notchDirection(a.bit, a.shift) !== this.direction) {
      this.acc += 1;
      this.flawed = true;
      this.wrong++;
    }
    if (this.at && this.notches === 0) {
      this.worst = dist(a.x0, a.y0, this.at);
      const c = positionCost(this.worst);
      this.acc += c;
      if (c > 0) this.flawed = true;
    }
    this.notches++;
    if (this.notches > this.repeat) {
      this.acc += 0.5;
      this.flawed = true;
    }
    return true;
  }

  cost(): number {
    if (this.notches === 0) return Infinity;
    return this.total(this.lead.pendingCost, this.repeat - this.notches, 0.7);
  }

  protected override finalIssues(): SpanIssue[] {
    const out: SpanIssue[] = [];
    if (this.notches !== this.repeat) {
      out.push({
        code: this.notches < this.repeat ? 'UITASK_ALIGN_PARTIAL' : 'UITASK_ALIGN_INPUT_MISMATCH',
        message: `found ${this.notches} wheel notches, expected ${this.repeat}`,
      });
    }
    if (this.wrong > 0) out.push({ code: 'UITASK_ALIGN_INPUT_MISMATCH', message: `${this.wrong} notch(es) in another direction than ${this.direction}` });
    if (this.worst > POSITION_TOLERANCE_PX) out.push({ code: 'UITASK_ALIGN_POSITION_MISMATCH', message: `scrolled ${this.worst.toFixed(1)} px from the action's position` });
    return out;
  }
}

/** Most motions one mouse_move's path may hold. */
const MAX_PATH_MOVES = 100;
/** Motions this close together are one animated path (a motion further apart is the client's own). */
const PATH_GAP_MS = 50;
/** Cost of each motion of a path before its last (less than noise: a path is taken whole). */
const PATH_MOVE_COST = 0.05;

/** mouse_move: free motion ending at the position (a path of close-together moves is one motion). */
class MoveScorer extends BaseScorer {
  private moves = 0;
  private end: Point | null = null;

  constructor(private readonly at: Point | undefined) {
    super();
  }

  protected take(a: Atom): boolean {
    if (a.kind !== 'move' || this.moves >= MAX_PATH_MOVES) return false;
    // A path is continuous: a motion further from the next one is not part of it.
    if (this.last && a.t0 - this.last.t1 > PATH_GAP_MS) return false;
    if (this.last) this.acc += PATH_MOVE_COST;
    this.moves++;
    this.end = { x: a.x, y: a.y };
    return true;
  }

  cost(): number {
    if (!this.end) return Infinity;
    const d = this.at ? dist(this.end.x, this.end.y, this.at) : 0;
    // Motion is weak evidence (clients move on their own): ~50 px off already costs MISSING_COST.
    return this.acc + (d > POSITION_TOLERANCE_PX ? FLAW_COST + 1 + Math.min(d / 25, 4) : 0);
  }

  protected override finalIssues(): SpanIssue[] {
    if (!this.end || !this.at) return [];
    const d = dist(this.end.x, this.end.y, this.at);
    return d > POSITION_TOLERANCE_PX
      ? [{ code: 'UITASK_ALIGN_POSITION_MISMATCH', message: `moved to ${this.end.x},${this.end.y}, ${d.toFixed(1)} px from the action's position` }]
      : [];
  }
}

/** The character a keysym types, for loose comparison ('\n' for Return, '#<hex>' for other keys). */
export function keysymText(keysym: number): string {
  if (keysym === KEYSYM.Return || keysym === KEYSYM.KP_Enter) return '\n';
  if (keysym === KEYSYM.Tab) return '\t';
  if ((keysym >= 0x20 && keysym <= 0x7e) || (keysym >= 0xa0 && keysym <= 0xff)) return String.fromCodePoint(keysym);
  if (keysym >= UNICODE_KEYSYM_BASE && keysym <= UNICODE_KEYSYM_BASE + 0x10ffff) return String.fromCodePoint(keysym - UNICODE_KEYSYM_BASE);
  return `#${keysym.toString(16)}`;
}

/** A key's name for chord comparison: characters case-folded, left/right modifiers merged. */
function keyToken(keysym: number): string {
  if (isShiftKeysym(keysym)) return 'shift';
  if (keysym === KEYSYM.Control_L || keysym === KEYSYM.Control_R) return 'ctrl';
  if (keysym === KEYSYM.Alt_L || keysym === KEYSYM.Alt_R || keysym === KEYSYM.Meta_L || keysym === KEYSYM.Meta_R) return 'alt';
  if (keysym === KEYSYM.Super_L || keysym === KEYSYM.Super_R) return 'super';
  if (keysym === KEYSYM.ISO_Level3_Shift || keysym === KEYSYM.Mode_switch) return 'altgr';
  if (keysym === KEYSYM.KP_Enter) return '\n';
  if (keysym === KEYSYM.KP_Left) return keysymText(KEYSYM.Left);
  if (keysym === KEYSYM.KP_Right) return keysymText(KEYSYM.Right);
  return keysymText(keysym).toLowerCase();
}

/** Modifiers that type characters (Shift, AltGr); others (Ctrl, Alt, Super) make shortcuts. */
const TYPING_MODIFIERS = new Set(['shift', 'altgr']);

/** How far an observed chord is from an expected one (0 equal .. UNRELATED_CHORD_COST unrelated). */
function chordCost(observed: readonly number[], expected: ReadonlySet<string>): number {
  const o = new Set(observed.map(keyToken));
  const same = (a: Set<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((k) => b.has(k));
  if (same(o, expected)) return 0;
  const isMod = (k: string) => ['shift', 'ctrl', 'alt', 'super'].includes(k);
  const oKeys = new Set([...o].filter((k) => !isMod(k)));
  const eKeys = new Set([...expected].filter((k) => !isMod(k)));
  if (oKeys.size > 0 && same(oKeys, eKeys)) return 0.3;
  if ([...o].some((k) => expected.has(k) && !isMod(k))) return 0.6;
  return UNRELATED_CHORD_COST;
}

/** Shared parts of key actions: spans start with keys, take no buttons, and motion in between costs a bit more than noise. */
abstract class KeyScorer extends BaseScorer {
  protected strokes = 0;

  protected take(a: Atom): boolean {
    if (a.kind === 'button') return false;
    if (a.kind === 'move') {
      if (!this.last) return false;
      this.acc += MOVE_IN_KEY_SPAN;
      return true;
    }
    return this.takeKeys(a);
  }

  protected abstract takeKeys(a: KeysAtom): boolean;
}

/** type_text: one stroke per character (Shift around capitals, or not; any keysym that types it). */
class TypeTextScorer extends KeyScorer {
  private typed = 0;
  private differ = 0;
  private readonly expected: string[];

  constructor(text: string) {
    super();
    this.expected = [...text.replace(/\r\n?/g, '\n')];
  }

  protected takeKeys(a: KeysAtom): boolean {
    const chars = a.downs.filter((k) => !isModifierKeysym(k));
    const mods = a.downs.filter((k) => isModifierKeysym(k)).map(keyToken);
    const shortcut = mods.some((m) => !TYPING_MODIFIERS.has(m));
    if (!shortcut && this.typed + chars.length > this.expected.length * 1.5 + 5) return false;
    if (chars.length === 0) {
      this.acc += 0.1;
    } else if (shortcut) {
      // Ctrl + key: keymap priming before the text (harness/keys/plan.ts), or a stray shortcut.
      this.acc += 0.3;
    } else {
      for (const k of chars) {
        const want = this.expected[this.typed];
        const got = keysymText(k);
        if (want === undefined) {
          this.acc += 0.6;
          this.flawed = true;
        } else if (got !== want) {
          this.acc += got.toLowerCase() === want.toLowerCase() ? 0.05 : 0.3;
          this.flawed = true;
          this.differ++;
        }
        this.typed++;
      }
    }
    this.strokes++;
    return true;
  }

  cost(): number {
    if (this.typed === 0) return Infinity;
    return this.total(0, this.expected.length - this.typed, 0.6);
  }

  protected override finalIssues(): SpanIssue[] {
    const out: SpanIssue[] = [];
    if (this.typed !== this.expected.length) {
      out.push({
        code: this.typed < this.expected.length ? 'UITASK_ALIGN_PARTIAL' : 'UITASK_ALIGN_INPUT_MISMATCH',
        message: `found ${this.typed} typed characters, expected ${this.expected.length}`,
      });
    }
    if (this.differ > 0) out.push({ code: 'UITASK_ALIGN_INPUT_MISMATCH', message: `${this.differ} typed character(s) differ from the text` });
    return out;
  }
}

/** press_keys / page_navigation: one stroke per chord, compared with the best of the accepted forms. */
class ChordScorer extends KeyScorer {
  private differ = 0;

  /** `forms`: accepted chord sequences (each chord a set of key tokens); null when the keys could not be parsed (any stroke fits). */
  constructor(private readonly forms: ReadonlySet<string>[][] | null) {
    super();
    this.expectedCount = forms ? Math.max(...forms.map((f) => f.length)) : 1;
  }

  private readonly expectedCount: number;

  protected takeKeys(a: KeysAtom): boolean {
    const n = this.strokes;
    if (n >= this.expectedCount + 3) return false;
    this.strokes++;
    if (n >= this.expectedCount) {
      this.acc += 1;
      this.flawed = true;
      return true;
    }
    if (!this.forms) {
      this.acc += 0.3;
      return true;
    }
    const c = Math.min(...this.forms.map((f) => (f[n] ? chordCost(a.downs, f[n]!) : UNRELATED_CHORD_COST)));
    if (c > 0) {
      this.differ++;
      this.flawed = true;
    }
    this.acc += c;
    return true;
  }

  cost(): number {
    if (this.strokes === 0) return Infinity;
    return this.total(0, this.expectedCount - this.strokes, 1);
  }

  protected override finalIssues(): SpanIssue[] {
    const out: SpanIssue[] = [];
    if (this.strokes !== this.expectedCount) {
      out.push({
        code: this.strokes < this.expectedCount ? 'UITASK_ALIGN_PARTIAL' : 'UITASK_ALIGN_INPUT_MISMATCH',
        message: `found ${this.strokes} key stroke(s), expected ${this.expectedCount}`,
      });
    }
    if (this.differ > 0) out.push({ code: 'UITASK_ALIGN_INPUT_MISMATCH', message: `${this.differ} key stroke(s) differ from the keys` });
    return out;
  }
}

/** The chords pressKeys would send for `keys`, as key-token sets; null when vncua cannot parse them. */
function pressKeysForms(keys: unknown): ReadonlySet<string>[][] | null {
  if (typeof keys !== 'string' || keys.length === 0) return null;
  try {
    return [parseKeys(keys).chords.map((c) => new Set(c.keysyms.map(keyToken)))];
  } catch {
    return null;
  }
}

/** History navigation: Alt+Left / Alt+Right (vncua), or the XF86Back / XF86Forward keys. */
function navigationForms(direction: unknown): ReadonlySet<string>[][] {
  const back = direction !== 'forward';
  const arrow = keyToken(back ? KEYSYM.Left : KEYSYM.Right);
  const media = keyToken(back ? KEYSYM.XF86Back : KEYSYM.XF86Forward);
  return [[new Set(['alt', arrow])], [new Set([media])]];
}

/** The alignment model of one trace entry. */
export function actionModel(entry: TraceEntry): ActionModel {
  const p = (entry.params ?? {}) as Record<string, unknown>;
  const failed = 'error' in entry && entry.error !== undefined;
  const missing = failed ? MISSING_FAILED_COST : MISSING_COST;
  const withInput = (scorer: () => SpanScorer): ActionModel => ({ missingCost: missing, expectsInput: !failed, scorer });
  switch (entry.action) {
    case 'mouse_move':
      return withInput(() => new MoveScorer(asPoint(p.position)));
    case 'mouse_click':
      return withInput(() => new ClickScorer(BUTTON_BITS[String(p.button ?? 'left')] ?? 1, CLICK_COUNTS[String(p.click_type ?? 'single')] ?? 1, asPoint(p.position)));
    case 'mouse_drag':
      return withInput(() => new DragScorer(BUTTON_BITS[String(p.button ?? 'left')] ?? 1, asPoint(p.start), asPoint(p.end)));
    case 'mouse_scroll': {
      const dir = ['up', 'down', 'left', 'right'].includes(String(p.direction)) ? (p.direction as Direction) : undefined;
      const repeat = typeof p.repeat === 'number' && Number.isInteger(p.repeat) && p.repeat >= 1 ? p.repeat : 1;
      return withInput(() => new ScrollScorer(dir, repeat, asPoint(p.position)));
    }
    case 'press_keys': {
      // uitask's keys that name no key ([], ["none"], read as "") send nothing.
      if (p.keys === '') return { missingCost: 0, expectsInput: false, scorer: () => null };
      const forms = pressKeysForms(p.keys);
      return withInput(() => new ChordScorer(forms));
    }
    case 'type_text': {
      const text = typeof p.text === 'string' ? p.text : '';
      if (text.length === 0) return { missingCost: 0, expectsInput: false, scorer: () => null };
      return withInput(() => new TypeTextScorer(text));
    }
    case 'page_navigation': {
      const forms = navigationForms(p.direction);
      return withInput(() => new ChordScorer(forms));
    }
    case 'wait':
    case 'finish':
      return { missingCost: 0, expectsInput: false, scorer: () => null };
  }
}
