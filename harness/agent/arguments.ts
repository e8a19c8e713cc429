/**
 * Argument checks of the Agent's primitives. A bad argument is ACTION_ERR_BAD_ARGUMENT (or
 * ACTION_ERR_OFF_SCREEN for a position outside the screen) with
 * `details: { argument, value, allowed }`, and a message that says what to pass instead.
 */
import { VncuaError } from '../errors.ts';

/** A screen position in pixels; page coordinates equal screen coordinates in the kiosk window. */
export interface Point {
  x: number;
  y: number;
}

/** Mouse buttons a click or drag can use. */
export const MOUSE_BUTTONS = ['left', 'middle', 'right'] as const;
/** One of MOUSE_BUTTONS. */
export type MouseButton = (typeof MOUSE_BUTTONS)[number];

/** Click kinds: the number of press/release pairs, seen by pages as click counts 1, 2, 3. */
export const CLICK_TYPES = ['single', 'double', 'triple'] as const;
/** One of CLICK_TYPES. */
export type ClickType = (typeof CLICK_TYPES)[number];

/** Scroll directions. */
export const SCROLL_DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
/** One of SCROLL_DIRECTIONS. */
export type ScrollDirection = (typeof SCROLL_DIRECTIONS)[number];

/** History directions of pageNavigation. */
export const NAVIGATION_DIRECTIONS = ['back', 'forward'] as const;
/** One of NAVIGATION_DIRECTIONS. */
export type NavigationDirection = (typeof NAVIGATION_DIRECTIONS)[number];

/** RFB button-mask bit of each mouse button (X buttons 1, 2, 3). */
export const BUTTON_BITS: Record<MouseButton, number> = { left: 1, middle: 2, right: 4 };
/**
 * How each scroll direction is sent: the wheel button (RFB mask bit of X button 4 = up, 5 = down)
 * and whether Shift is held. Left/right are Shift + wheel up/down, not X buttons 6/7: x11vnc
 * handles only buttons 1-5 and drops 6/7 (measured: no wheel event at all), while Shift + wheel
 * scrolls horizontally on every server (Chromium and GTK apps); pages see a wheel event with
 * shiftKey and the sign in deltaY, and the page scrolls sideways.
 */
export const SCROLL_WHEEL: Record<ScrollDirection, { bit: number; shift: boolean }> = {
  up: { bit: 8, shift: false },
  down: { bit: 16, shift: false },
  left: { bit: 8, shift: true },
  right: { bit: 16, shift: true },
};
/** Press/release pairs per click type. */
export const CLICK_COUNTS: Record<ClickType, number> = { single: 1, double: 2, triple: 3 };

/** Most scroll notches one mouseScroll may send. */
export const MAX_SCROLL_REPEAT = 100;
/** Longest wait() in seconds. */
export const MAX_WAIT_SECONDS = 3600;

/** ACTION_ERR_BAD_ARGUMENT naming the argument and what is allowed. */
export function badArgument(argument: string, value: unknown, allowed: unknown, message: string): VncuaError {
  return new VncuaError('ACTION_ERR_BAD_ARGUMENT', message, { details: { argument, value, allowed } });
}

function show(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/** Check that `value` is one of `allowed`. */
export function checkChoice<T extends string>(argument: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw badArgument(argument, value, [...allowed], `${argument} must be one of ${allowed.map((a) => `"${a}"`).join(', ')}; got ${show(value)}.`);
}

/**
 * Check a position against the screen and return the pixel to send (rounded, inside the screen).
 * Not `{ x, y }` with finite numbers → ACTION_ERR_BAD_ARGUMENT; outside 0 ≤ x < width, 0 ≤ y < height → ACTION_ERR_OFF_SCREEN.
 */
export function checkPosition(argument: string, value: unknown, screen: { width: number; height: number }): Point {
  const p = value as Partial<Point> | null;
  const allowed = { x: [0, screen.width - 1], y: [0, screen.height - 1] };
  if (typeof p !== 'object' || p === null || typeof p.x !== 'number' || typeof p.y !== 'number' || !Number.isFinite(p.x) || !Number.isFinite(p.y)) {
    throw badArgument(argument, value, allowed, `${argument} must be { x, y } with finite numbers of pixels; got ${show(value)}.`);
  }
  if (p.x < 0 || p.y < 0 || p.x >= screen.width || p.y >= screen.height) {
    throw new VncuaError(
      'ACTION_ERR_OFF_SCREEN',
      `${argument} ${show({ x: p.x, y: p.y })} is outside the ${screen.width}x${screen.height} screen; use 0 <= x <= ${screen.width - 1} and 0 <= y <= ${screen.height - 1}.`,
      { details: { argument, value: { x: p.x, y: p.y }, allowed } },
    );
  }
  return { x: Math.min(Math.round(p.x), screen.width - 1), y: Math.min(Math.round(p.y), screen.height - 1) };
}

/** Check the number of scroll notches (an integer 1..MAX_SCROLL_REPEAT). */
export function checkRepeat(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_SCROLL_REPEAT) return value;
  throw badArgument('repeat', value, [1, MAX_SCROLL_REPEAT], `repeat must be a whole number of scroll notches from 1 to ${MAX_SCROLL_REPEAT}; got ${show(value)}.`);
}

/** Check wait()'s seconds (a finite number 0..MAX_WAIT_SECONDS). */
export function checkSeconds(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_WAIT_SECONDS) return value;
  throw badArgument('seconds', value, [0, MAX_WAIT_SECONDS], `seconds must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}; got ${show(value)}.`);
}

/** Check a string argument (keys, text). */
export function checkString(argument: string, value: unknown): string {
  if (typeof value === 'string') return value;
  throw badArgument(argument, value, 'a string', `${argument} must be a string; got ${show(value)}.`);
}

/** Check an options object argument (mouseClick's, mouseDrag's, ...): a plain object. */
export function checkObject(argument: string, value: unknown, keys: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badArgument(argument, value, keys, `${argument} must be an object with ${keys.join(', ')}; got ${show(value)}.`);
  }
  const unknown = Object.keys(value).filter((k) => !keys.includes(k));
  if (unknown.length > 0) {
    throw badArgument(unknown[0]!, (value as Record<string, unknown>)[unknown[0]!], keys, `${argument} takes ${keys.join(', ')}; "${unknown[0]}" is not one of them.`);
  }
  return value as Record<string, unknown>;
}

/**
 * A JSON-safe copy of what a caller passed, for the trace entry of a failed attempt: functions,
 * symbols, bigints and cycles become strings; non-finite numbers become strings too.
 */
export function jsonSafe(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (value === undefined) return null;
  if (typeof value !== 'object') return String(value);
  if (seen.has(value) || depth > 8) return '[cycle or too deep]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => jsonSafe(v, depth + 1, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = jsonSafe(v, depth + 1, seen);
  return out;
}
