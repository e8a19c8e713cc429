import { describe, expect, it } from 'vitest';
import { KEYSYM } from '../keys/keysyms.ts';
import type { HumanInput } from '../live/control.ts';
import { HumanInputCoalescer, MULTI_CLICK_MS, SCROLL_IDLE_MS, TYPING_IDLE_MS, type HumanAction } from './human-input.ts';

/** A pointer event. */
const ptr = (x: number, y: number, buttonMask = 0): HumanInput => ({ type: 'pointer', x, y, buttonMask });
/** A key down or up. */
const key = (keysym: number | string, down: boolean): HumanInput => ({ type: 'key', keysym: typeof keysym === 'string' ? keysym.codePointAt(0)! : keysym, down });
/** A key pressed and released. */
const tap = (keysym: number | string): HumanInput[] => [key(keysym, true), key(keysym, false)];

/** Feed `events` (10 ms apart from t=1000, or at the times given as numbers in the list), then flush; returns every action. */
function run(script: Array<HumanInput | HumanInput[] | number>, c = new HumanInputCoalescer()): HumanAction[] {
  const out: HumanAction[] = [];
  let t = 1000;
  for (const item of script) {
    if (typeof item === 'number') {
      t = item;
      out.push(...c.due(t));
      continue;
    }
    for (const e of Array.isArray(item) ? item : [item]) {
      out.push(...c.push(e, t));
      t += 10;
    }
  }
  for (const e of c.releases()) out.push(...c.push(e, t, true));
  out.push(...c.flush());
  return out;
}

/** action and params only. */
const brief = (a: HumanAction[]) => a.map((x) => [x.action, x.params]);

describe('HumanInputCoalescer: pointer', () => {
  it('press and release in place is a click at the press position; the moves that led there belong to it', () => {
    const out = run([ptr(10, 10), ptr(50, 60), ptr(100, 100), ptr(100, 100, 1), ptr(101, 100, 1), ptr(101, 100, 0)]);
    expect(brief(out)).toEqual([['mouse_click', { position: { x: 100, y: 100 }, button: 'left', click_type: 'single' }]]);
    // started_at / ended_at: the press and the release.
    expect([out[0]!.started_at, out[0]!.ended_at]).toEqual([1030, 1050]);
  });

  it('right and middle buttons', () => {
    const out = run([ptr(5, 5, 4), ptr(5, 5, 0), 3000, ptr(9, 9, 2), ptr(9, 9, 0)]);
    expect(brief(out)).toEqual([
      ['mouse_click', { position: { x: 5, y: 5 }, button: 'right', click_type: 'single' }],
      ['mouse_click', { position: { x: 9, y: 9 }, button: 'middle', click_type: 'single' }],
    ]);
  });

  it('quick clicks at the same spot are a double, a triple; a fourth starts a new click', () => {
    const click = [ptr(40, 40, 1), ptr(40, 40, 0)];
    expect(brief(run([click, click]))).toEqual([['mouse_click', { position: { x: 40, y: 40 }, button: 'left', click_type: 'double' }]]);
    const out = run([click, click, click, click]);
    expect(brief(out)).toEqual([
      ['mouse_click', { position: { x: 40, y: 40 }, button: 'left', click_type: 'triple' }],
      ['mouse_click', { position: { x: 40, y: 40 }, button: 'left', click_type: 'single' }],
    ]);
    // The triple is final at its third release, without waiting.
    expect(out[0]!.ended_at).toBe(1050);
  });

  it('clicks too far apart in time or space, or of another button, stay single', () => {
    const slow = run([ptr(40, 40, 1), ptr(40, 40, 0), 1000 + MULTI_CLICK_MS + 50, ptr(40, 40, 1), ptr(40, 40, 0)]);
    expect(slow.map((a) => a.params.click_type)).toEqual(['single', 'single']);
    const apart = run([ptr(40, 40, 1), ptr(40, 40, 0), ptr(60, 40, 1), ptr(60, 40, 0)]);
    expect(apart.map((a) => a.params.position)).toEqual([
      { x: 40, y: 40 },
      { x: 60, y: 40 },
    ]);
    const other = run([ptr(40, 40, 1), ptr(40, 40, 0), ptr(40, 40, 4), ptr(40, 40, 0)]);
    expect(other.map((a) => [a.params.button, a.params.click_type])).toEqual([
      ['left', 'single'],
      ['right', 'single'],
    ]);
  });

  it('a click waits for a possible second press, then is due', () => {
    const c = new HumanInputCoalescer();
    expect(c.push(ptr(1, 1, 1), 0)).toEqual([]);
    expect(c.push(ptr(1, 1, 0), 50)).toEqual([]);
    expect(c.deadline).toBe(MULTI_CLICK_MS);
    expect(c.due(MULTI_CLICK_MS - 1)).toEqual([]);
    expect(brief(c.due(MULTI_CLICK_MS))).toEqual([['mouse_click', { position: { x: 1, y: 1 }, button: 'left', click_type: 'single' }]]);
    expect(c.deadline).toBeNull();
  });

  it('press, move beyond the slop, release is a drag from the press to the release', () => {
    const out = run([ptr(10, 10), ptr(10, 10, 1), ptr(20, 12, 1), ptr(80, 90, 1), ptr(80, 90, 0)]);
    expect(brief(out)).toEqual([['mouse_drag', { start: { x: 10, y: 10 }, end: { x: 80, y: 90 }, button: 'left' }]]);
    expect([out[0]!.started_at, out[0]!.ended_at]).toEqual([1010, 1040]);
  });

  it('a press that wanders away and comes back is a drag, not a click', () => {
    const out = run([ptr(10, 10, 1), ptr(40, 10, 1), ptr(11, 10, 1), ptr(11, 10, 0)]);
    expect(out.map((a) => a.action)).toEqual(['mouse_drag']);
  });

  it('moves not followed by a press are one mouse_move to where the pointer stopped', () => {
    const out = run([ptr(10, 10), ptr(20, 20), ptr(30, 35)]);
    expect(out.map((a) => [a.action, a.params, a.started_at, a.ended_at])).toEqual([['mouse_move', { position: { x: 30, y: 35 } }, 1000, 1020]]);
  });

  it('moves then a key: the mouse_move comes first', () => {
    const out = run([ptr(10, 10), ptr(30, 35), tap(KEYSYM.Escape)]);
    expect(brief(out)).toEqual([
      ['mouse_move', { position: { x: 30, y: 35 } }],
      ['press_keys', { keys: 'Escape' }],
    ]);
  });

  it('a move that ends where the last action left the pointer is no action', () => {
    const out = run([ptr(50, 50, 1), ptr(50, 50, 0), 2000, ptr(52, 51), ptr(51, 50)]);
    expect(out.map((a) => a.action)).toEqual(['mouse_click']);
    const c = new HumanInputCoalescer();
    c.setRestingPointer({ x: 7, y: 7 });
    expect(run([ptr(8, 7)], c)).toEqual([]);
  });

  it('moving away from a pending click makes it final at once', () => {
    const c = new HumanInputCoalescer();
    c.push(ptr(5, 5, 1), 0);
    c.push(ptr(5, 5, 0), 10);
    expect(brief(c.push(ptr(50, 5), 20))).toEqual([['mouse_click', { position: { x: 5, y: 5 }, button: 'left', click_type: 'single' }]]);
  });

  it('wheel notches are one mouse_scroll with repeat; a pause, another direction or spot starts another', () => {
    const notch = (bit: number, x = 100) => [ptr(x, 100, bit), ptr(x, 100, 0)];
    const out = run([ptr(100, 100), notch(16), notch(16), notch(16), notch(8), 3000, notch(8), notch(8, 200)]);
    expect(brief(out)).toEqual([
      ['mouse_scroll', { position: { x: 100, y: 100 }, direction: 'down', repeat: 3 }],
      ['mouse_scroll', { position: { x: 100, y: 100 }, direction: 'up', repeat: 1 }],
      ['mouse_scroll', { position: { x: 100, y: 100 }, direction: 'up', repeat: 1 }],
      ['mouse_scroll', { position: { x: 200, y: 100 }, direction: 'up', repeat: 1 }],
    ]);
    expect([out[0]!.started_at, out[0]!.ended_at]).toEqual([1010, 1060]);
  });

  it('wheel bits 32/64 are left/right; Shift with wheel up/down is left/right too (no modifier recorded, no lone shift)', () => {
    const out = run([
      ptr(9, 9, 32),
      ptr(9, 9, 0),
      ptr(9, 9, 64),
      ptr(9, 9, 0),
      3000,
      key(KEYSYM.Shift_L, true),
      ptr(9, 9, 16),
      ptr(9, 9, 0),
      ptr(9, 9, 16),
      ptr(9, 9, 0),
      key(KEYSYM.Shift_L, false),
    ]);
    expect(out.map((a) => [a.action, a.params.direction, a.params.repeat, a.meta])).toEqual([
      ['mouse_scroll', 'left', 1, undefined],
      ['mouse_scroll', 'right', 1, undefined],
      ['mouse_scroll', 'right', 2, undefined],
    ]);
  });

  it('a scroll is due SCROLL_IDLE_MS after its last notch', () => {
    const c = new HumanInputCoalescer();
    c.push(ptr(3, 3, 8), 0);
    c.push(ptr(3, 3, 0), 5);
    expect(c.deadline).toBe(5 + SCROLL_IDLE_MS);
    expect(brief(c.due(5 + SCROLL_IDLE_MS))).toEqual([['mouse_scroll', { position: { x: 3, y: 3 }, direction: 'up', repeat: 1 }]]);
  });

  it('modifiers held during a click or drag go in meta.modifiers, and are no key press of their own', () => {
    const out = run([
      key(KEYSYM.Control_L, true),
      ptr(10, 10, 1),
      ptr(10, 10, 0),
      key(KEYSYM.Control_L, false),
      3000,
      key(KEYSYM.Shift_L, true),
      ptr(10, 10, 1),
      ptr(90, 10, 1),
      ptr(90, 10, 0),
      key(KEYSYM.Shift_L, false),
    ]);
    expect(out.map((a) => [a.action, a.meta])).toEqual([
      ['mouse_click', { modifiers: ['ctrl'] }],
      ['mouse_drag', { modifiers: ['shift'] }],
    ]);
  });
});

describe('HumanInputCoalescer: keys', () => {
  it('printable keys, Shift allowed, are one type_text; started at the first key (its Shift), ended at the last release', () => {
    const out = run([key(KEYSYM.Shift_L, true), tap('H'), key(KEYSYM.Shift_L, false), tap('i'), tap(' '), tap('!'), tap('é')]);
    expect(brief(out)).toEqual([['type_text', { text: 'Hi !é' }]]);
    expect([out[0]!.started_at, out[0]!.ended_at]).toEqual([1000, 1110]);
  });

  it('typing ends after TYPING_IDLE_MS without a key', () => {
    const c = new HumanInputCoalescer();
    c.push(key('a', true), 0);
    c.push(key('a', false), 20);
    expect(c.deadline).toBe(20 + TYPING_IDLE_MS);
    expect(brief(c.due(20 + TYPING_IDLE_MS))).toEqual([['type_text', { text: 'a' }]]);
    c.push(key('b', true), 5000);
    expect(brief(c.flush())).toEqual([['type_text', { text: 'b' }]]);
  });

  it('other keys end the text and are press_keys of their own, recorded at their release', () => {
    const out = run([tap('o'), tap('k'), tap(KEYSYM.Return), tap(KEYSYM.Tab), tap('x'), tap(KEYSYM.BackSpace)]);
    expect(brief(out)).toEqual([
      ['type_text', { text: 'ok' }],
      ['press_keys', { keys: 'Return' }],
      ['press_keys', { keys: 'Tab' }],
      ['type_text', { text: 'x' }],
      ['press_keys', { keys: 'BackSpace' }],
    ]);
    expect([out[1]!.started_at, out[1]!.ended_at]).toEqual([1040, 1050]);
  });

  it('chords with ctrl / alt / super are press_keys named as pressKeys takes them', () => {
    const out = run([
      key(KEYSYM.Control_L, true),
      tap('a'),
      tap('c'),
      key(KEYSYM.Control_L, false),
      key(KEYSYM.Control_L, true),
      key(KEYSYM.Shift_L, true),
      tap('P'),
      key(KEYSYM.Shift_L, false),
      key(KEYSYM.Control_L, false),
      key(KEYSYM.Alt_L, true),
      tap(KEYSYM.Left),
      key(KEYSYM.Alt_L, false),
      key(KEYSYM.Super_L, true),
      tap('e'),
      key(KEYSYM.Super_L, false),
    ]);
    expect(brief(out)).toEqual([
      ['press_keys', { keys: 'ctrl+a' }],
      ['press_keys', { keys: 'ctrl+c' }],
      ['press_keys', { keys: 'ctrl+shift+p' }],
      ['press_keys', { keys: 'alt+Left' }],
      ['press_keys', { keys: 'super+e' }],
    ]);
    // The first chord starts at its modifier's press; the second (ctrl still held) at its own key.
    expect(out.map((a) => a.started_at).slice(0, 2)).toEqual([1000, 1030]);
  });

  it('AltGr chooses a character: still text', () => {
    const out = run([key(KEYSYM.ISO_Level3_Shift, true), tap('@'), key(KEYSYM.ISO_Level3_Shift, false)]);
    expect(brief(out)).toEqual([['type_text', { text: '@' }]]);
  });

  it('a modifier tapped by itself is a press_keys of it; two tapped together are one', () => {
    const out = run([tap(KEYSYM.Super_L), key(KEYSYM.Control_L, true), key(KEYSYM.Shift_L, true), key(KEYSYM.Shift_L, false), key(KEYSYM.Control_L, false)]);
    expect(brief(out)).toEqual([
      ['press_keys', { keys: 'super' }],
      ['press_keys', { keys: 'ctrl+shift' }],
    ]);
  });

  it('a key held down and repeating is one press per repeat; typed characters repeat in the text', () => {
    const out = run([
      key(KEYSYM.BackSpace, true),
      key(KEYSYM.BackSpace, true),
      key(KEYSYM.BackSpace, true),
      key(KEYSYM.BackSpace, false),
      key('z', true),
      key('z', true),
      key('z', false),
    ]);
    expect(brief(out)).toEqual([
      ['press_keys', { keys: 'BackSpace' }],
      ['press_keys', { keys: 'BackSpace' }],
      ['press_keys', { keys: 'BackSpace' }],
      ['type_text', { text: 'zz' }],
    ]);
  });

  it('releases of keys and buttons pressed before the takeover are ignored', () => {
    const c = new HumanInputCoalescer();
    c.setRestingPointer({ x: 5, y: 5 });
    expect(run([key('q', false), key(KEYSYM.Control_L, false), ptr(5, 5, 0)], c)).toEqual([]);
  });

  it('text then a click: the text is final at the press', () => {
    const c = new HumanInputCoalescer();
    c.push(key('a', true), 0);
    c.push(key('a', false), 10);
    expect(brief(c.push(ptr(10, 10, 1), 20))).toEqual([['type_text', { text: 'a' }]]);
  });

  it('ignores keysym 0 and bad keysyms', () => {
    expect(run([key(0, true), key(0, false), { type: 'key', keysym: 1.5, down: true }])).toEqual([]);
  });
});

describe('HumanInputCoalescer: handback with something held', () => {
  it('releases() lets go of held keys (last first) and buttons where the pointer is; the entries they complete say so', () => {
    const c = new HumanInputCoalescer();
    c.push(key(KEYSYM.Control_L, true), 0);
    c.push(key('a', true), 10);
    c.push(ptr(30, 30, 1), 20);
    c.push(ptr(90, 40, 1), 30);
    expect(c.releases()).toEqual([key('a', false), key(KEYSYM.Control_L, false), ptr(90, 40, 0)]);
    const out: HumanAction[] = [];
    for (const e of c.releases()) out.push(...c.push(e, 40, true));
    out.push(...c.flush());
    expect(out.map((a) => [a.action, a.params, a.meta])).toEqual([
      ['press_keys', { keys: 'ctrl+a' }, { released_at_handback: true }],
      ['mouse_drag', { start: { x: 30, y: 30 }, end: { x: 90, y: 40 }, button: 'left' }, { modifiers: ['ctrl'], released_at_handback: true }],
    ]);
    expect(c.releases()).toEqual([]);
    expect(c.pointer).toEqual({ x: 90, y: 40, buttonMask: 0 });
  });

  it('a button held in place at handback is a click', () => {
    const c = new HumanInputCoalescer();
    c.push(ptr(7, 8, 4), 0);
    const out = c.releases().flatMap((e) => c.push(e, 5, true));
    out.push(...c.flush());
    expect(out.map((a) => [a.action, a.params, a.meta])).toEqual([
      ['mouse_click', { position: { x: 7, y: 8 }, button: 'right', click_type: 'single' }, { released_at_handback: true }],
    ]);
  });

  it('flush() makes whatever is pending final: a click, a scroll, text, moves', () => {
    const cases: Array<[HumanInput[], string]> = [
      [[ptr(4, 4, 1), ptr(4, 4, 0)], 'mouse_click'],
      [[ptr(1, 1, 8), ptr(1, 1, 0)], 'mouse_scroll'],
      [[key('a', true), key('a', false)], 'type_text'],
      [[ptr(80, 80)], 'mouse_move'],
    ];
    for (const [events, action] of cases) {
      const c = new HumanInputCoalescer();
      for (const [i, e] of events.entries()) expect(c.push(e, i)).toEqual([]);
      expect(c.flush().map((a) => a.action)).toEqual([action]);
      expect(c.flush()).toEqual([]);
      expect(c.deadline).toBeNull();
    }
  });
});
