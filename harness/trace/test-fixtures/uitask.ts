/**
 * Test-only: entries of uitask's execution.json, built the way uitask's `record_action` writes them
 * (computer_use/act.py; shapes in harness/trace/uitask.ts): `{ action, params, task_marked_complete }`,
 * params bound by name with defaults applied, dataclasses as every field in declaration order
 * (MouseClickAction: button, click_type, position; MouseDragAction: button, start, end;
 * ScrollAction: position, direction, repeat), enums as their values, finish's default `params: null`.
 */
import { pythonJson } from '../uitask.ts';

/** One entry of uitask's execution.json. */
export interface UitaskJsonEntry {
  action: string;
  params: Record<string, unknown>;
  task_marked_complete: boolean | null;
}

/** uitask's Position: `{ "x", "y" }`. */
export interface XY {
  x: number;
  y: number;
}

/** What every helper takes: task_marked_complete (default false, what check_task_success gives on a page without the sentinel). */
export interface UitaskEntryOptions {
  done?: boolean | null;
}

function entry(action: string, params: Record<string, unknown>, o: UitaskEntryOptions = {}): UitaskJsonEntry {
  return { action, params, task_marked_complete: o.done === undefined ? false : o.done };
}

/** `mouse_move(Position(x, y))`. */
export function uitaskMove(position: XY, o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('mouse_move', { position: { x: position.x, y: position.y } }, o);
}

/** `mouse_click(MouseClickAction(button, click_type, position))`; `position` null clicks where the pointer is. */
export function uitaskClick(position: XY | null, o: UitaskEntryOptions & { button?: 'left' | 'right'; clickType?: 'single' | 'double' | 'triple' } = {}): UitaskJsonEntry {
  const at = position === null ? null : { x: position.x, y: position.y };
  return entry('mouse_click', { action: { button: o.button ?? 'left', click_type: o.clickType ?? 'single', position: at } }, o);
}

/** `mouse_drag(MouseDragAction(button, start, end))`. */
export function uitaskDrag(start: XY, end: XY, o: UitaskEntryOptions & { button?: 'left' | 'right' } = {}): UitaskJsonEntry {
  return entry('mouse_drag', { action: { button: o.button ?? 'left', start: { x: start.x, y: start.y }, end: { x: end.x, y: end.y } } }, o);
}

/** `mouse_scroll(ScrollAction(position, direction, repeat))` (repeat defaults to 1, as in uitask). */
export function uitaskScroll(position: XY, direction: 'up' | 'down' | 'left' | 'right', repeat = 1, o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('mouse_scroll', { action: { position: { x: position.x, y: position.y }, direction, repeat } }, o);
}

/** `press_keys([...keys])`: every key of every element held down together. */
export function uitaskKeys(keys: string[], o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('press_keys', { keys: [...keys] }, o);
}

/** `type_text(text)`. */
export function uitaskType(text: string, o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('type_text', { text }, o);
}

/** `page_navigation(direction)`. */
export function uitaskNavigate(direction: 'back' | 'forward', o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('page_navigation', { direction }, o);
}

/** `wait(duration)` (seconds). */
export function uitaskWait(duration: number, o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('wait', { duration }, o);
}

/** `finish(params)`; `finish()` records `{ "params": null }`. */
export function uitaskFinish(params: Record<string, unknown> | null = null, o?: UitaskEntryOptions): UitaskJsonEntry {
  return entry('finish', { params }, o);
}

/** The file uitask writes: `json.dump(history, f)` (one line, ", " and ": " separators, ASCII only). */
export function uitaskExecutionJson(entries: UitaskJsonEntry[]): string {
  return pythonJson(entries);
}
