/** URL matching for the `url` judge: exact, glob (`*` any run of characters, `?` one) or regex. I/O-free. */
import type { JudgeSpec } from './spec.ts';

/** A glob as an anchored RegExp: `*` matches any run of characters (slashes included), `?` one; everything else literally. */
export function globToRegExp(glob: string): RegExp {
  let src = '';
  for (const ch of glob) src += ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^${src}$`);
}

/** Whether `url` matches the url judge's rule, and the rule as text for the evidence. */
export function matchUrl(spec: Extract<JudgeSpec, { type: 'url' }>, url: string): { match: boolean; rule: string } {
  if (spec.exact !== undefined) return { match: url === spec.exact, rule: `exact ${spec.exact}` };
  if (spec.glob !== undefined) return { match: globToRegExp(spec.glob).test(url), rule: `glob ${spec.glob}` };
  return { match: new RegExp(spec.regex!).test(url), rule: `regex ${spec.regex}` };
}
