/**
 * `--allowed-domains a,b` / `--blocked-domains c` of `vncua run` and `vncua eval`: comma-separated patterns
 * (repeatable), checked before anything starts: a malformed one is one line, GUARD_ERR_BAD_PATTERN naming it, exit 2.
 */
import { compileDomainPolicy } from '../harness/guard/patterns.ts';

/** The guard lists given on the command line (absent: none). */
export interface DomainFlags {
  allowedDomains?: string[];
  blockedDomains?: string[];
}

/** Split the flags' values at commas (blanks dropped); checkDomainFlags() checks them. */
export function parseDomainFlags(allowed: readonly string[], blocked: readonly string[]): DomainFlags {
  const split = (values: readonly string[]) =>
    values
      .flatMap((v) => v.split(','))
      .map((p) => p.trim())
      .filter((p) => p !== '');
  const out: DomainFlags = {};
  const a = split(allowed);
  const b = split(blocked);
  if (a.length > 0) out.allowedDomains = a;
  if (b.length > 0) out.blockedDomains = b;
  return out;
}

/** Check every pattern of the flags; throws GUARD_ERR_BAD_PATTERN naming the first bad one. */
export function checkDomainFlags(flags: DomainFlags): void {
  compileDomainPolicy({ allowedDomains: flags.allowedDomains, blockedDomains: flags.blockedDomains });
}
