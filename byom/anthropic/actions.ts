/**
 * The computer tool's actions (a `tool_use` block's `input`) → vncua trace steps (`{ action,
 * params }`, screen pixels), performed through `ModelAgent.perform()`. Coordinates are display
 * pixels, mapped to the screen by `DisplayMap` (display.ts); the mapper keeps the pointer position
 * (in screen pixels) to fill in actions that give no coordinate.
 *
 * | Tool action | vncua step(s) / answer |
 * | --- | --- |
 * | `left_click`, `right_click`, `middle_click` [coordinate] | `mouse_click` left / right / middle, single, at coordinate or the pointer |
 * | `double_click`, `triple_click` [coordinate] | `mouse_click` left, double / triple |
 * | `left_click_drag` start_coordinate, coordinate | `mouse_drag` left from start (or the pointer) to coordinate |
 * | `mouse_move` coordinate | `mouse_move` |
 * | `key` text | `press_keys` per xdotool keysequence (keys.ts) |
 * | `type` text | `type_text` |
 * | `scroll` scroll_direction, scroll_amount [coordinate] | `mouse_scroll` at coordinate or the pointer, `repeat` = scroll_amount wheel notches (split into steps of at most 100); 0 does nothing |
 * | `hold_key` text, duration | `press_keys` (pressed and released), then `wait` duration: vncua has no key-hold primitive |
 * | `left_mouse_down` [coordinate] … `left_mouse_up` [coordinate] | one `mouse_click` (up where the down was) or `mouse_drag` (down → up), performed at the up (see below) |
 * | `wait` duration | `wait` (1 s when duration is missing) |
 * | `screenshot` | nothing performed: answered with a screenshot |
 * | `cursor_position` | nothing performed: answered with `X=…,Y=…` in display pixels |
 * | `zoom` region | nothing performed: answered with the region cut from the full-resolution screen (computer_20251124 with zoom enabled) |
 *
 * Held keys (`text` on clicks and scroll, as computer_20250124 allows): vncua has no primitive to
 * hold keys during a mouse action. Shift on a scroll is mapped exactly (Shift + wheel is the
 * horizontal scroll vncua sends: up/down become left/right); any other held key makes the action
 * an error result and nothing is done (a Ctrl- or Shift-click done without its keys would do
 * something else than asked).
 *
 * left_mouse_down / left_mouse_up: vncua has no separate button primitives (each primitive leaves
 * the buttons up). A down is remembered, `mouse_move`s while it is held move the remembered
 * pointer, and the matching up performs the whole gesture: a click when the pointer did not move,
 * else a drag from the down position to the up position. An action that would act while the
 * button is "held" (click, drag, key, type, scroll, hold_key) first drops the pending down, and
 * says so in its result; an up without a down is an error result.
 *
 * Anything else (an unknown action, a missing or malformed field, a coordinate outside the
 * display) is an error result saying what was wrong; the adapter answers it with `is_error: true`
 * and the run goes on.
 */
import type { ActionStep, Point, ScrollDirection } from '../../harness/agent/index.ts';
import { MAX_SCROLL_REPEAT } from '../../harness/agent/index.ts';
import { isVncuaError } from '../../harness/errors.ts';
import type { DisplayMap } from './display.ts';
import { translateKeys } from './keys.ts';

/** The computer tool versions this adapter speaks. */
export const TOOL_VERSIONS = ['computer_20251124', 'computer_20250124'] as const;
/** One of TOOL_VERSIONS. */
export type ToolVersion = (typeof TOOL_VERSIONS)[number];

/** The input of a computer tool_use block, as the tool defines it (every field but `action` optional). */
export interface ComputerInput {
  action: string;
  coordinate?: [number, number];
  start_coordinate?: [number, number];
  text?: string;
  duration?: number;
  scroll_direction?: ScrollDirection;
  scroll_amount?: number;
  /** zoom: [x1, y1, x2, y2] in display pixels. */
  region?: [number, number, number, number];
}

/** Every action of the computer tool (computer_20250124, plus zoom in computer_20251124). */
export const COMPUTER_ACTIONS = [
  'key',
  'hold_key',
  'type',
  'cursor_position',
  'mouse_move',
  'left_mouse_down',
  'left_mouse_up',
  'left_click',
  'left_click_drag',
  'right_click',
  'middle_click',
  'double_click',
  'triple_click',
  'scroll',
  'wait',
  'screenshot',
  'zoom',
] as const;

/** Seconds a `wait` without duration waits. */
export const DEFAULT_WAIT_SECONDS = 1;
/** Longest duration of `wait` and `hold_key`, in seconds (the tool's limit). */
export const MAX_DURATION_SECONDS = 100;

/** A screen rectangle in pixels. */
export interface ScreenRect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** What one tool_use becomes. `note` is text for the tool_result (said to the model and kept in the trace's meta). */
export type Mapped =
  /** Perform these steps in order. */
  | { kind: 'steps'; steps: ActionStep[]; note?: string }
  /** Answer with a screenshot (nothing performed). */
  | { kind: 'screenshot' }
  /** Answer with this text (nothing performed). */
  | { kind: 'text'; text: string }
  /** Answer with this screen region (nothing performed). */
  | { kind: 'zoom'; rect: ScreenRect }
  /** Answer with is_error and this message (nothing performed). */
  | { kind: 'error'; message: string };

/** What the mapper needs besides the input. */
export interface MapperOptions {
  /** The display/screen mapping of the current screenshot. */
  map: DisplayMap;
  /** The tool version sent (zoom exists only in computer_20251124). */
  toolVersion: ToolVersion;
  /** Whether the tool was sent with enable_zoom. */
  zoom: boolean;
}

const SHIFT_NAMES = new Set(['shift', 'shift_l', 'shift_r', 'lshift', 'rshift']);
const CLICKS: Record<string, { button: 'left' | 'right' | 'middle'; clickType: 'single' | 'double' | 'triple' }> = {
  left_click: { button: 'left', clickType: 'single' },
  right_click: { button: 'right', clickType: 'single' },
  middle_click: { button: 'middle', clickType: 'single' },
  double_click: { button: 'left', clickType: 'double' },
  triple_click: { button: 'left', clickType: 'triple' },
};

/** An input problem: becomes an error result. */
class InputError extends Error {}

/** Maps computer tool actions to vncua steps; keeps the pointer and a pending left_mouse_down between calls. */
export class ComputerActionMapper {
  #opts: MapperOptions;
  #pointer: Point;
  #down: Point | null = null;

  constructor(options: MapperOptions) {
    this.#opts = options;
    this.#pointer = center(options.map.screen.width, options.map.screen.height);
  }

  /** Use a new mapping (each screenshot's); a new screen size puts the pointer back to the centre, where the Agent believes it is. */
  update(options: MapperOptions): void {
    const old = this.#opts.map.screen;
    this.#opts = options;
    const s = options.map.screen;
    if (s.width !== old.width || s.height !== old.height) {
      this.#pointer = center(s.width, s.height);
      this.#down = null;
    }
  }

  /** The pointer position the mapper believes in (screen pixels). */
  get pointer(): Point {
    return { ...this.#pointer };
  }

  /** The size of the display the model sees (the current screenshot's). */
  displaySize(): { width: number; height: number } {
    return { ...this.#opts.map.display };
  }

  /** The position of a pending left_mouse_down (screen pixels), or null. */
  get pendingDown(): Point | null {
    return this.#down ? { ...this.#down } : null;
  }

  /** Map one tool_use input (any JSON) to what to do. */
  map(input: unknown): Mapped {
    try {
      return this.#map(input);
    } catch (e) {
      if (e instanceof InputError) return { kind: 'error', message: e.message };
      if (isVncuaError(e)) return { kind: 'error', message: e.message };
      throw e;
    }
  }

  #map(input: unknown): Mapped {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InputError('The computer tool input must be an object with an "action" field.');
    const i = input as Record<string, unknown>;
    const action = i.action;
    if (typeof action !== 'string') throw new InputError(`The computer tool input has no "action" string; use one of ${this.#actions().join(', ')}.`);
    const click = CLICKS[action];
    if (click) {
      this.#noHeldKeys(action, i.text);
      const position = i.coordinate === undefined ? this.#pointer : this.#coordinate('coordinate', i.coordinate);
      const note = this.#dropDown(action);
      this.#pointer = position;
      return steps([{ action: 'mouse_click', params: { position, button: click.button, click_type: click.clickType } }], note);
    }
    switch (action) {
      case 'left_click_drag': {
        this.#noHeldKeys(action, i.text);
        const start = i.start_coordinate === undefined ? this.#pointer : this.#coordinate('start_coordinate', i.start_coordinate);
        const end = this.#coordinate('coordinate', this.#required(action, 'coordinate', i.coordinate));
        const note = this.#dropDown(action);
        this.#pointer = end;
        return steps([{ action: 'mouse_drag', params: { start, end, button: 'left' } }], note);
      }
      case 'mouse_move': {
        this.#noHeldKeys(action, i.text);
        const position = this.#coordinate('coordinate', this.#required(action, 'coordinate', i.coordinate));
        this.#pointer = position;
        if (this.#down) {
          const d = this.#opts.map.toDisplay(position);
          return {
            kind: 'text',
            text: `The pointer is at (${d.x}, ${d.y}) with the left button held; the press, the moves and the release are performed together at left_mouse_up.`,
          };
        }
        return steps([{ action: 'mouse_move', params: { position } }]);
      }
      case 'left_mouse_down': {
        if (this.#down) throw new InputError('left_mouse_down: the left button is already down; send left_mouse_up first.');
        const position = i.coordinate === undefined ? this.#pointer : this.#coordinate('coordinate', i.coordinate);
        this.#down = position;
        this.#pointer = position;
        const d = this.#opts.map.toDisplay(position);
        return {
          kind: 'text',
          text: `The left button is down at (${d.x}, ${d.y}); vncua performs the press together with the next left_mouse_up (a click there, or a drag to where the pointer is then).`,
        };
      }
      case 'left_mouse_up': {
        const start = this.#down;
        if (!start) throw new InputError('left_mouse_up: the left button is not down; send left_mouse_down first (or use left_click / left_click_drag).');
        const end = i.coordinate === undefined ? this.#pointer : this.#coordinate('coordinate', i.coordinate);
        this.#down = null;
        this.#pointer = end;
        if (end.x === start.x && end.y === start.y) return steps([{ action: 'mouse_click', params: { position: start, button: 'left', click_type: 'single' } }]);
        return steps([{ action: 'mouse_drag', params: { start, end, button: 'left' } }]);
      }
      case 'key': {
        const text = this.#text(action, i.text);
        const chords = translateKeys(text);
        const note = this.#dropDown(action);
        return steps(
          chords.map((keys) => ({ action: 'press_keys', params: { keys } })),
          note,
        );
      }
      case 'type': {
        const text = this.#text(action, i.text);
        const note = this.#dropDown(action);
        return steps([{ action: 'type_text', params: { text } }], note);
      }
      case 'scroll':
        return this.#scroll(i);
      case 'hold_key': {
        const text = this.#text(action, i.text);
        const seconds = this.#duration(action, this.#required(action, 'duration', i.duration));
        const chords = translateKeys(text);
        const note = joinNotes(this.#dropDown(action), `vncua cannot hold keys: ${JSON.stringify(text)} was pressed and released, then it waited ${seconds} s.`);
        return steps([...chords.map((keys) => ({ action: 'press_keys', params: { keys } })), { action: 'wait', params: { seconds } }], note);
      }
      case 'wait': {
        const seconds = i.duration === undefined ? DEFAULT_WAIT_SECONDS : this.#duration(action, i.duration);
        return steps([{ action: 'wait', params: { seconds } }]);
      }
      case 'screenshot':
        return { kind: 'screenshot' };
      case 'cursor_position': {
        const d = this.#opts.map.toDisplay(this.#pointer);
        return { kind: 'text', text: `X=${d.x},Y=${d.y}` };
      }
      case 'zoom':
        return this.#zoom(i.region);
      default:
        throw new InputError(`Unknown computer action ${JSON.stringify(action)}; use one of ${this.#actions().join(', ')}.`);
    }
  }

  #actions(): string[] {
    return COMPUTER_ACTIONS.filter((a) => a !== 'zoom' || this.#zoomOn());
  }

  #zoomOn(): boolean {
    return this.#opts.toolVersion === 'computer_20251124' && this.#opts.zoom;
  }

  #scroll(i: Record<string, unknown>): Mapped {
    const dir = i.scroll_direction;
    if (dir !== 'up' && dir !== 'down' && dir !== 'left' && dir !== 'right') {
      throw new InputError(`scroll needs scroll_direction "up", "down", "left" or "right", got ${JSON.stringify(dir)}.`);
    }
    const amount = i.scroll_amount;
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 0) {
      throw new InputError(`scroll needs scroll_amount, a whole number of wheel notches (0 or more), got ${JSON.stringify(amount)}.`);
    }
    let direction: ScrollDirection = dir;
    if (i.text !== undefined && i.text !== null && i.text !== '') {
      const held = typeof i.text === 'string' ? i.text.trim().toLowerCase() : '';
      if (!SHIFT_NAMES.has(held)) {
        throw new InputError(
          `scroll with held keys ${JSON.stringify(i.text)} is not supported: vncua cannot hold keys during a scroll (only shift, which scrolls sideways). Nothing was done.`,
        );
      }
      if (direction === 'up') direction = 'left';
      else if (direction === 'down') direction = 'right';
    }
    const position = i.coordinate === undefined ? this.#pointer : this.#coordinate('coordinate', i.coordinate);
    const note = this.#dropDown('scroll');
    this.#pointer = position;
    if (amount === 0) return { kind: 'text', text: joinNotes(note, 'scroll_amount 0: nothing was scrolled.')! };
    const out: ActionStep[] = [];
    for (let left = amount; left > 0; left -= MAX_SCROLL_REPEAT) {
      out.push({ action: 'mouse_scroll', params: { position, direction, repeat: Math.min(left, MAX_SCROLL_REPEAT) } });
    }
    return steps(out, note);
  }

  #zoom(region: unknown): Mapped {
    if (!this.#zoomOn()) {
      const why = this.#opts.toolVersion === 'computer_20251124' ? 'zoom is not enabled for this tool (enable_zoom)' : 'zoom exists only in computer_20251124';
      throw new InputError(`zoom is not available: ${why}. Use screenshot instead.`);
    }
    const { width: w, height: h } = this.#opts.map.display;
    if (!Array.isArray(region) || region.length !== 4 || !region.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw new InputError(`zoom needs region [x1, y1, x2, y2] in display pixels, got ${JSON.stringify(region)}.`);
    }
    const [x1, y1, x2, y2] = region as [number, number, number, number];
    if (x1 < 0 || y1 < 0 || x2 > w || y2 > h || x2 <= x1 || y2 <= y1) {
      throw new InputError(`zoom region ${JSON.stringify(region)} must lie within the ${w}x${h} display with x1 < x2 and y1 < y2.`);
    }
    return { kind: 'zoom', rect: this.#opts.map.regionToScreen(x1, y1, x2, y2) };
  }

  /** A coordinate [x, y] in display pixels (0..width, 0..height) → screen pixel. */
  #coordinate(name: string, v: unknown): Point {
    const { width: w, height: h } = this.#opts.map.display;
    if (!Array.isArray(v) || v.length !== 2 || typeof v[0] !== 'number' || typeof v[1] !== 'number' || !Number.isFinite(v[0]) || !Number.isFinite(v[1])) {
      throw new InputError(`${name} must be [x, y] in display pixels, got ${JSON.stringify(v)}.`);
    }
    const [x, y] = v as [number, number];
    if (x < 0 || y < 0 || x > w || y > h) {
      throw new InputError(`${name} ${JSON.stringify(v)} is outside the ${w}x${h} display: x must be 0..${w - 1} and y 0..${h - 1}.`);
    }
    return this.#opts.map.toScreen({ x, y });
  }

  #required(action: string, field: string, v: unknown): unknown {
    if (v === undefined || v === null) throw new InputError(`${action} needs ${field}.`);
    return v;
  }

  #text(action: string, v: unknown): string {
    if (typeof v !== 'string' || v === '') throw new InputError(`${action} needs text, a non-empty string, got ${JSON.stringify(v)}.`);
    return v;
  }

  #duration(action: string, v: unknown): number {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_DURATION_SECONDS) {
      throw new InputError(`${action} needs duration in seconds, 0..${MAX_DURATION_SECONDS}, got ${JSON.stringify(v)}.`);
    }
    return v;
  }

  #noHeldKeys(action: string, text: unknown): void {
    if (text === undefined || text === null || text === '') return;
    throw new InputError(
      `${action} with held keys ${JSON.stringify(text)} is not supported: vncua cannot hold keys during a mouse action. Nothing was done; ` +
        'do it without held keys, or reach the goal with key actions.',
    );
  }

  /** Drop a pending left_mouse_down before an action that acts on its own; the note says so. */
  #dropDown(action: string): string | undefined {
    const down = this.#down;
    if (!down) return undefined;
    this.#down = null;
    const d = this.#opts.map.toDisplay(down);
    return `The pending left_mouse_down at (${d.x}, ${d.y}) was dropped before ${action}: vncua performs a left_mouse_down only together with its left_mouse_up (only mouse_move may come between them).`;
  }
}

function steps(list: ActionStep[], note?: string): Mapped {
  return note ? { kind: 'steps', steps: list, note } : { kind: 'steps', steps: list };
}

function joinNotes(...notes: Array<string | undefined>): string | undefined {
  const kept = notes.filter((n): n is string => !!n);
  return kept.length > 0 ? kept.join(' ') : undefined;
}

function center(width: number, height: number): Point {
  return { x: Math.floor(width / 2), y: Math.floor(height / 2) };
}
