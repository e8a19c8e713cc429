/**
 * Success sentinels and the one small in-page expression ("probe") each compiles to.
 *
 * A probe evaluates in the page's main world and returns, by value,
 * `{ s: [visible, focused], r: boolean, u?: url, m?: snippet }` or `{ s, bad: 'type' | 'threw' | 'selector', t: text }`.
 * `s` is the page's `document.visibilityState === 'visible'` and `document.hasFocus()`, used to
 * pick the active page (see active-page.ts) without a second round trip. When `r` is true the probe
 * also returns the evidence in the same round trip: `u` is `location.href`, `m` what matched (the
 * text around the match, the element's outerHTML, or the expression's value as JSON), both cut short.
 */
import { VncuaError } from '../errors.ts';

/**
 * What counts as success on the active page:
 * - `'default'` — the uitask rule, exactly: the page's HTML contains `>code#1</`;
 * - `{ sentinel }` — the page's HTML contains this string;
 * - `{ selector, visible? }` — `document.querySelector(selector)` matches an element
 *   (with `visible: true`, the element must also have a non-empty box and not be `visibility: hidden`);
 * - `{ expression }` — a JS expression evaluated in the page that yields a boolean (or a Promise of one).
 *
 * "The page's HTML" is `document.documentElement.outerHTML`: what `page.content()` returns, minus the doctype.
 */
export type Sentinel = { sentinel: string } | { selector: string; visible?: boolean } | { expression: string } | 'default';

/** The uitask success marker searched for by the `'default'` sentinel (uitask's act.py: `">code#1</" in page.content()`). */
export const DEFAULT_SENTINEL = '>code#1</';

/** Longest snippet of evidence a probe returns (characters). */
export const SNIPPET_MAX = 240;
/** Characters of context kept on each side of a text match. */
const TEXT_CONTEXT = 40;

/** Which kind of rule matched: an HTML text (`'default'` and `{ sentinel }`), a selector, or an expression. */
export type SentinelRule = 'text' | 'selector' | 'expression';

/** What a check saw when it answered true: the rule, its pattern, the matching snippet and the page's URL. */
export interface ProbeEvidence {
  readonly rule: SentinelRule;
  /** The sentinel text, the selector, or the expression. */
  readonly pattern: string;
  /** Text: the match with ~40 characters each side; selector: the element's outerHTML; expression: JSON of its value (at most SNIPPET_MAX characters). */
  readonly snippet: string;
  /** `location.href` of the page that matched. */
  readonly url: string;
}

/** A compiled sentinel: the expression to evaluate and whether its result may be a Promise. */
export interface Probe {
  /** The JS expression (an IIFE) to evaluate in the page. */
  readonly expression: string;
  /** True for `{ expression }` sentinels: the result may be a Promise to await. */
  readonly awaitPromise: boolean;
  /** Human-readable sentinel, for error messages. */
  readonly label: string;
  /** The kind of rule, for evidence. */
  readonly rule: SentinelRule;
  /** The sentinel text, selector or expression, for evidence. */
  readonly pattern: string;
}

/** What a probe reported, once decoded. */
export interface ProbeResult {
  /** The sentinel's answer on this page. */
  readonly ok: boolean;
  /** `document.visibilityState === 'visible'`. */
  readonly visible: boolean;
  /** `document.hasFocus()`. */
  readonly focused: boolean;
  /** What matched, when `ok` is true. */
  readonly evidence?: ProbeEvidence;
}

/** The visibility/focus part alone, for ranking pages. */
export const STATE_PROBE = `[document.visibilityState === 'visible', document.hasFocus()]`;

function bad(message: string, details: Record<string, unknown>): VncuaError {
  return new VncuaError('CDP_ERR_BAD_SENTINEL', message, { details });
}

/** Validate a sentinel and compile it to a probe; throws CDP_ERR_BAD_SENTINEL for a malformed one. */
export function compileSentinel(sentinel: Sentinel): Probe {
  if (sentinel === 'default') return htmlProbe(DEFAULT_SENTINEL, `default (HTML contains ${JSON.stringify(DEFAULT_SENTINEL)})`);
  if (typeof sentinel !== 'object' || sentinel === null) {
    throw bad(`sentinel must be 'default', { sentinel }, { selector } or { expression }; got ${String(sentinel)}`, { sentinel });
  }
  const keys = ['sentinel', 'selector', 'expression'].filter((k) => k in sentinel);
  if (keys.length !== 1) {
    throw bad(`sentinel must have exactly one of the keys sentinel, selector, expression; got ${JSON.stringify(Object.keys(sentinel))}`, { keys: Object.keys(sentinel) });
  }
  if ('sentinel' in sentinel) {
    const s: unknown = sentinel.sentinel;
    if (typeof s !== 'string' || s.length === 0) throw bad('{ sentinel } must be a non-empty string (an empty one matches every page)', { sentinel: s });
    return htmlProbe(s, `HTML contains ${JSON.stringify(s)}`);
  }
  if ('selector' in sentinel) {
    const s: unknown = sentinel.selector;
    if (typeof s !== 'string' || s.trim().length === 0) throw bad('{ selector } must be a non-empty CSS selector string', { selector: s });
    const visible: unknown = sentinel.visible ?? false;
    if (typeof visible !== 'boolean') throw bad('{ selector, visible } must be a boolean when given', { visible });
    return selectorProbe(s, visible);
  }
  const e: unknown = sentinel.expression;
  if (typeof e !== 'string') throw bad('{ expression } must be a string holding a JS expression', { expression: e });
  // A trailing semicolon is a common slip; the expression is embedded in parentheses.
  const expr = e.trim().replace(/;+\s*$/, '');
  if (expr.length === 0) throw bad('{ expression } must be a non-empty JS expression', { expression: e });
  return expressionProbe(expr);
}

const cut = (v: string) => `String(${v}).slice(0, ${SNIPPET_MAX})`;

function htmlProbe(s: string, label: string): Probe {
  const lit = JSON.stringify(s);
  return {
    expression:
      `(() => { const s = ${STATE_PROBE}; const h = document.documentElement; if (h === null) return { s, r: false }; ` +
      `const t = h.outerHTML; const i = t.indexOf(${lit}); if (i < 0) return { s, r: false }; ` +
      `return { s, r: true, u: location.href, m: ${cut(`t.slice(Math.max(0, i - ${TEXT_CONTEXT}), i + ${s.length + TEXT_CONTEXT})`)} }; })()`,
    awaitPromise: false,
    label,
    rule: 'text',
    pattern: s,
  };
}

function selectorProbe(selector: string, visible: boolean): Probe {
  const lit = JSON.stringify(selector);
  const hit = `{ s, r: true, u: location.href, m: ${cut('el.outerHTML')} }`;
  const check = visible
    ? `const b = el.getBoundingClientRect(); return b.width > 0 && b.height > 0 && getComputedStyle(el).visibility !== 'hidden' ? ${hit} : { s, r: false };`
    : `return ${hit};`;
  return {
    expression:
      `(() => { const s = ${STATE_PROBE}; let el; ` +
      `try { el = document.querySelector(${lit}); } catch (e) { return { s, bad: 'selector', t: String(e && e.message || e) }; } ` +
      `if (el === null) return { s, r: false }; ${check} })()`,
    awaitPromise: false,
    label: `${visible ? 'visible element' : 'element'} matching ${lit}`,
    rule: 'selector',
    pattern: selector,
  };
}

function expressionProbe(expr: string): Probe {
  // The expression is embedded on its own lines so a trailing `//` comment cannot swallow the wrapper.
  const describe =
    `(v) => { let p; try { p = typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v); } catch { p = Object.prototype.toString.call(v); } ` +
    `return (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v) + ' ' + String(p).slice(0, 80); }`;
  return {
    expression:
      `(() => { const s = ${STATE_PROBE}; const d = ${describe}; ` +
      `const out = (v) => v === true ? { s, r: true, u: location.href, m: JSON.stringify(v) } : v === false ? { s, r: false } : { s, bad: 'type', t: d(v) }; ` +
      `const fail = (e) => ({ s, bad: 'threw', t: e && e.stack ? String(e.stack) : String(e) }); ` +
      `let v; try { v = (\n${expr}\n); } catch (e) { return fail(e); } ` +
      `if (v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function') return Promise.resolve(v).then(out, fail); ` +
      `return out(v); })()`,
    awaitPromise: true,
    label: `expression ${JSON.stringify(expr.length > 120 ? `${expr.slice(0, 117)}...` : expr)}`,
    rule: 'expression',
    pattern: expr,
  };
}

/** Decode a probe's by-value result; throws CDP_ERR_BAD_SENTINEL when the page rejected the sentinel. */
export function decodeProbe(probe: Probe, value: unknown): ProbeResult {
  if (typeof value !== 'object' || value === null) {
    throw bad(`the page returned ${String(value)} for ${probe.label}; the page may have replaced built-ins the probe relies on`, { value });
  }
  const v = value as { s?: unknown; r?: unknown; bad?: unknown; t?: unknown; u?: unknown; m?: unknown };
  const state = Array.isArray(v.s) ? v.s : [];
  const visible = state[0] === true;
  const focused = state[1] === true;
  if (v.r === true) {
    const evidence: ProbeEvidence = {
      rule: probe.rule,
      pattern: probe.pattern,
      snippet: typeof v.m === 'string' ? v.m.slice(0, SNIPPET_MAX) : '',
      url: typeof v.u === 'string' ? v.u : '',
    };
    return { ok: true, visible, focused, evidence };
  }
  if (v.r === false) return { ok: false, visible, focused };
  const text = typeof v.t === 'string' ? v.t : String(v.t);
  if (v.bad === 'type') {
    throw bad(`${probe.label} returned ${text}, not a boolean; make it evaluate to true or false`, { returned: text });
  }
  if (v.bad === 'threw') {
    throw bad(`${probe.label} threw in the page: ${text}`, { exception: text });
  }
  if (v.bad === 'selector') {
    throw bad(`${probe.label} is not a valid CSS selector: ${text}`, { exception: text });
  }
  throw bad(`the page returned an unexpected value for ${probe.label}`, { value });
}
