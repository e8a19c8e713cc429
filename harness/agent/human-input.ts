/**
 * A person's raw input during a takeover (RFB PointerEvents and KeyEvents, as a viewer sends them) turned
 * into our actions, so the trace holds what they did in the same shape as an agent's steps. Free of I/O
 * and of clocks: every event comes with its time, and the caller asks for what is due at a given time.
 *
 * Rules:
 * - A button pressed and released within CLICK_SLOP_PX of where it went down is a mouse_click at the press
 *   position; clicks of the same button at the same spot, each press within MULTI_CLICK_MS of the previous
 *   one, make one double or triple click (a fourth starts a new click). A click waits MULTI_CLICK_MS for a
 *   next press before it is final.
 * - A button pressed, moved beyond CLICK_SLOP_PX and released is a mouse_drag from the press to the release.
 * - Wheel buttons (mask bits 8/16/32/64: X buttons 4-7) are a mouse_scroll up/down/left/right; Shift with
 *   wheel up/down is left/right (how the Agent scrolls sideways). Notches in the same direction at the same
 *   spot, each within SCROLL_IDLE_MS of the last, add up in `repeat`.
 * - Keys that type a character with no modifier other than Shift / AltGr are type_text, one entry per run
 *   of such keys (ended by another kind of input, or TYPING_IDLE_MS without a key).
 * - Any other key, or a key pressed with Ctrl, Alt, Super, Meta or Hyper held, is one press_keys per press,
 *   named as pressKeys takes it (harness/keys/describe.ts), recorded at its release; a modifier tapped by
 *   itself is a press_keys of that modifier. A key held down and repeating is one entry per repeat.
 * - Pointer moves without a button held, followed by no press (the next input is a key, or the takeover
 *   ends), are one mouse_move to where the pointer stopped; moves that lead to a press belong to it. A move
 *   that ends where the last action left the pointer is no action.
 * - Modifiers held during a click, drag or scroll are kept in the entry's `meta.modifiers` (Shift that made a
 *   scroll sideways aside).
 * - `releases()` gives the events that release what is still held (buttons, keys) where the pointer is:
 *   the caller sends them when the person hands back, pushes them here marked `synthetic`, then `flush()`es.
 *   Entries completed by such a release carry `meta.released_at_handback: true`.
 *
 * Each action carries `started_at` / `ended_at`: the times of its first and last event.
 */
import { chordName, charOfKeysym } from '../keys/describe.ts';
import { KEYSYM, isModifierKeysym, isShiftKeysym } from '../keys/keysyms.ts';
import type { HumanInput } from '../live/control.ts';
import type { ActionName } from '../trace/schema.ts';
import type { MouseButton, Point, ScrollDirection } from './arguments.ts';

/** Presses of the same button at the same spot, each within this long (ms) of the previous one, are one multi-click (GTK's and Chromium's default double-click time). */
export const MULTI_CLICK_MS = 400;
/** A press that moves at most this far (px, either axis) before its release is a click, not a drag (GTK's drag threshold, ~Chromium's). */
export const CLICK_SLOP_PX = 4;
/** A run of typed characters ends after this long without a key (ms). */
export const TYPING_IDLE_MS = 1500;
/** Wheel notches more than this far apart (ms) are separate scrolls. */
export const SCROLL_IDLE_MS = 500;

/** One of our actions made from a person's input. */
export interface HumanAction {
  action: ActionName;
  params: Record<string, unknown>;
  /** Epoch ms of its first event. */
  started_at: number;
  /** Epoch ms of its last event. */
  ended_at: number;
  meta?: Record<string, unknown>;
}

/** Timing thresholds (defaults above); tests and callers may change them. */
export interface CoalescerOptions {
  multiClickMs?: number;
  clickSlopPx?: number;
  typingIdleMs?: number;
  scrollIdleMs?: number;
}

const BUTTONS: ReadonlyArray<readonly [bit: number, button: MouseButton]> = [
  [1, 'left'],
  [2, 'middle'],
  [4, 'right'],
];
const WHEEL: ReadonlyArray<readonly [bit: number, direction: ScrollDirection]> = [
  [8, 'up'],
  [16, 'down'],
  [32, 'left'],
  [64, 'right'],
];
const WHEEL_MASK = 8 | 16 | 32 | 64;
/** Modifiers that turn a character key into a shortcut (Shift, AltGr and Mode_switch only choose the character). */
const TEXT_MODIFIERS = new Set<number>([KEYSYM.Shift_L, KEYSYM.Shift_R, KEYSYM.ISO_Level3_Shift, KEYSYM.Mode_switch]);

interface HeldModifier {
  keysym: number;
  at: number;
  /** Another key or a pointer action happened while it was held (so its release is no tap of its own). */
  used: boolean;
}

interface Press {
  bit: number;
  start: Point;
  at: number;
  /** Farthest the pointer went from `start` (Chebyshev distance). */
  farthest: number;
  modifiers: string[];
  /** The pending click this press continues (a double or triple click). */
  continues: boolean;
}

interface PendingClick {
  bit: number;
  at: Point;
  count: number;
  startedAt: number;
  lastPressAt: number;
  endedAt: number;
  modifiers: string[];
  released: boolean;
  /** Its last release was sent at handback. */
  handback: boolean;
}

interface PendingScroll {
  direction: ScrollDirection;
  at: Point;
  repeat: number;
  startedAt: number;
  endedAt: number;
  modifiers: string[];
  released: boolean;
}

interface PendingText {
  text: string;
  startedAt: number;
  endedAt: number;
}

interface HeldKey {
  keysym: number;
  at: number;
  /** 'text' keys were added to the pending text; 'chord' keys become a press_keys at their release. */
  kind: 'text' | 'chord';
  name: string;
}

/** Turns a person's raw input events into our actions (see the file comment). */
export class HumanInputCoalescer {
  readonly #multiClickMs: number;
  readonly #slop: number;
  readonly #typingIdleMs: number;
  readonly #scrollIdleMs: number;
  #mask = 0;
  #pointer: Point | null = null;
  /** Where the last emitted action left the pointer (a move back there is no action). */
  #restingAt: Point | null = null;
  #modifiers: HeldModifier[] = [];
  #keys: HeldKey[] = [];
  #presses = new Map<number, Press>();
  #move: { startedAt: number; endedAt: number; to: Point } | null = null;
  #click: PendingClick | null = null;
  #scroll: PendingScroll | null = null;
  #text: PendingText | null = null;
  /** The event being pushed completes entries as released at handback. */
  #synthetic = false;

  constructor(options: CoalescerOptions = {}) {
    this.#multiClickMs = options.multiClickMs ?? MULTI_CLICK_MS;
    this.#slop = options.clickSlopPx ?? CLICK_SLOP_PX;
    this.#typingIdleMs = options.typingIdleMs ?? TYPING_IDLE_MS;
    this.#scrollIdleMs = options.scrollIdleMs ?? SCROLL_IDLE_MS;
  }

  /** Where the pointer was last sent (null before any pointer event), and the buttons held. */
  get pointer(): { x: number; y: number; buttonMask: number } | null {
    return this.#pointer ? { ...this.#pointer, buttonMask: this.#mask } : null;
  }

  /** Tell where the pointer is before the person's first event (the agent's last position): a move back there is no action. */
  setRestingPointer(p: Point | null): void {
    this.#restingAt = p ? { x: p.x, y: p.y } : null;
    this.#pointer ??= this.#restingAt ? { ...this.#restingAt } : null;
  }

  /** The time at which something pending becomes final (call due() then), or null. */
  get deadline(): number | null {
    const times: number[] = [];
    if (this.#click?.released) times.push(Math.max(this.#click.lastPressAt + this.#multiClickMs, this.#click.endedAt));
    if (this.#scroll?.released) times.push(this.#scroll.endedAt + this.#scrollIdleMs);
    if (this.#text) times.push(this.#text.endedAt + this.#typingIdleMs);
    return times.length === 0 ? null : Math.min(...times);
  }

  /** Feed one event that happened at `at` (epoch ms); returns the actions it completed, in order. `synthetic`: a release sent at handback. */
  push(event: HumanInput, at: number, synthetic = false): HumanAction[] {
    const out: HumanAction[] = [];
    this.#synthetic = synthetic;
    try {
      out.push(...this.due(at));
      if (event.type === 'pointer') this.#pointerEvent(event.x, event.y, event.buttonMask, at, out);
      else this.#keyEvent(event.keysym, event.down, at, out);
    } finally {
      this.#synthetic = false;
    }
    return out;
  }

  /** The actions that became final by `now` (a click with no next press, typing or scrolling that stopped). */
  due(now: number): HumanAction[] {
    const out: HumanAction[] = [];
    const c = this.#click;
    if (c?.released && now >= Math.max(c.lastPressAt + this.#multiClickMs, c.endedAt)) this.#emitClick(out);
    const s = this.#scroll;
    if (s?.released && now >= s.endedAt + this.#scrollIdleMs) this.#emitScroll(out);
    const t = this.#text;
    if (t && now >= t.endedAt + this.#typingIdleMs) this.#emitText(out);
    return sorted(out);
  }

  /** The events that release what is still held: key releases (last pressed first), then a pointer event with no button where the pointer is. */
  releases(): HumanInput[] {
    const out: HumanInput[] = [];
    for (const k of [...this.#keys].reverse()) out.push({ type: 'key', keysym: k.keysym, down: false });
    for (const m of [...this.#modifiers].reverse()) out.push({ type: 'key', keysym: m.keysym, down: false });
    if (this.#mask !== 0 && this.#pointer) out.push({ type: 'pointer', x: this.#pointer.x, y: this.#pointer.y, buttonMask: 0 });
    return out;
  }

  /** Everything pending, made final now (the takeover ended). Held buttons and keys are dropped: push releases() first. */
  flush(): HumanAction[] {
    const out: HumanAction[] = [];
    this.#emitClick(out);
    this.#emitScroll(out);
    this.#emitText(out);
    this.#emitMove(out);
    this.#presses.clear();
    this.#keys = [];
    this.#modifiers = [];
    this.#mask = 0;
    return sorted(out);
  }

  // ---------------------------------------------------------------- pointer

  #pointerEvent(x: number, y: number, mask: number, at: number, out: HumanAction[]): void {
    const p = { x, y };
    const prev = this.#mask;
    const moved = this.#pointer === null || this.#pointer.x !== x || this.#pointer.y !== y;
    this.#pointer = p;
    this.#mask = mask;
    if (moved) this.#moved(p, at, prev, out);
    for (const [bit, button] of BUTTONS) {
      if (mask & bit && !(prev & bit)) this.#pressed(bit, p, at, out);
      else if (!(mask & bit) && prev & bit) this.#released(bit, button, p, at, out);
    }
    for (const [bit, direction] of WHEEL) {
      if (mask & bit && !(prev & bit)) this.#notch(direction, p, at, out);
    }
    // A wheel notch ends at its release.
    if (prev & WHEEL_MASK && !(mask & WHEEL_MASK) && this.#scroll) {
      this.#scroll.endedAt = at;
      this.#scroll.released = true;
    }
  }

  /** The pointer moved to `p` with the buttons of `held` down. */
  #moved(p: Point, at: number, held: number, out: HumanAction[]): void {
    for (const press of this.#presses.values()) press.farthest = Math.max(press.farthest, distance(press.start, p));
    if (this.#presses.size > 0 || held & WHEEL_MASK) return;
    // Moving away from a click ends its multi-click; moving away from a scroll ends it.
    if (this.#click?.released && distance(this.#click.at, p) > this.#slop) this.#emitClick(out);
    if (this.#scroll?.released && distance(this.#scroll.at, p) > this.#slop) this.#emitScroll(out);
    if (this.#move) {
      this.#move.endedAt = at;
      this.#move.to = p;
    } else this.#move = { startedAt: at, endedAt: at, to: p };
  }

  #pressed(bit: number, p: Point, at: number, out: HumanAction[]): void {
    // The moves led here: they belong to this press.
    this.#move = null;
    this.#emitText(out);
    this.#emitScroll(out);
    const c = this.#click;
    const continues = c?.released === true && c.bit === bit && c.count < 3 && distance(c.at, p) <= this.#slop && at - c.lastPressAt <= this.#multiClickMs;
    if (!continues) this.#emitClick(out);
    else {
      c.lastPressAt = at;
      c.released = false;
    }
    this.#presses.set(bit, { bit, start: p, at, farthest: 0, modifiers: this.#useModifiers(), continues });
  }

  #released(bit: number, button: MouseButton, p: Point, at: number, out: HumanAction[]): void {
    const press = this.#presses.get(bit);
    this.#presses.delete(bit);
    if (!press) return; // pressed before the takeover
    const c = this.#click;
    if (Math.max(press.farthest, distance(press.start, p)) <= this.#slop) {
      if (press.continues && c) {
        c.count++;
        c.endedAt = at;
        c.released = true;
        c.handback = this.#synthetic;
      } else {
        const handback = this.#synthetic;
        this.#click = { bit, at: press.start, count: 1, startedAt: press.at, lastPressAt: press.at, endedAt: at, modifiers: press.modifiers, released: true, handback };
      }
      if (this.#click!.count >= 3) this.#emitClick(out);
      return;
    }
    // A drag (a double-click-and-drag first ends its click).
    if (press.continues && c) {
      c.released = true;
      this.#emitClick(out);
    }
    out.push(this.#entry('mouse_drag', { start: press.start, end: p, button }, press.at, at, press.modifiers));
    this.#restingAt = p;
  }

  #notch(direction: ScrollDirection, p: Point, at: number, out: HumanAction[]): void {
    this.#move = null;
    this.#emitText(out);
    this.#emitClick(out);
    // Shift with wheel up/down scrolls sideways (SCROLL_WHEEL): that Shift is the direction, not a modifier.
    const shift = this.#modifiers.find((m) => isShiftKeysym(m.keysym));
    const sideways = shift !== undefined && (direction === 'up' || direction === 'down');
    if (sideways) direction = direction === 'up' ? 'left' : 'right';
    const modifiers = this.#useModifiers(sideways ? shift.keysym : null);
    const s = this.#scroll;
    if (s && s.direction === direction && distance(s.at, p) <= this.#slop && at - s.endedAt <= this.#scrollIdleMs && sameList(s.modifiers, modifiers)) {
      s.repeat++;
      s.endedAt = at;
      s.released = false;
      return;
    }
    this.#emitScroll(out);
    this.#scroll = { direction, at: p, repeat: 1, startedAt: at, endedAt: at, modifiers, released: false };
  }

  // ---------------------------------------------------------------- keys

  #keyEvent(keysym: number, down: boolean, at: number, out: HumanAction[]): void {
    if (!Number.isInteger(keysym) || keysym <= 0) return;
    if (isModifierKeysym(keysym)) {
      if (down) {
        if (!this.#modifiers.some((m) => m.keysym === keysym)) this.#modifiers.push({ keysym, at, used: false });
        return;
      }
      const i = this.#modifiers.findIndex((m) => m.keysym === keysym);
      if (i < 0) return; // pressed before the takeover
      const m = this.#modifiers[i]!;
      if (!m.used) {
        // Tapped by itself (with any other modifiers tapped along): one press_keys.
        const tapped = this.#modifiers.filter((x) => !x.used);
        for (const x of tapped) x.used = true;
        this.#beforeKey(out);
        out.push(
          this.#entry(
            'press_keys',
            {
              keys: chordName(
                tapped.map((x) => x.keysym),
                null,
              ),
            },
            Math.min(...tapped.map((x) => x.at)),
            at,
          ),
        );
      }
      this.#modifiers.splice(i, 1);
      return;
    }
    const held = this.#keys.find((k) => k.keysym === keysym);
    if (!down) {
      if (!held) return; // pressed before the takeover
      this.#keys.splice(this.#keys.indexOf(held), 1);
      if (held.kind === 'text') {
        if (this.#text) this.#text.endedAt = Math.max(this.#text.endedAt, at);
        return;
      }
      out.push(this.#entry('press_keys', { keys: held.name }, held.at, at));
      return;
    }
    // A key held down repeats: each repeat is another press (the one before ends here).
    if (held) {
      this.#keys.splice(this.#keys.indexOf(held), 1);
      if (held.kind === 'chord') out.push(this.#entry('press_keys', { keys: held.name }, held.at, at));
    }
    this.#beforeKey(out);
    const start = Math.min(at, ...this.#modifiers.filter((m) => !m.used).map((m) => m.at));
    const command = this.#modifiers.some((m) => !TEXT_MODIFIERS.has(m.keysym));
    const ch = command ? undefined : charOfKeysym(keysym);
    const modifiers = this.#modifiers.map((m) => m.keysym);
    for (const m of this.#modifiers) m.used = true;
    if (ch !== undefined) {
      if (this.#text) {
        this.#text.text += ch;
        this.#text.endedAt = at;
      } else this.#text = { text: ch, startedAt: start, endedAt: at };
      this.#keys.push({ keysym, at: start, kind: 'text', name: ch });
      return;
    }
    this.#emitText(out);
    this.#keys.push({ keysym, at: start, kind: 'chord', name: chordName(modifiers, keysym) });
  }

  /** A key goes down: a click or scroll before it is final, and moves before it are a mouse_move. */
  #beforeKey(out: HumanAction[]): void {
    this.#emitClick(out);
    this.#emitScroll(out);
    this.#emitMove(out);
  }

  /** The names of the modifiers held now (all marked used), `except` one. */
  #useModifiers(except: number | null = null): string[] {
    const out: string[] = [];
    for (const m of this.#modifiers) {
      m.used = true;
      if (m.keysym !== except) out.push(chordName([m.keysym], null));
    }
    return out;
  }

  // ---------------------------------------------------------------- emitting

  #entry(
    action: ActionName,
    params: Record<string, unknown>,
    startedAt: number,
    endedAt: number,
    modifiers: readonly string[] = [],
    releasedAtHandback = this.#synthetic,
  ): HumanAction {
    const meta: Record<string, unknown> = {};
    if (modifiers.length > 0) meta.modifiers = [...modifiers];
    if (releasedAtHandback) meta.released_at_handback = true;
    const a: HumanAction = { action, params, started_at: startedAt, ended_at: Math.max(startedAt, endedAt) };
    if (Object.keys(meta).length > 0) a.meta = meta;
    return a;
  }

  #emitClick(out: HumanAction[]): void {
    const c = this.#click;
    if (!c?.released) return;
    this.#click = null;
    const clickType = c.count >= 3 ? 'triple' : c.count === 2 ? 'double' : 'single';
    const button = BUTTONS.find(([bit]) => bit === c.bit)![1];
    out.push(this.#entry('mouse_click', { position: c.at, button, click_type: clickType }, c.startedAt, c.endedAt, c.modifiers, c.handback));
    this.#restingAt = c.at;
  }

  #emitScroll(out: HumanAction[]): void {
    const s = this.#scroll;
    if (!s) return;
    this.#scroll = null;
    out.push(this.#entry('mouse_scroll', { position: s.at, direction: s.direction, repeat: s.repeat }, s.startedAt, s.endedAt, s.modifiers, false));
    this.#restingAt = s.at;
  }

  #emitText(out: HumanAction[]): void {
    const t = this.#text;
    if (!t) return;
    this.#text = null;
    out.push(this.#entry('type_text', { text: t.text }, t.startedAt, t.endedAt, [], false));
  }

  #emitMove(out: HumanAction[]): void {
    const m = this.#move;
    this.#move = null;
    if (!m) return;
    if (this.#restingAt && distance(this.#restingAt, m.to) <= this.#slop) return;
    out.push(this.#entry('mouse_move', { position: m.to }, m.startedAt, m.endedAt, [], false));
    this.#restingAt = m.to;
  }
}

/** Chebyshev distance: the larger of the two axis distances. */
function distance(a: Point, b: Point): number {
  return Math.max(Math.abs(a.x - b.x), Math.abs(a.y - b.y));
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** In the order they started (stable). */
function sorted(actions: HumanAction[]): HumanAction[] {
  return actions.sort((a, b) => a.started_at - b.started_at);
}
