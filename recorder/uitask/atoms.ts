/**
 * Input "atoms": the client's PointerEvents and KeyEvents cut into the smallest units an action
 * is made of, so that alignment (align.ts) can match actions to whole units:
 * - `move`: pointer motion with no button held (consecutive identical positions less than
 *   MOVE_MERGE_MS apart are one atom);
 * - `button`: one button (or wheel notch) from its press to its release, with the motion while
 *   it was held (a click, one half of a double click, a drag, a wheel notch);
 * - `keys`: KeyEvents from the first key pressed while none was held until no key is held
 *   (one typed character, a chord such as Ctrl+A, or Shift held around wheel notches).
 * Atoms are listed in the order of their first event.
 */
import { isModifierKeysym, isShiftKeysym } from '../../harness/keys/index.ts';
import type { ClientInputEvent } from '../../harness/rfb/client-stream.ts';

export type { ClientInputEvent } from '../../harness/rfb/client-stream.ts';

/** Pointer motion with no button held. */
export interface MoveAtom {
  kind: 'move';
  t0: number;
  t1: number;
  x: number;
  y: number;
  events: number;
}

/** One button or wheel bit from press to release (RFB mask bit: 1 left, 2 middle, 4 right, 8/16 wheel up/down, 32/64 wheel left/right). */
export interface ButtonAtom {
  kind: 'button';
  bit: number;
  t0: number;
  t1: number;
  /** Where it was pressed. */
  x0: number;
  y0: number;
  /** Where it was released (or last seen, if never released). */
  x1: number;
  y1: number;
  /** Pointer motions while it was held. */
  moves: number;
  /** A Shift key was held when it was pressed (Shift + wheel scrolls sideways). */
  shift: boolean;
  /** False when the stream ended with the button still held. */
  released: boolean;
  events: number;
}

/** KeyEvents from the first press (nothing held before) until nothing is held. */
export interface KeysAtom {
  kind: 'keys';
  t0: number;
  t1: number;
  /** Keysyms pressed, in order (repeats included). */
  downs: number[];
  /** False when the stream ended with a key still held. */
  released: boolean;
  events: number;
}

/** One unit of input. */
export type Atom = MoveAtom | ButtonAtom | KeysAtom;

/** Identical free motions closer together than this are one move atom. */
export const MOVE_MERGE_MS = 100;
/** Mask bits of the wheel (X buttons 4-7). */
export const WHEEL_BITS = 8 | 16 | 32 | 64;

/** True when `bit` is a wheel bit. */
export function isWheelBit(bit: number): boolean {
  return (bit & WHEEL_BITS) !== 0;
}

/** True when a keys atom holds only modifiers (e.g. Shift held around wheel notches). */
export function isModifierOnly(a: KeysAtom): boolean {
  return a.downs.length > 0 && a.downs.every((k) => isModifierKeysym(k));
}

/** True when a keys atom holds only Shift keys. */
export function isShiftOnly(a: KeysAtom): boolean {
  return a.downs.length > 0 && a.downs.every((k) => isShiftKeysym(k));
}

/** Cut events (any order; sorted stably by time here) into atoms, in the order of their first event. */
export function toAtoms(events: readonly ClientInputEvent[]): Atom[] {
  const sorted = events
    .map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.t - b.e.t || a.i - b.i)
    .map((x) => x.e);
  const atoms: Atom[] = [];
  let mask = 0;
  const open = new Map<number, ButtonAtom>();
  const held = new Map<number, number>();
  let stroke: KeysAtom | null = null;
  let lastMove: MoveAtom | null = null;

  for (const e of sorted) {
    if (e.kind === 'key') {
      lastMove = null;
      if (e.down) {
        if (!stroke) {
          stroke = { kind: 'keys', t0: e.t, t1: e.t, downs: [], released: false, events: 0 };
          atoms.push(stroke);
        }
        stroke.downs.push(e.keysym);
        stroke.events++;
        stroke.t1 = e.t;
        held.set(e.keysym, (held.get(e.keysym) ?? 0) + 1);
      } else if (stroke && held.has(e.keysym)) {
        stroke.events++;
        stroke.t1 = e.t;
        held.delete(e.keysym);
        if (held.size === 0) {
          stroke.released = true;
          stroke = null;
        }
      }
      // A release of a key never pressed in this stream carries nothing: ignored.
      continue;
    }
    const changed = (e.mask ^ mask) & 0xff;
    if (changed === 0) {
      if (open.size > 0) {
        for (const b of open.values()) {
          b.moves++;
          b.events++;
          b.x1 = e.x;
          b.y1 = e.y;
          b.t1 = e.t;
        }
        continue;
      }
      if (lastMove && lastMove.x === e.x && lastMove.y === e.y && e.t - lastMove.t1 < MOVE_MERGE_MS) {
        lastMove.t1 = e.t;
        lastMove.events++;
        continue;
      }
      lastMove = { kind: 'move', t0: e.t, t1: e.t, x: e.x, y: e.y, events: 1 };
      atoms.push(lastMove);
      continue;
    }
    lastMove = null;
    // Other held buttons see this event as motion.
    for (const [bit, b] of open) {
      if (changed & bit) continue;
      b.moves++;
      b.events++;
      b.x1 = e.x;
      b.y1 = e.y;
      b.t1 = e.t;
    }
    for (let bit = 1; bit <= 0x80; bit <<= 1) {
      if (!(changed & bit)) continue;
      if (e.mask & bit) {
        const shift = [...held.keys()].some((k) => isShiftKeysym(k));
        const b: ButtonAtom = { kind: 'button', bit, t0: e.t, t1: e.t, x0: e.x, y0: e.y, x1: e.x, y1: e.y, moves: 0, shift, released: false, events: 1 };
        open.set(bit, b);
        atoms.push(b);
      } else {
        const b = open.get(bit);
        if (b) {
          b.released = true;
          b.events++;
          b.x1 = e.x;
          b.y1 = e.y;
          b.t1 = e.t;
          open.delete(bit);
        }
      }
    }
    mask = e.mask & 0xff;
  }
  return atoms;
}
