/**
 * X11 keysyms (the numbers an RFB KeyEvent carries) and the US-layout facts the
 * planners rely on. Values come from X11's keysymdef.h / XF86keysym.h.
 */

/** Keysyms of the keys pressKeys/typeText use by name. */
export const KEYSYM = {
  BackSpace: 0xff08,
  Tab: 0xff09,
  Linefeed: 0xff0a,
  Clear: 0xff0b,
  Return: 0xff0d,
  Pause: 0xff13,
  Scroll_Lock: 0xff14,
  Sys_Req: 0xff15,
  Escape: 0xff1b,
  /** X11's VoidSymbol: what a redacted KeyEvent of a secret carries in recordings (recorder/FORMAT.md). */
  VoidSymbol: 0xffffff,
  Delete: 0xffff,
  Home: 0xff50,
  Left: 0xff51,
  Up: 0xff52,
  Right: 0xff53,
  Down: 0xff54,
  Page_Up: 0xff55,
  Page_Down: 0xff56,
  End: 0xff57,
  Begin: 0xff58,
  Select: 0xff60,
  Print: 0xff61,
  Execute: 0xff62,
  Insert: 0xff63,
  Undo: 0xff65,
  Redo: 0xff66,
  Menu: 0xff67,
  Find: 0xff68,
  Cancel: 0xff69,
  Help: 0xff6a,
  Break: 0xff6b,
  Mode_switch: 0xff7e,
  Num_Lock: 0xff7f,
  KP_Space: 0xff80,
  KP_Tab: 0xff89,
  KP_Enter: 0xff8d,
  KP_F1: 0xff91,
  KP_F2: 0xff92,
  KP_F3: 0xff93,
  KP_F4: 0xff94,
  KP_Home: 0xff95,
  KP_Left: 0xff96,
  KP_Up: 0xff97,
  KP_Right: 0xff98,
  KP_Down: 0xff99,
  KP_Page_Up: 0xff9a,
  KP_Page_Down: 0xff9b,
  KP_End: 0xff9c,
  KP_Begin: 0xff9d,
  KP_Insert: 0xff9e,
  KP_Delete: 0xff9f,
  KP_Multiply: 0xffaa,
  KP_Add: 0xffab,
  KP_Separator: 0xffac,
  KP_Subtract: 0xffad,
  KP_Decimal: 0xffae,
  KP_Divide: 0xffaf,
  KP_Equal: 0xffbd,
  Shift_L: 0xffe1,
  Shift_R: 0xffe2,
  Control_L: 0xffe3,
  Control_R: 0xffe4,
  Caps_Lock: 0xffe5,
  Meta_L: 0xffe7,
  Meta_R: 0xffe8,
  Alt_L: 0xffe9,
  Alt_R: 0xffea,
  Super_L: 0xffeb,
  Super_R: 0xffec,
  Hyper_L: 0xffed,
  Hyper_R: 0xffee,
  ISO_Level3_Shift: 0xfe03,
  XF86AudioLowerVolume: 0x1008ff11,
  XF86AudioMute: 0x1008ff12,
  XF86AudioRaiseVolume: 0x1008ff13,
  XF86AudioPlay: 0x1008ff14,
  XF86AudioStop: 0x1008ff15,
  XF86AudioPrev: 0x1008ff16,
  XF86AudioNext: 0x1008ff17,
  XF86HomePage: 0x1008ff18,
  XF86Search: 0x1008ff1b,
  XF86Back: 0x1008ff26,
  XF86Forward: 0x1008ff27,
  XF86Refresh: 0x1008ff29,
  XF86Reload: 0x1008ff73,
} as const;

/** A name in the KEYSYM table. */
export type KeysymName = keyof typeof KEYSYM;

/** First function-key keysym: F1 = 0xffbe, Fn = 0xffbe + n - 1 (X11 defines F1–F35). */
export const KEYSYM_F1 = 0xffbe;
/** KP_0; KP_n = 0xffb0 + n. */
export const KEYSYM_KP_0 = 0xffb0;
/** Unicode keysyms are 0x01000000 + code point (X11 "Uxxxx" keysyms). */
export const UNICODE_KEYSYM_BASE = 0x01000000;

/** The 21 symbols a US keyboard types with Shift, in key order (`1`→`!` ...), with their unshifted key. */
const US_SHIFT_PAIRS: ReadonlyArray<readonly [unshifted: string, shifted: string]> = [
  ['`', '~'],
  ['1', '!'],
  ['2', '@'],
  ['3', '#'],
  ['4', '$'],
  ['5', '%'],
  ['6', '^'],
  ['7', '&'],
  ['8', '*'],
  ['9', '('],
  ['0', ')'],
  ['-', '_'],
  ['=', '+'],
  ['[', '{'],
  [']', '}'],
  ['\\', '|'],
  [';', ':'],
  ["'", '"'],
  [',', '<'],
  ['.', '>'],
  ['/', '?'],
];
const SHIFTED_OF = new Map<string, string>(US_SHIFT_PAIRS);
const UNSHIFTED_OF = new Map<string, string>(US_SHIFT_PAIRS.map(([u, s]) => [s, u]));

/** True for the printable ASCII characters a US keyboard types with Shift: `A`–`Z` and `~!@#$%^&*()_+{}|:"<>?`. */
export function isShiftedAscii(ch: string): boolean {
  return (ch.length === 1 && ch >= 'A' && ch <= 'Z') || UNSHIFTED_OF.has(ch);
}

/** True for one printable ASCII character (space through `~`). */
export function isPrintableAscii(ch: string): boolean {
  return ch.length === 1 && ch >= ' ' && ch <= '~';
}

/** The character the same US key types with Shift (`a`→`A`, `1`→`!`); already-shifted or non-ASCII characters are returned unchanged. */
export function shiftedCounterpart(ch: string): string {
  if (ch.length === 1 && ch >= 'a' && ch <= 'z') return ch.toUpperCase();
  return SHIFTED_OF.get(ch) ?? ch;
}

/** The character the same US key types without Shift (`A`→`a`, `!`→`1`); unshifted or non-ASCII characters are returned unchanged. */
export function unshiftedCounterpart(ch: string): string {
  if (ch.length === 1 && ch >= 'A' && ch <= 'Z') return ch.toLowerCase();
  return UNSHIFTED_OF.get(ch) ?? ch;
}

/**
 * The keysym that produces one character (one Unicode code point): printable ASCII and
 * Latin-1 (U+00A0–U+00FF) use their legacy keysym (= code point), everything else the
 * Unicode keysym 0x01000000 + code point. Control characters give undefined (they have
 * no character keysym; `\n` and `\t` are keys, see typeText).
 */
export function keysymForChar(ch: string): number | undefined {
  const cp = ch.codePointAt(0);
  if (cp === undefined || String.fromCodePoint(cp) !== ch) return undefined;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return undefined;
  if (cp >= 0xd800 && cp <= 0xdfff) return undefined; // lone surrogate
  if (cp <= 0xff) return cp;
  return UNICODE_KEYSYM_BASE + cp;
}

/** The named non-character keysyms present in TigerVNC Xvnc's default (evdev, US) keymap, measured with `xmodmap -pk`. */
const NAMED_ON_US_KEYMAP: ReadonlySet<number> = new Set<number>([
  ...(
    [
      'BackSpace',
      'Tab',
      'Linefeed',
      'Return',
      'Pause',
      'Scroll_Lock',
      'Sys_Req',
      'Escape',
      'Delete',
      'Home',
      'Left',
      'Up',
      'Right',
      'Down',
      'Page_Up',
      'Page_Down',
      'End',
      'Print',
      'Insert',
      'Undo',
      'Redo',
      'Menu',
      'Find',
      'Cancel',
      'Help',
      'Break',
      'Mode_switch',
      'Num_Lock',
      'KP_Enter',
      'KP_Home',
      'KP_Left',
      'KP_Up',
      'KP_Right',
      'KP_Down',
      'KP_Page_Up',
      'KP_Page_Down',
      'KP_End',
      'KP_Begin',
      'KP_Insert',
      'KP_Delete',
      'KP_Multiply',
      'KP_Add',
      'KP_Subtract',
      'KP_Decimal',
      'KP_Divide',
      'KP_Equal',
      'Shift_L',
      'Shift_R',
      'Control_L',
      'Control_R',
      'Caps_Lock',
      'Meta_L',
      'Meta_R',
      'Alt_L',
      'Alt_R',
      'Super_L',
      'Super_R',
      'Hyper_L',
      'ISO_Level3_Shift',
      'XF86AudioLowerVolume',
      'XF86AudioMute',
      'XF86AudioRaiseVolume',
      'XF86AudioPlay',
      'XF86AudioStop',
      'XF86AudioPrev',
      'XF86AudioNext',
      'XF86HomePage',
      'XF86Search',
      'XF86Back',
      'XF86Forward',
      'XF86Reload',
    ] as const
  ).map((n) => KEYSYM[n]),
  ...Array.from({ length: 12 }, (_, i) => KEYSYM_F1 + i),
  ...Array.from({ length: 10 }, (_, i) => KEYSYM_KP_0 + i),
]);

/**
 * True when a US keymap (TigerVNC Xvnc's default) already has a key for `keysym`:
 * printable ASCII, F1–F12, the keypad, modifiers and the usual editing/navigation keys.
 * Any other keysym makes Xvnc add it to a spare keycode on first use (see typeText's priming).
 */
export function isOnUsKeymap(keysym: number): boolean {
  return (keysym >= 0x20 && keysym <= 0x7e) || NAMED_ON_US_KEYMAP.has(keysym);
}

/** True for modifier keysyms (Shift, Control, Alt, Meta, Super, Hyper, AltGr, Mode_switch; not the lock keys). */
export function isModifierKeysym(keysym: number): boolean {
  return (
    (keysym >= KEYSYM.Shift_L && keysym <= KEYSYM.Hyper_R && keysym !== KEYSYM.Caps_Lock && keysym !== 0xffe6) ||
    keysym === KEYSYM.ISO_Level3_Shift ||
    keysym === KEYSYM.Mode_switch
  );
}

/** True for Shift_L / Shift_R. */
export function isShiftKeysym(keysym: number): boolean {
  return keysym === KEYSYM.Shift_L || keysym === KEYSYM.Shift_R;
}

/** A readable name for a keysym: the KEYSYM-table name, `F<n>`, `KP_<n>`, the character itself, or `0x…`. */
export function keysymName(keysym: number): string {
  const named = NAME_OF.get(keysym);
  if (named) return named;
  if (keysym >= KEYSYM_F1 && keysym < KEYSYM_F1 + 35) return `F${keysym - KEYSYM_F1 + 1}`;
  if (keysym >= KEYSYM_KP_0 && keysym <= KEYSYM_KP_0 + 9) return `KP_${keysym - KEYSYM_KP_0}`;
  if (keysym >= 0x20 && keysym <= 0x7e) return String.fromCharCode(keysym);
  if (keysym >= 0xa0 && keysym <= 0xff) return String.fromCharCode(keysym);
  if (keysym > UNICODE_KEYSYM_BASE && keysym <= UNICODE_KEYSYM_BASE + 0x10ffff) {
    return String.fromCodePoint(keysym - UNICODE_KEYSYM_BASE);
  }
  return `0x${keysym.toString(16)}`;
}

const NAME_OF = new Map<number, string>(Object.entries(KEYSYM).map(([n, k]) => [k, n]));
