/**
 * typeText that never loses a character silently.
 *
 * Characters on the US keymap (printable ASCII, "\n", "\t") are typed as key events, as always. A
 * character that needs a keysym the server's keymap lacks may be dropped by the server without a word:
 * x0vncserver (TigerVNC's scraping server) drops every keysym its X keymap does not have (é, €, ÿ on a
 * US Xvfb), and Xvnc binds at most 19 new keysyms per server lifetime, then drops the others. Neither
 * says so over RFB. So each such character is typed on its own and checked over CDP, when a cdpUrl is
 * available:
 *   1. read the focused field in an isolated world (harness/cdp/page-input.ts) once the page has handled
 *      every key sent before (a Shift press/release as a fence: X delivers events in order, so once the page
 *      has seen the fence's release it has handled everything sent before it);
 *   2. type the character and a fence, wait for the fence, read the field again: any change means the key
 *      arrived (the page may transform it); no change means the server dropped it: it is inserted with CDP
 *      `Input.insertText`.
 * The trace entry's meta says which characters took the fallback route (`typed_via:
 * 'keys+cdp_insert_text'`, `cdp_inserted`), which could not be checked (`unverified`: no cdpUrl, the focus not
 * in a text field of the main frame, or no fence within FENCE_TIMEOUT_MS), and which the page refused both ways
 * (`refused_by_page`, e.g. a full maxlength). A fallback that fails is ACTION_ERR_TEXT_NOT_DELIVERED naming the
 * characters. A text with no such character costs nothing more.
 */
import type { FieldState, PageInput } from '../cdp/page-input.ts';
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

function unchanged(before: FieldState, after: FieldState): boolean {
  return before.kind === after.kind && before.value === after.value;
}

/** A Shift press and release: the fence whose release tells that the page has handled every key sent before it. */
const FENCE: KeyStroke[] = [
  { keysym: KEYSYM.Shift_L, down: true },
  { keysym: KEYSYM.Shift_L, down: false },
];

/**
 * Type `text` through `d`, checking over `field` (null: no CDP) every character the server may drop (see the
 * file comment). Returns the meta for the trace entry, or undefined when nothing needed saying.
 */
export async function typeTextChecked(
  d: InputDriver,
  text: string,
  field: () => Promise<PageInput | null>,
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
  const refused: string[] = [];
  let fences = f ? await f.fences() : -1;
  /** The field once the page handled everything sent so far (undefined: not known; null: not a text field). */
  let known: FieldState | null | undefined;
  /** Send `plan` followed by a fence; the field once the page has handled it all (null when that cannot be known). */
  const sendFenced = async (plan: KeyStroke[]): Promise<FieldState | null> => {
    await d.keys([...plan, ...FENCE], o);
    fences = await waitForFence(f!, fences, o.signal);
    return fences < 0 ? null : await f!.state();
  };
  for (const part of parts) {
    if (!part.check || !f) {
      await d.keys(planTypeText(part.text, { alreadyMapped: d.mapped }), o);
      if (part.check) unverified.push(part.text);
      known = undefined;
      continue;
    }
    const ch = part.text;
    // The page may still be handling keys sent earlier (the server has read them, the browser may lag behind).
    if (known === undefined) known = await sendFenced([]);
    const before = known;
    if (!before) {
      await d.keys(planTypeText(ch, { alreadyMapped: d.mapped }), o);
      unverified.push(ch);
      known = undefined;
      continue;
    }
    const after = await sendFenced(planTypeText(ch, { alreadyMapped: d.mapped }));
    if (!after) {
      unverified.push(ch);
      known = undefined;
      continue;
    }
    known = after;
    // Any change means the key reached the page (which may transform what it gets); none means it was dropped.
    if (!unchanged(before, after)) continue;
    try {
      await f.insertText(ch);
    } catch (cause) {
      throw notDelivered(text, [ch], `the server dropped ${JSON.stringify(ch)} and CDP Input.insertText failed (${(cause as Error)?.message ?? String(cause)})`);
    }
    const fixed = await f.state();
    known = fixed ?? undefined;
    if (fixed && !unchanged(before, fixed)) inserted.push(ch);
    else refused.push(ch);
  }
  const meta: Record<string, unknown> = {};
  if (inserted.length > 0) {
    meta.typed_via = 'keys+cdp_insert_text';
    meta.cdp_inserted = inserted;
  }
  if (unverified.length > 0) meta.unverified = unverified;
  if (refused.length > 0) meta.refused_by_page = refused;
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/** Wait until the page has seen more Shift releases than `from`: the new count, or -1 (unreadable, or none within FENCE_TIMEOUT_MS). */
async function waitForFence(f: PageInput, from: number, signal?: AbortSignal): Promise<number> {
  if (from < 0) return -1;
  const end = performance.now() + FENCE_TIMEOUT_MS;
  for (;;) {
    const n = await f.fences();
    if (n < 0 || n > from) return n;
    if (performance.now() > end) return -1;
    await sleep(FENCE_POLL_MS, signal);
  }
}

function notDelivered(text: string, chars: string[], why: string): VncuaError {
  return new VncuaError('ACTION_ERR_TEXT_NOT_DELIVERED', `typeText could not deliver ${chars.map((c) => JSON.stringify(c)).join(', ')}: ${why}.`, {
    details: { text, characters: chars },
  });
}
