/**
 * Test-only: named builders of client input event sequences, as a VNC client sends them for each
 * action (vncua's InputDriver style by default; uitask-like variants through options), with a
 * running clock, so alignment tests read like the sessions they model.
 */
import { KEYSYM, isPause, parseKeys, planKeyPress, planTypeText } from '../../../harness/keys/index.ts';
import type { ClientInputEvent } from '../atoms.ts';

/** The first and last event time of a group of events. */
export interface Span {
  t0: number;
  t1: number;
}

const BITS = { left: 1, middle: 2, right: 4 } as const;

/** Builds a time-ordered list of client input events. */
export class InputScript {
  readonly events: ClientInputEvent[] = [];
  private mask = 0;
  private x = 0;
  private y = 0;

  /** `t`: epoch ms of the next event; `step`: ms between events within an action. */
  constructor(
    public t = 1_700_000_000_000,
    private readonly step = 3,
  ) {}

  /** Let `ms` pass (model think time between actions). */
  pause(ms: number): this {
    this.t += ms;
    return this;
  }

  /** Run `build` and return the span of the events it added. */
  span(build: () => void): Span {
    const from = this.events.length;
    build();
    const added = this.events.slice(from);
    if (added.length === 0) throw new Error('no events were added');
    return { t0: added[0]!.t, t1: added[added.length - 1]!.t };
  }

  /** One PointerEvent at (x, y) with the current mask. */
  pointer(x: number, y: number): this {
    this.x = x;
    this.y = y;
    return this.push({ kind: 'pointer', t: this.t, x, y, mask: this.mask });
  }

  /** Press mask `bit` where the pointer is. */
  press(bit: number): this {
    this.mask |= bit;
    return this.pointer(this.x, this.y);
  }

  /** Release mask `bit` where the pointer is. */
  release(bit: number): this {
    this.mask &= ~bit;
    return this.pointer(this.x, this.y);
  }

  /** One KeyEvent. */
  key(keysym: number, down: boolean): this {
    return this.push({ kind: 'key', t: this.t, keysym, down });
  }

  /** mouse_move: one motion (or `path` intermediate points first, like an animated move). */
  move(x: number, y: number, o: { path?: Array<[number, number]> } = {}): this {
    for (const [px, py] of o.path ?? []) this.pointer(px, py);
    return this.pointer(x, y);
  }

  /** mouse_click: motion to (x, y) unless `lead: false`, then `count` press/release pairs. */
  click(x: number, y: number, o: { button?: keyof typeof BITS; count?: number; lead?: boolean } = {}): this {
    const bit = BITS[o.button ?? 'left'];
    if (o.lead === false) {
      this.x = x;
      this.y = y;
    } else this.pointer(x, y);
    for (let i = 0; i < (o.count ?? 1); i++) this.press(bit).release(bit);
    return this;
  }

  /** mouse_drag: motion to start, press, `steps` motions to end, release. */
  drag(from: [number, number], to: [number, number], o: { button?: keyof typeof BITS; steps?: number } = {}): this {
    const bit = BITS[o.button ?? 'left'];
    const steps = o.steps ?? 5;
    this.pointer(from[0], from[1]).press(bit);
    for (let i = 1; i <= steps; i++) this.pointer(Math.round(from[0] + ((to[0] - from[0]) * i) / steps), Math.round(from[1] + ((to[1] - from[1]) * i) / steps));
    return this.release(bit);
  }

  /**
   * mouse_scroll: motion to (x, y), then `repeat` wheel notches. `style` 'shift' (vncua: Shift + buttons 4/5
   * for left/right) or 'buttons67' (X buttons 6/7 for left/right, as other clients do).
   */
  scroll(x: number, y: number, direction: 'up' | 'down' | 'left' | 'right', repeat = 1, o: { style?: 'shift' | 'buttons67' } = {}): this {
    const horizontal = direction === 'left' || direction === 'right';
    const style = o.style ?? 'shift';
    let bit = { up: 8, down: 16, left: 8, right: 16 }[direction];
    if (horizontal && style === 'buttons67') bit = direction === 'left' ? 32 : 64;
    this.pointer(x, y);
    const shift = horizontal && style === 'shift';
    if (shift) this.key(KEYSYM.Shift_L, true);
    for (let i = 0; i < repeat; i++) this.press(bit).release(bit);
    if (shift) this.key(KEYSYM.Shift_L, false);
    return this;
  }

  /** type_text as vncua plans it (Shift around shifted characters); `shift: false` sends capitals without Shift. */
  type(text: string, o: { shift?: boolean } = {}): this {
    for (const s of planTypeText(text, { prime: false })) {
      if (isPause(s)) continue;
      if (o.shift === false && s.keysym === KEYSYM.Shift_L) continue;
      this.key(s.keysym, s.down);
    }
    return this;
  }

  /** press_keys as vncua plans it. */
  keys(combo: string): this {
    for (const s of planKeyPress(parseKeys(combo), { prime: false })) if (!isPause(s)) this.key(s.keysym, s.down);
    return this;
  }

  /** Press and release one keysym. */
  tap(keysym: number): this {
    return this.key(keysym, true).key(keysym, false);
  }

  private push(e: ClientInputEvent): this {
    this.events.push(e);
    this.t += this.step;
    return this;
  }
}
