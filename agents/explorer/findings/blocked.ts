/**
 * Blocked navigations from the trace: the navigation guard (harness/agent/domain-guard.ts) puts each request it
 * blocked into an entry's `meta.domain_blocked` ({ url, rule, step, resource_type, at }; result.json counts them as
 * DOMAIN_BLOCKED). The findings monitor sees most of them over CDP (net::ERR_BLOCKED_BY_CLIENT on a page it watches);
 * this adds those it could not see (requests of workers, of a popup closed before it was attached), one finding
 * per URL, without a screenshot (the moment has passed). Free of I/O.
 */
import type { Finding } from '../types.ts';
import { oneLine } from './classify.ts';

/** One item of meta.domain_blocked, as the trace holds it. */
interface BlockedMeta {
  url?: unknown;
  rule?: unknown;
  step?: unknown;
  resource_type?: unknown;
}

/** blocked_navigation findings for the trace's blocked requests whose URL no finding in `known` names yet. */
export function blockedFromTrace(entries: ReadonlyArray<{ meta?: Record<string, unknown> }>, known: readonly Finding[]): Finding[] {
  const seen = new Set(known.filter((f) => f.kind === 'blocked_navigation').map((f) => f.message.replace(/^blocked (navigation|request \([^)]*\)) to /, '')));
  const out = new Map<string, Finding>();
  for (const e of entries) {
    const list = e.meta?.domain_blocked;
    if (!Array.isArray(list)) continue;
    for (const b of list as BlockedMeta[]) {
      if (typeof b.url !== 'string' || seen.has(b.url)) continue;
      const prior = out.get(b.url);
      if (prior) {
        prior.count = (prior.count ?? 1) + 1;
        continue;
      }
      const type = typeof b.resource_type === 'string' ? b.resource_type : 'Other';
      out.set(b.url, {
        kind: 'blocked_navigation',
        step: typeof b.step === 'number' ? b.step : 0,
        url: null,
        message: oneLine(`blocked ${type === 'Document' ? 'navigation' : `request (${type})`} to ${b.url}`),
        excerpt: `DOMAIN_BLOCKED ${b.url}${typeof b.rule === 'string' ? `\n${b.rule}` : ''}`,
      });
    }
  }
  return [...out.values()];
}
