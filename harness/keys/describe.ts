/**
 * The other way round from parse.ts: what a keysym a viewer sent means in our terms. `charOfKeysym`
 * gives the character a key types (for type_text), `keyName` and `chordName` the pressKeys string
 * that presses the same keys again (for press_keys): short modifier names (`ctrl`, `shift`, `alt`,
 * `super`, `altgr`), X11 names from the KEYSYM table (`Return`, `Page_Up`), `F<n>`, `KP_<n>`, a
 * character itself, `plus` / `space` for the two characters that separate keys, `UXXXX` for other
 * blank characters and `0x…` for keysyms with no name. parseKeys(chordName(...)) sends the keysyms
 * the viewer sent (a test checks it).
 */
import { KEYSYM, KEYSYM_KP_0, UNICODE_KEYSYM_BASE, isShiftKeysym, keysymName, unshiftedCounterpart } from './keysyms.ts';

/** Short names of the left-hand modifiers (aliases names.ts accepts); the right-hand ones keep their X11 names. */
const SHORT_MODIFIER: ReadonlyMap<number, string> = new Map([
  [KEYSYM.Control_L, 'ctrl'],
  [KEYSYM.Shift_L, 'shift'],
  [KEYSYM.Alt_L, 'alt'],
  [KEYSYM.Super_L, 'super'],
  [KEYSYM.ISO_Level3_Shift, 'altgr'],
]);

/** Keypad keys that type a character (NumLock on), and that character. */
const KEYPAD_CHARS: ReadonlyMap<number, string> = new Map([
  ...Array.from({ length: 10 }, (_, n) => [KEYSYM_KP_0 + n, String(n)] as const),
  [KEYSYM.KP_Add, '+'],
  [KEYSYM.KP_Subtract, '-'],
  [KEYSYM.KP_Multiply, '*'],
  [KEYSYM.KP_Divide, '/'],
  [KEYSYM.KP_Decimal, '.'],
  [KEYSYM.KP_Equal, '='],
  [KEYSYM.KP_Space, ' '],
]);

/** The character `keysym` types (printable ASCII, Latin-1, Unicode keysyms, the keypad's digits and operators), or undefined for other keys. */
export function charOfKeysym(keysym: number): string | undefined {
  if (keysym >= 0x20 && keysym <= 0x7e) return String.fromCharCode(keysym);
  if (keysym >= 0xa0 && keysym <= 0xff) return String.fromCharCode(keysym);
  const kp = KEYPAD_CHARS.get(keysym);
  if (kp !== undefined) return kp;
  if (keysym > UNICODE_KEYSYM_BASE && keysym <= UNICODE_KEYSYM_BASE + 0x10ffff) {
    const cp = keysym - UNICODE_KEYSYM_BASE;
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0xd800 && cp <= 0xdfff)) return undefined;
    return String.fromCodePoint(cp);
  }
  return undefined;
}

/** The pressKeys name of one key (see the file comment). */
export function keyName(keysym: number): string {
  const short = SHORT_MODIFIER.get(keysym);
  if (short) return short;
  // Keypad keys keep their own names (KP_1, KP_Add): pressKeys would send the main keyboard's key for the character.
  if (!KEYPAD_CHARS.has(keysym)) {
    const ch = charOfKeysym(keysym);
    if (ch !== undefined) return charName(ch);
  }
  // A table name, F<n>, KP_<n> or 0x…: all accepted by parseKeys.
  return keysymName(keysym);
}

/** A character as a pressKeys token: itself, `plus`, `space`, or `UXXXX` for a blank one. */
function charName(ch: string): string {
  if (ch === '+') return 'plus';
  if (ch === ' ') return 'space';
  if (/^\s$/u.test(ch) || ch === '\u00a0') return `U${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  return ch;
}

/**
 * The pressKeys string for `key` pressed while `modifiers` are held (in the order they went down), or for the
 * modifiers alone when `key` is null (a modifier tapped by itself). With Shift held a character is named by its
 * unshifted key (`ctrl+shift+a` for Ctrl+Shift+`A`), since parseKeys shifts it back; letters are lower-case
 * (a chord's letters are case-insensitive).
 */
export function chordName(modifiers: readonly number[], key: number | null): string {
  const parts = modifiers.map(keyName);
  if (key !== null) {
    const shift = modifiers.some(isShiftKeysym);
    const ch = key >= 0x20 && key <= 0x7e ? String.fromCharCode(key) : undefined;
    if (ch !== undefined) {
      let c = shift ? unshiftedCounterpart(ch) : ch;
      // In a chord of two keys or more, letters are case-insensitive; alone, a character is exactly itself.
      if (parts.length > 0 && /[A-Z]/.test(c)) c = c.toLowerCase();
      parts.push(charName(c));
    } else parts.push(keyName(key));
  }
  return [...new Set(parts)].join('+');
}
