/**
 * OpenAI computer actions (`computer_call.action`, or each of the batched `computer_call.actions`)
 * → vncua trace steps (`{ action, params }`, snake_case, screen pixels), performed through
 * `ModelAgent.perform()`.
 *
 * | OpenAI action | vncua step(s) |
 * | --- | --- |
 * | `click` left / right / wheel | `mouse_click` left / right / middle, single |
 * | `click` back / forward | `page_navigation` back / forward (what those mouse buttons do in a browser) |
 * | `double_click` | `mouse_click` left, double |
 * | `scroll` scroll_x / scroll_y (px) | `mouse_scroll` down/up for scroll_y, then right/left for scroll_x; repeat = round(\|px\| / 120), at least 1, at most 100 |
 * | `type` | `type_text` |
 * | `keypress` keys | `press_keys` with the keys joined by `+` (CTRL→ctrl, ENTER→Enter, ARROWLEFT→Left, CMD/META→super, …) |
 * | `drag` path | `mouse_drag` from the first point to the last (intermediate points are dropped and kept in meta) |
 * | `move` | `mouse_move` |
 * | `wait` | `wait` for `ms` / 1000 s if the action gives `ms`, else 1 s |
 * | `screenshot` | nothing: the next request carries a screenshot anyway |
 *
 * Scroll amounts are in image pixels; they are scaled to screen pixels, then turned into wheel
 * notches of 120 px (measured: one wheel notch sent by vncua scrolls Chromium on the Xvnc desktop
 * by 120 CSS px, `deltaY` 120). Keys held during a mouse action (`keys` on click, scroll, drag,
 * move) have no vncua primitive: the mouse action is performed without them and the keys are
 * reported in `notes.held_keys_ignored` (the adapter puts them into the trace entry's meta).
 */
import type { ActionStep, Point } from '../../harness/agent/index.ts';
import { MAX_SCROLL_REPEAT } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import type { CoordinateMap } from './coords.ts';

/** Screen pixels one wheel notch scrolls in Chromium on the vncua desktop (measured). */
export const PIXELS_PER_NOTCH = 120;
/** Seconds a `wait` action waits when it gives no duration. */
export const DEFAULT_WAIT_SECONDS = 1;

/** What one OpenAI action becomes: the steps to perform, and notes for the trace entry's meta. */
export interface MappedAction {
  steps: ActionStep[];
  notes?: Record<string, unknown>;
}

/** OpenAI key names → vncua key names (looked up upper-cased); others pass through unchanged. */
const KEY_NAMES: Readonly<Record<string, string>> = {
  CTRL: 'ctrl',
  CONTROL: 'ctrl',
  ALT: 'alt',
  OPTION: 'alt',
  SHIFT: 'shift',
  CMD: 'super',
  COMMAND: 'super',
  META: 'super',
  SUPER: 'super',
  WIN: 'super',
  WINDOWS: 'super',
  ENTER: 'Enter',
  RETURN: 'Enter',
  ESC: 'Escape',
  ESCAPE: 'Escape',
  SPACE: 'space',
  ' ': 'space',
  '+': 'plus',
  TAB: 'Tab',
  BACKSPACE: 'BackSpace',
  DELETE: 'Delete',
  DEL: 'Delete',
  INSERT: 'Insert',
  HOME: 'Home',
  END: 'End',
  PAGEUP: 'Page_Up',
  PAGE_UP: 'Page_Up',
  PGUP: 'Page_Up',
  PAGEDOWN: 'Page_Down',
  PAGE_DOWN: 'Page_Down',
  PGDN: 'Page_Down',
  ARROWLEFT: 'Left',
  LEFT: 'Left',
  ARROWRIGHT: 'Right',
  RIGHT: 'Right',
  ARROWUP: 'Up',
  UP: 'Up',
  ARROWDOWN: 'Down',
  DOWN: 'Down',
  CAPSLOCK: 'Caps_Lock',
};

/** MODEL_ERR_UNKNOWN_ACTION for `action`. */
function badAction(action: unknown, why: string): VncuaError {
  return new VncuaError('MODEL_ERR_UNKNOWN_ACTION', `The model asked for ${why}; vncua maps click, double_click, scroll, type, keypress, drag, move, wait and screenshot.`, {
    details: { action },
  });
}

/** The vncua key string of an OpenAI `keypress` (`["CTRL", "A"]` → `"ctrl+a"`). */
export function mapKeys(keys: readonly string[]): string {
  const names = keys.map((k) => {
    if (typeof k !== 'string' || k.length === 0) throw badAction({ type: 'keypress', keys }, `a keypress with a key that is not a non-empty string (${JSON.stringify(k)})`);
    const mapped = KEY_NAMES[k.toUpperCase()];
    if (mapped) return mapped;
    if (/^F([1-9]|1\d|2[0-4])$/i.test(k)) return k.toUpperCase();
    // In a chord, letters are case-insensitive; alone, "A" is Shift+A as the model wrote it.
    return keys.length > 1 && [...k].length === 1 ? k.toLowerCase() : k;
  });
  return names.join('+');
}

function num(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** The screen point of the action's `x`/`y` (MODEL_ERR_UNKNOWN_ACTION when they are not numbers). */
function at(a: Record<string, unknown>, map: CoordinateMap): Point {
  if (!num(a.x) || !num(a.y)) throw badAction(a, `a ${String(a.type)} action without numeric x and y`);
  return map.toScreen({ x: a.x, y: a.y });
}

/** Keys the model wanted held during a mouse action (which vncua cannot do), as a note. */
function heldKeys(a: Record<string, unknown>): Record<string, unknown> | undefined {
  return Array.isArray(a.keys) && a.keys.length > 0 ? { held_keys_ignored: a.keys } : undefined;
}

/** Wheel notches for a scroll of `px` screen pixels (0 → none). */
function notches(px: number): number {
  if (px === 0) return 0;
  return Math.min(MAX_SCROLL_REPEAT, Math.max(1, Math.round(Math.abs(px) / PIXELS_PER_NOTCH)));
}

/** Map one OpenAI computer action (as received; validated here) to vncua steps in screen coordinates. */
export function mapComputerAction(action: unknown, map: CoordinateMap): MappedAction {
  if (typeof action !== 'object' || action === null || Array.isArray(action)) throw badAction(action, 'an action that is not an object');
  const a = action as Record<string, unknown>;
  switch (a.type) {
    case 'click': {
      const button = a.button ?? 'left';
      if (button === 'back' || button === 'forward') {
        return { steps: [{ action: 'page_navigation', params: { direction: button } }], notes: heldKeys(a) };
      }
      const ours = button === 'left' ? 'left' : button === 'right' ? 'right' : button === 'wheel' ? 'middle' : undefined;
      if (!ours) throw badAction(a, `a click with button ${JSON.stringify(button)} (left, right, wheel, back, forward)`);
      return { steps: [{ action: 'mouse_click', params: { position: at(a, map), button: ours, click_type: 'single' } }], notes: heldKeys(a) };
    }
    case 'double_click':
      return { steps: [{ action: 'mouse_click', params: { position: at(a, map), button: 'left', click_type: 'double' } }], notes: heldKeys(a) };
    case 'scroll': {
      const position = at(a, map);
      const sx = a.scroll_x ?? 0;
      const sy = a.scroll_y ?? 0;
      if (!num(sx) || !num(sy)) throw badAction(a, 'a scroll without numeric scroll_x and scroll_y');
      const steps: ActionStep[] = [];
      const ny = notches(map.scaleY(sy));
      if (ny > 0) steps.push({ action: 'mouse_scroll', params: { position, direction: sy > 0 ? 'down' : 'up', repeat: ny } });
      const nx = notches(map.scaleX(sx));
      if (nx > 0) steps.push({ action: 'mouse_scroll', params: { position, direction: sx > 0 ? 'right' : 'left', repeat: nx } });
      return { steps, notes: heldKeys(a) };
    }
    case 'type':
      if (typeof a.text !== 'string') throw badAction(a, 'a type action without text');
      return { steps: [{ action: 'type_text', params: { text: a.text } }] };
    case 'keypress':
      if (!Array.isArray(a.keys) || a.keys.length === 0) throw badAction(a, 'a keypress without keys');
      return { steps: [{ action: 'press_keys', params: { keys: mapKeys(a.keys as string[]) } }] };
    case 'drag': {
      const path = a.path;
      if (!Array.isArray(path) || path.length < 2) throw badAction(a, 'a drag whose path has fewer than two points');
      const points = path.map((p: unknown) => at({ ...(p as Record<string, unknown>), type: 'drag' }, map));
      const notes: Record<string, unknown> = { ...heldKeys(a) };
      if (points.length > 2) notes.drag_path = points;
      return {
        steps: [{ action: 'mouse_drag', params: { start: points[0]!, end: points[points.length - 1]!, button: 'left' } }],
        notes: Object.keys(notes).length > 0 ? notes : undefined,
      };
    }
    case 'move':
      return { steps: [{ action: 'mouse_move', params: { position: at(a, map) } }], notes: heldKeys(a) };
    case 'wait': {
      const ms = a.ms;
      const seconds = num(ms) && ms >= 0 ? ms / 1000 : DEFAULT_WAIT_SECONDS;
      return { steps: [{ action: 'wait', params: { seconds } }] };
    }
    case 'screenshot':
      return { steps: [] };
    default:
      throw badAction(a, `an action of unknown type ${JSON.stringify(a.type)}`);
  }
}
