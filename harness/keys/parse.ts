/**
 * parseKeys: turn a pressKeys string into the keysyms to hold down together.
 *
 * Rules (documented for agents in the error message too):
 * - A chord is key names joined by `+` and/or spaces: "Ctrl+Shift+P", "ctrl + a", "alt f".
 *   A `+` where a key is expected is the plus key: "ctrl++", "ctrl + +", "+".
 * - Modifiers are pressed first (in the order given), then the other keys (in the order
 *   given); the caller releases them in reverse.
 * - The whole string is tried as one name first ("Page_Up", "KP_Enter").
 * - A single character is that exact character: "a", "A" (= Shift + A), "?" (= Shift + ?).
 * - Inside a chord of two or more keys, ASCII letters are case-insensitive ("CTRL+A" = "ctrl+a",
 *   which is Ctrl+A, not Ctrl+Shift+A); write Shift to get it.
 * - When a chord holds Shift, each character key becomes the character its US key types with
 *   Shift ("shift+1" sends `!`, "ctrl+shift+a" sends `A`). Keysym-based servers such as Xvnc
 *   would otherwise release Shift to produce the unshifted keysym.
 * - When a chord without Shift names a character typed with Shift on a US keyboard ("ctrl+plus",
 *   "ctrl+?"), Shift_L is added before it.
 * - One token that is neither a name nor a single character, and has no ASCII letter, is a
 *   sequence of characters pressed one after another: "-12" presses `-`, then `1`, then `2`.
 *   A lettered unknown token ("Retrun", "hello") is an error: use typeText for words.
 */
import { VncuaError } from '../errors.ts';
import { isModifierKeysym, isShiftKeysym, isShiftedAscii, keysymForChar, keysymName, KEYSYM, shiftedCounterpart } from './keysyms.ts';
import { allowedKeyNames, KEY_NAMES_SUMMARY, knownNames, lookupKeyName, type KeyToken } from './names.ts';
import { closestNames } from './suggest.ts';

/** Keys held down together: press `keysyms` in order, release in reverse. `names` are readable names, same order. */
export interface KeyChord {
  keysyms: number[];
  names: string[];
}

/** What a pressKeys string means: one chord, or a sequence of chords pressed one after another. */
export interface KeyCombo {
  kind: 'chord' | 'sequence';
  chords: KeyChord[];
}

/** Parse a pressKeys string; throws ACTION_ERR_UNKNOWN_KEY (with suggestions) or ACTION_ERR_BAD_ARGUMENT. */
export function parseKeys(keys: string): KeyCombo {
  if (typeof keys !== 'string' || keys.length === 0) {
    throw badKeys(keys, 'pressKeys needs a non-empty string such as "Enter", "ctrl+a" or "ctrl+shift+p".');
  }
  const points = [...keys];
  if (points.length === 1) return { kind: 'chord', chords: [singleCharChord(keys, keys)] };
  const trimmed = keys.trim();
  if (trimmed === '') throw badKeys(keys, 'pressKeys got only whitespace; use "space" for the space bar.');
  if ([...trimmed].length === 1) return { kind: 'chord', chords: [singleCharChord(trimmed, keys)] };
  const whole = lookupKeyName(trimmed);
  if (whole) return { kind: 'chord', chords: [buildChord([whole], keys)] };

  const tokens = tokenize(trimmed, keys);
  if (tokens.length === 1) {
    const only = tokens[0] ?? '';
    if (!/[a-z]/i.test(only)) {
      return { kind: 'sequence', chords: [...only].map((ch) => singleCharChord(ch, keys)) };
    }
    throw unknownKey(only, keys);
  }
  const resolved = tokens.map((t): KeyToken => {
    if ([...t].length === 1) return { kind: 'char', ch: t };
    const hit = lookupKeyName(t);
    if (!hit) throw unknownKey(t, keys);
    return hit;
  });
  return { kind: 'chord', chords: [buildChord(resolved, keys)] };
}

/** Split on `+` and whitespace; a `+` where a key is expected is the plus key. */
function tokenize(s: string, original: string): string[] {
  const tokens: string[] = [];
  let expectKey = true;
  let i = 0;
  while (i < s.length) {
    const c = s[i] ?? '';
    if (/\s/.test(c)) {
      i++;
    } else if (c === '+') {
      if (expectKey) tokens.push('+');
      expectKey = !expectKey;
      i++;
    } else {
      let j = i;
      while (j < s.length && !/\s/.test(s[j] ?? '') && s[j] !== '+') j++;
      tokens.push(s.slice(i, j));
      expectKey = false;
      i = j;
    }
  }
  if (expectKey) {
    throw badKeys(original, `pressKeys("${original}") ends with a "+" separator; name the last key (use "plus" or "ctrl++" for the + key).`);
  }
  return tokens;
}

/** One exact character (or \n / \r / \t as Return / Tab) as its own chord. */
function singleCharChord(ch: string, original: string): KeyChord {
  if (ch === '\n' || ch === '\r') return chordOf([KEYSYM.Return]);
  if (ch === '\t') return chordOf([KEYSYM.Tab]);
  return buildChord([{ kind: 'char', ch }], original);
}

/** Apply the modifier-first order and the Shift rules, drop duplicates. */
function buildChord(tokens: KeyToken[], original: string): KeyChord {
  const keyed = tokens.map((t) => (t.kind === 'key' ? t.keysym : undefined));
  const hasShift = keyed.some((k) => k !== undefined && isShiftKeysym(k));
  const modifiers: number[] = [];
  const others: number[] = [];
  let addShift = false;
  for (const t of tokens) {
    if (t.kind === 'key') {
      (isModifierKeysym(t.keysym) ? modifiers : others).push(t.keysym);
      continue;
    }
    let ch = t.ch;
    if (tokens.length > 1 && ch.length === 1 && /[A-Za-z]/.test(ch)) ch = ch.toLowerCase();
    if (hasShift) ch = shiftedCounterpart(ch);
    else if (isShiftedAscii(ch)) addShift = true;
    const keysym = keysymForChar(ch);
    if (keysym === undefined) {
      const cp = ch.codePointAt(0) ?? 0;
      throw badKeys(original, `pressKeys("${original}") contains the control character U+${hex4(cp)}, which has no key; use a key name such as "Enter", "Tab" or "BackSpace".`, cp);
    }
    others.push(keysym);
  }
  if (addShift) modifiers.push(KEYSYM.Shift_L);
  return chordOf([...new Set([...modifiers, ...others])]);
}

function chordOf(keysyms: number[]): KeyChord {
  return { keysyms, names: keysyms.map(keysymName) };
}

function hex4(cp: number): string {
  return cp.toString(16).toUpperCase().padStart(4, '0');
}

function unknownKey(token: string, keys: string): VncuaError {
  const suggestions = closestNames(token, knownNames());
  const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
  return new VncuaError(
    'ACTION_ERR_UNKNOWN_KEY',
    `Unknown key "${token}" in pressKeys("${keys}").${hint} Allowed: ${KEY_NAMES_SUMMARY}. ` +
      'Join keys held together with "+" or spaces (e.g. "ctrl+shift+p"); use typeText to type words.',
    { details: { argument: 'keys', value: keys, token, suggestions, allowed: allowedKeyNames() } },
  );
}

function badKeys(keys: unknown, message: string, codePoint?: number): VncuaError {
  return new VncuaError('ACTION_ERR_BAD_ARGUMENT', message, {
    details: { argument: 'keys', value: keys, ...(codePoint === undefined ? {} : { codePoint }) },
  });
}
