/**
 * Exact key-event plans for typeText and pressKeys, for an X server with a US layout
 * driven through RFB KeyEvents (TigerVNC Xvnc, x11vnc).
 *
 * Typing rules:
 * - Printable ASCII: its own keysym, press + release. Characters a US keyboard types with
 *   Shift (A–Z and ~!@#$%^&*()_+{}|:"<>?) are wrapped in Shift_L down … Shift_L up, one Shift
 *   press per character. Per-character Shift keeps every character self-contained: the
 *   caller can stop between any two characters (abort, timeout) and no key stays held, and
 *   the server never has to fake Shift (shared/notes/desktop.md saw Xvnc leave Caps Lock on
 *   without it; Xvnc 1.12 here faked Shift correctly, but servers are not required to).
 *   It costs two 8-byte messages per shifted character.
 * - `\n`, `\r` and `\r\n` → one Return; `\t` → Tab. Other control characters (C0, DEL, C1)
 *   and lone surrogates are rejected with ACTION_ERR_BAD_ARGUMENT naming the code point.
 * - Everything else, one keysym per Unicode code point (never per UTF-16 unit): Latin-1
 *   (U+00A0–U+00FF) by its legacy keysym (= code point; a layout that has the key uses it
 *   instead of a spare keycode; both forms typed identically here), the rest as
 *   0x01000000 + code point.
 *   Combining marks, ZWJ, variation selectors and skin-tone modifiers are code points too.
 *
 * Keymap priming (measured on TigerVNC Xvnc 1.12 + Chromium 156): a keysym that is not in the
 * US keymap makes Xvnc bind it to a spare keycode when it is first pressed, and Chromium
 * dropped 3–8 of 18 such first presses per run (it had not reloaded the keymap yet).
 * So before typing, every such keysym is pressed once while Control_L is held (Chromium
 * inserts no text for Ctrl+key), followed by a short pause; the real presses then arrive
 * after the keymap change. Pass `alreadyMapped` with the keysyms primed earlier on the same
 * server to skip them. Xvnc never frees those keycodes: its default keymap has 19 spare
 * keycodes, so at most 19 distinct non-US keysyms (a case pair such as é/É shares one) can
 * be typed per X server lifetime; later ones are dropped by Xvnc ("Failure adding new keysym").
 * The text arrives exactly, but Chromium reports such keys' keydown as key "\0" with an empty
 * code (the priming press too, with ctrlKey): pages see the right input, not a meaningful key.
 */
import { VncuaError } from '../errors.ts';
import type { KeyCombo } from './parse.ts';
import { isOnUsKeymap, isPrintableAscii, isShiftedAscii, keysymForChar, KEYSYM } from './keysyms.ts';

/** One RFB KeyEvent to send. */
export interface KeyEvent {
  keysym: number;
  down: boolean;
}

/** Wait this long before sending the next event (lets the X client reload a changed keymap). */
export interface KeyPause {
  pauseMs: number;
}

/** One step of a plan: a KeyEvent or a pause. */
export type KeyStroke = KeyEvent | KeyPause;

/** Options shared by the planners. */
export interface KeyPlanOptions {
  /** Keysyms already bound on this server by an earlier plan's priming: they are not primed again. */
  alreadyMapped?: ReadonlySet<number>;
  /** Pause after the priming block, in ms (default PRIME_SETTLE_MS). */
  settleMs?: number;
  /** Set false to skip priming entirely (e.g. a server whose keymap already has every keysym). */
  prime?: boolean;
}

/** Default pause after priming; 0 already worked in 2 runs with 19 new keysyms, 50 ms leaves margin. */
export const PRIME_SETTLE_MS = 50;

/** True when the step is a pause rather than a KeyEvent. */
export function isPause(step: KeyStroke): step is KeyPause {
  return 'pauseMs' in step;
}

/** Press and release `keysym`. */
function tap(keysym: number): KeyEvent[] {
  return [
    { keysym, down: true },
    { keysym, down: false },
  ];
}

/** The exact KeyEvents (plus an optional priming block) that type `text` into an X11 app with a US layout. */
export function planTypeText(text: string, options: KeyPlanOptions = {}): KeyStroke[] {
  if (typeof text !== 'string') {
    throw new VncuaError('ACTION_ERR_BAD_ARGUMENT', 'typeText needs a string.', {
      details: { argument: 'text', value: text },
    });
  }
  const body: KeyEvent[] = [];
  let index = 0; // UTF-16 index, for error messages
  const points = [...text];
  for (let i = 0; i < points.length; i++) {
    const ch = points[i] ?? '';
    const at = index;
    index += ch.length;
    if (ch === '\r') {
      if (points[i + 1] === '\n') {
        i++;
        index += 1;
      }
      body.push(...tap(KEYSYM.Return));
    } else if (ch === '\n') {
      body.push(...tap(KEYSYM.Return));
    } else if (ch === '\t') {
      body.push(...tap(KEYSYM.Tab));
    } else if (isPrintableAscii(ch)) {
      const keysym = ch.charCodeAt(0);
      if (isShiftedAscii(ch)) {
        body.push({ keysym: KEYSYM.Shift_L, down: true }, ...tap(keysym), { keysym: KEYSYM.Shift_L, down: false });
      } else {
        body.push(...tap(keysym));
      }
    } else {
      const keysym = keysymForChar(ch);
      if (keysym === undefined) throw untypable(text, ch, at);
      body.push(...tap(keysym));
    }
  }
  const downs = body.filter((e) => e.down).map((e) => e.keysym);
  return [...primingBlock(downs, KEYSYM.Control_L, options), ...body];
}

/**
 * The KeyEvents for a parsed pressKeys combo: each chord's keys pressed in order and released
 * in reverse, chords one after another, preceded by priming for keysyms not on the US keymap
 * (priming holds the first of Control_L, Alt_L, Super_L that the combo does not use).
 */
export function planKeyPress(combo: KeyCombo, options: KeyPlanOptions = {}): KeyStroke[] {
  const body: KeyEvent[] = [];
  for (const chord of combo.chords) {
    for (const keysym of chord.keysyms) body.push({ keysym, down: true });
    for (const keysym of [...chord.keysyms].reverse()) body.push({ keysym, down: false });
  }
  const used = new Set(combo.chords.flatMap((c) => c.keysyms));
  const families: Array<[number, number[]]> = [
    [KEYSYM.Control_L, [KEYSYM.Control_L, KEYSYM.Control_R]],
    [KEYSYM.Alt_L, [KEYSYM.Alt_L, KEYSYM.Alt_R]],
    [KEYSYM.Super_L, [KEYSYM.Super_L, KEYSYM.Super_R]],
  ];
  const primer = families.find(([, members]) => !members.some((m) => used.has(m)))?.[0];
  const prime = primer === undefined ? { ...options, prime: false } : options;
  return [...primingBlock([...used], primer ?? KEYSYM.Control_L, prime), ...body];
}

/** The distinct keysyms among `keysyms` that need a keymap entry (not on the US keymap, not in `alreadyMapped`), first use first. */
export function keysymsToPrime(keysyms: Iterable<number>, alreadyMapped?: ReadonlySet<number>): number[] {
  const out = new Set<number>();
  for (const k of keysyms) if (!isOnUsKeymap(k) && !alreadyMapped?.has(k)) out.add(k);
  return [...out];
}

/** Press each new keysym once while `modifier` is held, then pause so the X client reloads its keymap. */
function primingBlock(keysyms: number[], modifier: number, options: KeyPlanOptions): KeyStroke[] {
  if (options.prime === false) return [];
  const settle = options.settleMs ?? PRIME_SETTLE_MS;
  if (!Number.isFinite(settle) || settle < 0) {
    throw new VncuaError('ACTION_ERR_BAD_ARGUMENT', `settleMs must be a finite number ≥ 0, got ${String(settle)}.`, {
      details: { argument: 'settleMs', value: settle },
    });
  }
  const fresh = keysymsToPrime(keysyms, options.alreadyMapped);
  if (fresh.length === 0) return [];
  const out: KeyStroke[] = [];
  for (const k of fresh) {
    out.push({ keysym: modifier, down: true }, ...tap(k), { keysym: modifier, down: false });
  }
  if (settle > 0) out.push({ pauseMs: settle });
  return out;
}

function untypable(text: string, ch: string, index: number): VncuaError {
  const cp = ch.codePointAt(0) ?? 0;
  const u = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const what = cp >= 0xd800 && cp <= 0xdfff ? 'a lone surrogate (broken UTF-16)' : 'a control character';
  return new VncuaError(
    'ACTION_ERR_BAD_ARGUMENT',
    `typeText text contains ${what} ${u} at index ${index}; only printable characters, "\\n", "\\r" and "\\t" can be typed. ` +
      'Remove it, or use pressKeys for keys such as "BackSpace" or "Escape".',
    { details: { argument: 'text', index, codePoint: cp, length: text.length } },
  );
}
