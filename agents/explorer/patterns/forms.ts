/**
 * The forms pattern: a plausible value for a field from its type and its name/id/placeholder (email, number, date,
 * tel, url, password, text...), and the moves that fill it: click then type for a text field, one click for a check
 * box or a radio button, click then Down then Return for a select. Pure: the same field gives the same moves.
 */
import type { SeenTarget } from '../targets.ts';
import { centre } from '../targets.ts';
import type { Move } from './move.ts';

/** Values by what a field asks for: the first rule whose pattern matches the field's type or hint wins. */
const RULES: ReadonlyArray<{ test: RegExp; value: string }> = [
  { test: /email|e-mail/, value: 'test@example.com' },
  { test: /password|passwd|pwd/, value: 'Explorer-Passw0rd!' },
  { test: /\burl\b|website|homepage|link/, value: 'https://example.com' },
  { test: /\btel\b|phone|mobile/, value: '5551234567' },
  { test: /\bdate\b|birthday|dob/, value: '01152024' },
  { test: /zip|postal|postcode/, value: '94107' },
  { test: /number|range|age|qty|quantity|count|amount|price|\bnum\b/, value: '42' },
  { test: /search|query|\bq\b/, value: 'test' },
  { test: /city|town/, value: 'Springfield' },
  { test: /first|given/, value: 'Alice' },
  { test: /last|family|surname/, value: 'Example' },
  { test: /name|user|login/, value: 'Alice Example' },
];

/** A plausible value to type into `t` (a text-like input or a textarea). */
export function fieldValue(t: Pick<SeenTarget, 'kind' | 'inputType' | 'hint'>): string {
  const type = t.inputType ?? '';
  const typed = RULES.find((r) => r.test.test(type));
  if (typed && type !== 'text') return typed.value;
  const hinted = RULES.find((r) => r.test.test(t.hint ?? ''));
  if (hinted) return hinted.value;
  return t.kind === 'textarea' ? 'Hello from the explorer.' : 'test';
}

/** Kinds the forms pattern fills. */
export const FIELD_KINDS: ReadonlySet<string> = new Set(['input', 'textarea', 'select', 'checkbox', 'radio']);

/** Input types that are not typed into (their click is the whole move). */
const CLICK_ONLY = new Set(['checkbox', 'radio', 'file', 'color', 'range', 'submit', 'button', 'reset', 'image']);

/** The moves that fill field `t` (the first one acts on it; the rest continue it). */
export function fillMoves(t: SeenTarget): Move[] {
  const at = centre(t.box);
  const click: Move = { step: { action: 'mouse_click', params: { position: at, button: 'left', click_type: 'single' } }, strategy: 'form.fill', target: t };
  if (t.kind === 'checkbox' || t.kind === 'radio' || CLICK_ONLY.has(t.inputType ?? '') || t.inputType === 'file') {
    return t.inputType === 'file' ? [] : [{ ...click, strategy: 'form.check' }];
  }
  if (t.kind === 'select') {
    return [
      { ...click, strategy: 'form.select' },
      { step: { action: 'press_keys', params: { keys: 'Down' } }, strategy: 'form.select', target: t, continues: true },
      { step: { action: 'press_keys', params: { keys: 'Return' } }, strategy: 'form.select', target: t, continues: true },
    ];
  }
  const moves: Move[] = [click];
  // A field that holds something already: select it first, so the value replaces it.
  if (t.filled) moves.push({ step: { action: 'press_keys', params: { keys: 'ctrl+a' } }, strategy: 'form.fill', target: t, continues: true });
  moves.push({ step: { action: 'type_text', params: { text: fieldValue(t) } }, strategy: 'form.fill', target: t, continues: true });
  return moves;
}
