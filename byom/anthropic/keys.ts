/**
 * The computer tool's `key` / `hold_key` text (xdotool `key` syntax) → pressKeys strings.
 *
 * xdotool syntax: keysequences separated by spaces are pressed one after another
 * ("ctrl+a BackSpace" is Ctrl+A, then BackSpace); inside a keysequence, X keysym names joined by
 * `+` are held together ("ctrl+shift+t", "alt+Tab", "KP_0"). vncua's parseKeys (harness/keys)
 * already takes X keysym names as xdotool spells them (Return, BackSpace, Page_Up, KP_Enter,
 * Super_L, XF86AudioMute, …), xdotool's aliases ctrl/control/alt/shift/super, symbol names (plus,
 * minus, comma, …) and single characters, all case-insensitively. What differs is translated here
 * (`XDOTOOL_NAMES`, exact and case-sensitive, as X keysym names are):
 * - `meta` is Meta_L for xdotool (parseKeys reads it as Super_L);
 * - `ISO_Left_Tab` (what Shift+Tab sends) is shift+Tab;
 * - X's Latin-1 keysym names (`adiaeresis`, `Eacute`, `ssharp`, `EuroSign`, `sterling`, …) are the
 *   characters they type (parseKeys takes any single character). `hyphen` is left to parseKeys,
 *   which reads it as `-` (in X it is the soft hyphen U+00AD, which no model means).
 * One difference is kept on purpose: an upper-case letter inside a chord is that letter's key
 * ("ctrl+A" is Ctrl+A, as parseKeys reads it), where xdotool would add Shift; models write
 * "ctrl+shift+a" when they mean Shift. A lone "A" is Shift+A in both.
 */
import { parseKeys } from '../../harness/keys/index.ts';

/** X Latin-1 keysym names (0xA0..0xFF, keysym = code point) other than `hyphen`. */
const LATIN1_NAMES: readonly string[] = [
  'nobreakspace',
  'exclamdown',
  'cent',
  'sterling',
  'currency',
  'yen',
  'brokenbar',
  'section',
  'diaeresis',
  'copyright',
  'ordfeminine',
  'guillemotleft',
  'notsign',
  '',
  'registered',
  'macron',
  'degree',
  'plusminus',
  'twosuperior',
  'threesuperior',
  'acute',
  'mu',
  'paragraph',
  'periodcentered',
  'cedilla',
  'onesuperior',
  'masculine',
  'guillemotright',
  'onequarter',
  'onehalf',
  'threequarters',
  'questiondown',
  'Agrave',
  'Aacute',
  'Acircumflex',
  'Atilde',
  'Adiaeresis',
  'Aring',
  'AE',
  'Ccedilla',
  'Egrave',
  'Eacute',
  'Ecircumflex',
  'Ediaeresis',
  'Igrave',
  'Iacute',
  'Icircumflex',
  'Idiaeresis',
  'ETH',
  'Ntilde',
  'Ograve',
  'Oacute',
  'Ocircumflex',
  'Otilde',
  'Odiaeresis',
  'multiply',
  'Oslash',
  'Ugrave',
  'Uacute',
  'Ucircumflex',
  'Udiaeresis',
  'Yacute',
  'THORN',
  'ssharp',
  'agrave',
  'aacute',
  'acircumflex',
  'atilde',
  'adiaeresis',
  'aring',
  'ae',
  'ccedilla',
  'egrave',
  'eacute',
  'ecircumflex',
  'ediaeresis',
  'igrave',
  'iacute',
  'icircumflex',
  'idiaeresis',
  'eth',
  'ntilde',
  'ograve',
  'oacute',
  'ocircumflex',
  'otilde',
  'odiaeresis',
  'division',
  'oslash',
  'ugrave',
  'uacute',
  'ucircumflex',
  'udiaeresis',
  'yacute',
  'thorn',
  'ydiaeresis',
];

/** xdotool key names whose meaning parseKeys does not give them → what to pass to parseKeys instead. */
export const XDOTOOL_NAMES: ReadonlyMap<string, string> = new Map<string, string>([
  ['meta', 'Meta_L'],
  ['Meta', 'Meta_L'],
  ['ISO_Left_Tab', 'shift+Tab'],
  ['EuroSign', '€'],
  ...LATIN1_NAMES.flatMap((name, i): Array<[string, string]> => (name ? [[name, String.fromCodePoint(0xa0 + i)]] : [])),
]);

/** One xdotool keysequence ("ctrl+shift+t") → a pressKeys string. */
function translateSequence(seq: string): string {
  if (seq === '+' || seq.includes('++') || seq.startsWith('+') || seq.endsWith('+')) return seq;
  const names = seq.split('+').map((n) => XDOTOOL_NAMES.get(n) ?? n);
  return names.join('+');
}

/**
 * xdotool `key` text → the pressKeys strings to press one after another. Throws what parseKeys
 * throws (ACTION_ERR_UNKNOWN_KEY with suggestions, ACTION_ERR_BAD_ARGUMENT) for the first
 * keysequence it cannot read, so nothing is pressed when any part is wrong.
 */
export function translateKeys(text: string): string[] {
  const seqs = text
    .trim()
    .split(/\s+/)
    .filter((s) => s !== '');
  const out = seqs.map(translateSequence);
  // A single space or other whitespace is no keysequence for xdotool either: let parseKeys say so.
  if (out.length === 0) out.push(text);
  for (const keys of out) parseKeys(keys);
  return out;
}
