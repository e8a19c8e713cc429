/**
 * Secret placeholders in typed text: `{{secret:NAME}}` (NAME: letters, digits, `_`, `.`, `-`). An agent (or a model
 * through its adapter) writes the placeholder; the harness types the value. The trace keeps the text as written.
 */
import { VncuaError } from '../errors.ts';

const PLACEHOLDER = /\{\{secret:([A-Za-z0-9_.-]+)\}\}/g;

/** One piece of a text: typed as is, or the value of secret `name`. */
export type TextPart = { kind: 'text'; text: string } | { kind: 'secret'; name: string };

/** True when `text` holds at least one `{{secret:NAME}}`. */
export function hasSecretPlaceholder(text: string): boolean {
  return new RegExp(PLACEHOLDER.source).test(text);
}

/** `text` cut into plain runs and secret placeholders, in order. */
export function splitSecretPlaceholders(text: string): TextPart[] {
  const out: TextPart[] = [];
  let last = 0;
  for (const m of text.matchAll(new RegExp(PLACEHOLDER.source, 'g'))) {
    if (m.index > last) out.push({ kind: 'text', text: text.slice(last, m.index) });
    out.push({ kind: 'secret', name: m[1]! });
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push({ kind: 'text', text: text.slice(last) });
  return out;
}

/** SECRET_ERR_UNKNOWN: the text names a secret the run does not have (lists the names it has, never a value). */
export function unknownSecret(name: string, known: readonly string[]): VncuaError {
  return new VncuaError(
    'SECRET_ERR_UNKNOWN',
    `{{secret:${name}}} names no secret of this run; known: ${known.length ? known.join(', ') : '(none: give the secrets option, a task\'s "secrets" or an auth binding)'}.`,
    { details: { name, known: [...known] } },
  );
}
