/**
 * `--allowed-domains a,b` / `--blocked-domains c` of `vncua run` and `vncua eval`: comma-separated patterns
 * (repeatable), checked at once: a malformed one is GUARD_ERR_BAD_PATTERN naming it (exit 2, nothing started).
 */
import { compileDomainPolicy } from '../harness/guard/patterns.ts';

/** The guard lists given on the command line (absent: none). */
export interface DomainFlags {
  allowedDomains?: string[];
  blockedDomains?: string[];
}

/** Split the flags' values at commas (blanks dropped) and check every pattern; throws GUARD_ERR_BAD_PATTERN. */
export function parseDomainFlags(allowed: readonly string[], blocked: readonly string[]): DomainFlags {
  const split = (values: readonly string[]) =>
    values
      .flatMap((v) => v.split(','))
      .map((p) => p.trim())
      .filter((p) => p !== '');
  const out: DomainFlags = {};
  const a = split(allowed);
  const b = split(blocked);
  compileDomainPolicy({ allowedDomains: a, blockedDomains: b });
  if (a.length > 0) out.allowedDomains = a;
  if (b.length > 0) out.blockedDomains = b;
  return out;
}
