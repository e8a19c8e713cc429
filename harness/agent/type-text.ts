/**
 * typeText that never loses a character silently.
 *
 * Characters on the US keymap (printable ASCII, "\n", "\t") are typed as key events, as always. A
 * character that needs a keysym the server's keymap lacks may be dropped by the server without a word:
 * x0vncserver (TigerVNC's scraping server) drops every keysym its X keymap does not have (é, €, ÿ on a
 * US Xvfb), and Xvnc binds at most 19 new keysyms per server lifetime, then drops the others. Neither
 * says so over RFB. So each such character is typed on its own and checked over CDP, when a cdpUrl is
 * available:
 *   1. read the focused field (value and selection) in an isolated world (harness/cdp/focused-field.ts);
 *   2. type the character, then a Shift press/release as a fence, and wait until the page has received
 *      the fence's release (X delivers events in order: the character was handled before it);
 *   3. read the field again: the character arrived, or nothing changed (it was dropped): then insert it
 *      with CDP `Input.insertText` and check again.
 * The trace entry's meta says which characters took the fallback route (`typed_via:
 * 'keys+cdp_insert_text'`, `cdp_inserted`), and which could not be checked (`unverified`: no cdpUrl, the
 * focus not in a text field of the main frame, or no fence within FENCE_TIMEOUT_MS). A change that is
 * neither (the field changed otherwise) or a failed fallback is ACTION_ERR_TEXT_NOT_DELIVERED naming the
 * characters. A text with no such character costs nothing more.
 */
import type { FieldState, FocusedField } from '../cdp/focused-field.ts';
import { expectedAfterTyping } from '../cdp/focused-field.ts';
import { VncuaError } from '../errors.ts';
import { KEYSYM, isOnUsKeymap, keysymForChar, planTypeText, type KeyStroke } from '../keys/index.ts';
import type { InputDriver } from './input.ts';
import { sleep } from './round-trip.ts';

/** How long the fence after a checked character may take to reach the page. */
export const FENCE_TIMEOUT_MS = 5000;
/** Poll interval while waiting for the fence. */
const FENCE_POLL_MS = 5;

/** True when typing `ch` needs a keysym a US keymap does not have (the server may drop it). */
export function needsNewKeysym(ch: string): boolean {
  const k = keysymForChar(ch);
  return k !== undefined && !isOnUsKeymap(k);
}

/** `text` cut into runs of characters typed as they are, and single characters to check. */
export function splitForChecking(text: string): Array<{ text: string; check: boolean }> {
  const out: Array<{ text: string; check: boolean }> = [];
  let run = '';
  for (const ch of text) {
    if (needsNewKeysym(ch)) {
      if (run) out.push({ text: run, check: false });
      run = '';
      out.push({ text: ch, check: true });
    } else run += ch;
  }
  if (run) out.push({ text: run, check: false });
  return out;
}

/** Did `text` arrive in the field between `before` and `after`? */
function arrived(before: FieldState, after: FieldState, text: string): boolean {
  if (before.kind === 'value' && before.start !== null && after.kind === 'value') return after.value === expectedAfterTyping(before, text).value;
  return after.value.length === before.value.length + text.length && after.value.includes(text);
}

function unchanged(before: FieldState, after: FieldState): boolean {
  return before.kind === after.kind && before.value === after.value;
}

/**
 * Type `text` through `d`, checking over `field` (null: no CDP) every character the server may drop (see the
 * file comment). Returns the meta for the trace entry, or undefined when nothing needed saying.
 */
export async function typeTextChecked(
  d: InputDriver,
  text: string,
  field: () => Promise<FocusedField | null>,
  o: { signal?: AbortSignal | undefined } = {},
): Promise<Record<string, unknown> | undefined> {
  const parts = splitForChecking(text);
  if (!parts.some((p) => p.check)) {
    await d.keys(planTypeText(text, { alreadyMapped: d.mapped }), o);
    return undefined;
  }
  const f = await field();
  const inserted: string[] = [];
  const unverified: string[] = [];
  for (const part of parts) {
    if (!part.check || !f) {
      await d.keys(planTypeText(part.text, { alreadyMapped: d.mapped }), o);
      if (part.check) unverified.push(part.text);
      continue;
    }
    const ch = part.text;
    const before = await f.state();
    const fences = before ? await f.fences() : -1;
    const plan: KeyStroke[] = [...planTypeText(ch, { alreadyMapped: d.mapped }), { keysym: KEYSYM.Shift_L, down: true }, { keysym: KEYSYM.Shift_L, down: false }];
    await d.keys(plan, o);
    if (!before || fences < 0 || !(await waitForFence(f, fences, o.signal))) {
      unverified.push(ch);
      continue;
    }
    const after = await f.state();
    if (after && arrived(before, after, ch)) continue;
    if (!after || !unchanged(before, after)) {
      throw notDelivered(text, [ch], `the focused field changed in another way after typing ${JSON.stringify(ch)}`);
    }
    // Dropped by the server: insert it where the caret is.
    try {
      await f.insertText(ch);
    } catch (cause) {
      throw notDelivered(text, [ch], `the server dropped ${JSON.stringify(ch)} and CDP Input.insertText failed (${(cause as Error)?.message ?? String(cause)})`);
    }
    const fixed = await f.state();
    if (!fixed || !arrived(before, fixed, ch)) throw notDelivered(text, [ch], `the server dropped ${JSON.stringify(ch)} and CDP Input.insertText did not insert it`);
    inserted.push(ch);
  }
  const meta: Record<string, unknown> = {};
  if (inserted.length > 0) {
    meta.typed_via = 'keys+cdp_insert_text';
    meta.cdp_inserted = inserted;
  }
  if (unverified.length > 0) meta.unverified = unverified;
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/** Wait until the page has seen one more Shift release than `from`; false after FENCE_TIMEOUT_MS. */
async function waitForFence(f: FocusedField, from: number, signal?: AbortSignal): Promise<boolean> {
  const end = performance.now() + FENCE_TIMEOUT_MS;
  for (;;) {
    const n = await f.fences();
    if (n < 0) return false;
    if (n > from) return true;
    if (performance.now() > end) return false;
    await sleep(FENCE_POLL_MS, signal);
  }
}

function notDelivered(text: string, chars: string[], why: string): VncuaError {
  return new VncuaError('ACTION_ERR_TEXT_NOT_DELIVERED', `typeText could not deliver ${chars.map((c) => JSON.stringify(c)).join(', ')}: ${why}.`, {
    details: { text, characters: chars },
  });
}
