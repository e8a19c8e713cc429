/**
 * Key names pressKeys accepts, looked up case-insensitively: X11 keysym names as
 * xdotool spells them (`Return`, `Page_Up`, `KP_Enter`, `Super_L`), browser
 * `key`/`code` names (`ArrowLeft`, `KeyA`, `Digit1`, `NumpadAdd`) and the short
 * forms computer-use models emit (`CTRL`, `ESC`, `PGDN`, `CMD`, `OPTION`).
 */
import { KEYSYM, KEYSYM_F1, KEYSYM_KP_0, type KeysymName } from './keysyms.ts';

/** What one key token means: a key with a fixed keysym, or a character (shift rules apply to characters). */
export type KeyToken = { kind: 'key'; keysym: number; name: string } | { kind: 'char'; ch: string };

/** X11 name → extra aliases (all matched case-insensitively). */
const KEY_ALIASES: Partial<Record<KeysymName, readonly string[]>> = {
  Return: ['enter', 'ret'],
  Escape: ['esc'],
  Tab: [],
  BackSpace: ['back_space', 'bksp'],
  Delete: ['del'],
  Insert: ['ins'],
  Home: [],
  End: [],
  Page_Up: ['pageup', 'pgup', 'prior'],
  Page_Down: ['pagedown', 'pgdn', 'pgdown', 'next'],
  Up: ['arrowup', 'arrow_up', 'uparrow', 'up_arrow'],
  Down: ['arrowdown', 'arrow_down', 'downarrow', 'down_arrow'],
  Left: ['arrowleft', 'arrow_left', 'leftarrow', 'left_arrow'],
  Right: ['arrowright', 'arrow_right', 'rightarrow', 'right_arrow'],
  Caps_Lock: ['capslock', 'caps'],
  Num_Lock: ['numlock'],
  Scroll_Lock: ['scrolllock', 'scrlk'],
  Print: ['printscreen', 'print_screen', 'prtsc', 'prtscr', 'prtscn', 'snapshot'],
  Pause: [],
  Break: [],
  Menu: ['contextmenu', 'context_menu', 'apps'],
  Shift_L: ['shift', 'lshift', 'shiftleft', 'left_shift'],
  Shift_R: ['rshift', 'shiftright', 'right_shift'],
  Control_L: ['ctrl', 'control', 'ctl', 'ctrl_l', 'lctrl', 'controlleft', 'left_ctrl'],
  Control_R: ['ctrl_r', 'rctrl', 'controlright', 'right_ctrl'],
  Alt_L: ['alt', 'lalt', 'altleft', 'left_alt', 'option', 'opt'],
  Alt_R: ['ralt', 'altright', 'right_alt'],
  ISO_Level3_Shift: ['altgr', 'alt_gr', 'altgraph'],
  Super_L: ['meta', 'super', 'win', 'windows', 'lwin', 'cmd', 'command', 'metaleft', 'os'],
  Super_R: ['rwin', 'metaright'],
  Meta_L: [],
  Meta_R: [],
  Hyper_L: [],
  Hyper_R: [],
  Linefeed: [],
  Clear: [],
  Sys_Req: ['sysrq'],
  Begin: [],
  Select: [],
  Execute: [],
  Undo: [],
  Redo: [],
  Find: [],
  Cancel: [],
  Help: [],
  Mode_switch: [],
  KP_Enter: ['numpadenter'],
  KP_Add: ['numpadadd'],
  KP_Subtract: ['numpadsubtract'],
  KP_Multiply: ['numpadmultiply'],
  KP_Divide: ['numpaddivide'],
  KP_Decimal: ['numpaddecimal'],
  KP_Separator: ['numpadcomma'],
  KP_Equal: ['numpadequal'],
  KP_Space: [],
  KP_Tab: [],
  KP_F1: [],
  KP_F2: [],
  KP_F3: [],
  KP_F4: [],
  KP_Home: [],
  KP_Left: [],
  KP_Up: [],
  KP_Right: [],
  KP_Down: [],
  KP_Page_Up: ['kp_prior'],
  KP_Page_Down: ['kp_next'],
  KP_End: [],
  KP_Begin: [],
  KP_Insert: [],
  KP_Delete: [],
  XF86AudioLowerVolume: ['volumedown', 'audiovolumedown'],
  XF86AudioMute: ['volumemute', 'audiovolumemute'],
  XF86AudioRaiseVolume: ['volumeup', 'audiovolumeup'],
  XF86AudioPlay: ['mediaplaypause'],
  XF86AudioStop: ['mediastop'],
  XF86AudioPrev: ['mediatrackprevious'],
  XF86AudioNext: ['mediatracknext'],
  XF86HomePage: ['browserhome'],
  XF86Search: ['browsersearch'],
  XF86Back: ['browserback'],
  XF86Forward: ['browserforward'],
  XF86Refresh: [],
  XF86Reload: ['browserrefresh'],
};

/** Character names: X11 Latin-1 keysym names for ASCII symbols plus common words and browser `code` names. */
const CHAR_NAMES: Readonly<Record<string, readonly string[]>> = {
  ' ': ['space', 'spacebar'],
  '!': ['exclam'],
  '"': ['quotedbl'],
  '#': ['numbersign'],
  $: ['dollar'],
  '%': ['percent'],
  '&': ['ampersand'],
  "'": ['apostrophe', 'quoteright', 'quote'],
  '(': ['parenleft'],
  ')': ['parenright'],
  '*': ['asterisk'],
  '+': ['plus'],
  ',': ['comma'],
  '-': ['minus', 'hyphen', 'dash'],
  '.': ['period', 'dot'],
  '/': ['slash'],
  ':': ['colon'],
  ';': ['semicolon'],
  '<': ['less'],
  '=': ['equal', 'equals'],
  '>': ['greater'],
  '?': ['question'],
  '@': ['at'],
  '[': ['bracketleft'],
  '\\': ['backslash'],
  ']': ['bracketright'],
  '^': ['asciicircum'],
  _: ['underscore'],
  '`': ['grave', 'quoteleft', 'backquote', 'backtick'],
  '{': ['braceleft'],
  '|': ['bar', 'pipe'],
  '}': ['braceright'],
  '~': ['asciitilde', 'tilde'],
};

const TABLE = new Map<string, KeyToken>();
/** Display forms of every accepted name, for error messages and `details.allowed`. */
const DISPLAY_NAMES: string[] = [];

function add(name: string, token: KeyToken): void {
  const key = name.toLowerCase();
  if (TABLE.has(key)) return;
  TABLE.set(key, token);
  DISPLAY_NAMES.push(name);
}

for (const [name, aliases] of Object.entries(KEY_ALIASES) as Array<[KeysymName, readonly string[]]>) {
  const token: KeyToken = { kind: 'key', keysym: KEYSYM[name], name };
  add(name, token);
  for (const a of aliases) add(a, token);
}
for (let n = 1; n <= 35; n++) add(`F${n}`, { kind: 'key', keysym: KEYSYM_F1 + n - 1, name: `F${n}` });
for (let n = 0; n <= 9; n++) {
  const token: KeyToken = { kind: 'key', keysym: KEYSYM_KP_0 + n, name: `KP_${n}` };
  add(`KP_${n}`, token);
  add(`Numpad${n}`, token);
}
for (const [ch, names] of Object.entries(CHAR_NAMES)) {
  for (const n of names) add(n, { kind: 'char', ch });
}
for (let c = 0; c < 26; c++) {
  const ch = String.fromCharCode(0x61 + c);
  add(`Key${ch.toUpperCase()}`, { kind: 'char', ch });
  add(`Key_${ch.toUpperCase()}`, { kind: 'char', ch });
}
for (let d = 0; d <= 9; d++) {
  add(`Digit${d}`, { kind: 'char', ch: String(d) });
  add(`Digit_${d}`, { kind: 'char', ch: String(d) });
}

/**
 * Look up one key name (case-insensitive). Also accepts `0x…` keysym numbers and
 * `U+XXXX` / `UXXXX` Unicode names (as xdotool does). Single characters are not names:
 * the parser handles them.
 */
export function lookupKeyName(name: string): KeyToken | undefined {
  const hit = TABLE.get(name.toLowerCase());
  if (hit) return hit;
  const hex = /^0x([0-9a-f]{1,8})$/i.exec(name);
  if (hex?.[1]) {
    const keysym = Number.parseInt(hex[1], 16);
    if (keysym > 0) return { kind: 'key', keysym, name: `0x${keysym.toString(16)}` };
  }
  const uni = /^U\+?([0-9a-f]{2,6})$/i.exec(name);
  if (uni?.[1]) {
    const cp = Number.parseInt(uni[1], 16);
    if (cp >= 0x20 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) && !(cp >= 0x7f && cp < 0xa0)) {
      return { kind: 'char', ch: String.fromCodePoint(cp) };
    }
  }
  return undefined;
}

/** Every accepted name (display form), then the generated patterns; what an unknown-key error lists as `allowed`. */
export function allowedKeyNames(): string[] {
  return [...DISPLAY_NAMES, 'any single character (a, A, ?, é, 中)', '0x<hex keysym>', 'U+<hex code point>'];
}

/** Every accepted name in display form (suggestions compare them case-insensitively). */
export function knownNames(): readonly string[] {
  return DISPLAY_NAMES;
}

/** A short human summary of the accepted names, for error messages. */
export const KEY_NAMES_SUMMARY =
  'modifiers ctrl, shift, alt (option), meta/super/win/cmd, altgr; ' +
  'enter, tab, esc, space, backspace, delete, insert, home, end, pageup, pagedown, up, down, left, right, ' +
  'F1–F35, capslock, numlock, scrolllock, printscreen, pause, menu; keypad KP_0–KP_9, KP_Enter, KP_Add, …; ' +
  'X11 keysym names (Return, BackSpace, Page_Up, Super_L, Control_R, …); browser names (ArrowLeft, KeyA, Digit1, NumpadAdd); ' +
  'symbol names (plus, minus, comma, period, slash, …); any single character; 0x<keysym> or U+<hex>';
