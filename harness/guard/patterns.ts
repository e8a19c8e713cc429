/**
 * Domain patterns of the navigation guard (`allowedDomains` / `blockedDomains`), and the matcher that
 * judges one URL against them. Pure: no I/O, no DNS; hosts are compared in the WHATWG URL parser's
 * canonical form (lowercase, IDN as punycode, IPv4 in dotted decimal, IPv6 compressed in brackets).
 *
 * Pattern grammar (a malformed pattern is GUARD_ERR_BAD_PATTERN, naming it):
 *   *                          every URL
 *   example.com                that host, any scheme with a host (http, https, ws, wss, ftp), any port
 *   *.example.com              example.com itself AND every subdomain (a.example.com, a.b.example.com)
 *   example.com:8443           that host on that port only (a scheme's default port counts: https://x = https://x:443)
 *   https://example.com        that host with that scheme only; https://*.example.com, https://* likewise
 *   127.0.0.1, [::1]:8080      IP literals (no wildcard)
 *   file:  data:  https:       every URL of that scheme (`scheme:` alone, or `file://`)
 * A trailing dot and a trailing "/" are ignored; uppercase and Unicode (bücher.de) hosts are normalized.
 *
 * URL rules:
 * - Blocked always wins: a URL matched by any blockedDomains pattern is blocked.
 * - An empty allowedDomains allows everything not blocked; otherwise a URL must match one of its patterns (with
 *   several allow lists, layered as CLI > suite > task, one pattern of each: an inner list only narrows).
 * - `about:`, `data:`, `blob:`, `javascript:` and browser-internal URLs (chrome:, devtools:, ...) never leave the
 *   browser: they are allowed unless a blockedDomains scheme pattern names their scheme (`data:`).
 * - `file:` and other host-less schemes are like a host: allowed when allowedDomains is empty or names the scheme
 *   (`file:`), blocked when blockedDomains does.
 * - The host is the URL's real host: `https://allowed.com@evil.com/` is evil.com (userinfo is ignored).
 */
import { VncuaError } from '../errors.ts';

/** One parsed pattern. */
export interface DomainPattern {
  /** The pattern as given. */
  readonly source: string;
  /** Lowercase scheme without ':' (null: any scheme that has a host). */
  readonly scheme: string | null;
  /** 'any': every URL (of `scheme` if set); 'scheme': every URL of `scheme`; 'host': `host` (and its subdomains if `wildcard`). */
  readonly kind: 'any' | 'scheme' | 'host';
  /** Canonical host (punycode, lowercase, no trailing dot; IPv6 in brackets), for kind 'host'. */
  readonly host: string | null;
  /** `*.host`: the host and its subdomains. */
  readonly wildcard: boolean;
  /** The port the URL must use (null: any). */
  readonly port: number | null;
}

/** Which list a pattern came from. */
export type GuardList = 'allowedDomains' | 'blockedDomains';

/** A compiled policy: both lists parsed. A URL must match a pattern of every allow layer (layers narrow). */
export interface DomainPolicy {
  /** Allow lists, each non-empty; a URL must match one pattern of each (none: everything not blocked). */
  readonly allowed: readonly (readonly DomainPattern[])[];
  readonly blocked: readonly DomainPattern[];
}

/** An allow list, or several that must all allow a URL (outer to inner: CLI, suite, task). */
export type AllowedDomains = readonly string[] | readonly (readonly string[])[];

/** What the matcher says of one URL: allowed, or blocked with the rule that decided it. */
export type GuardVerdict =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** The list that decided: blockedDomains (a pattern matched) or allowedDomains (none of its patterns matched). */
      readonly list: GuardList;
      /** The matching blocked pattern, or null when no allowed pattern matched. */
      readonly pattern: string | null;
      /** One line for traces and observations: `blockedDomains: *.evil.com` or `allowedDomains: no pattern matches`. */
      readonly rule: string;
    };

/** Schemes whose URLs never leave the browser (allowed unless a blocked scheme pattern names them). */
const LOCAL_SCHEMES = new Set(['about', 'data', 'blob', 'javascript', 'chrome', 'chrome-untrusted', 'chrome-extension', 'chrome-search', 'devtools', 'edge']);
/** Schemes whose URLs have a host the host patterns judge, with their default ports. */
const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443, ws: 80, wss: 443, ftp: 21 };

const EXAMPLES = 'valid patterns look like example.com, *.example.com, https://*.example.com, example.com:8443, [::1]:8080 or file:';
const SCHEME = /^[a-z][a-z0-9+.-]*$/;
const LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/;

/** GUARD_ERR_BAD_PATTERN for `pattern` of `list`: one line, naming the pattern, with valid examples. */
function bad(list: GuardList, pattern: string, why: string): VncuaError {
  const shown = JSON.stringify(pattern);
  return new VncuaError('GUARD_ERR_BAD_PATTERN', `${list} pattern ${shown} is not valid: ${why}; ${EXAMPLES}.`, { details: { list, pattern } });
}

/** Parse one pattern (see the file comment); throws GUARD_ERR_BAD_PATTERN. */
export function parseDomainPattern(source: string, list: GuardList = 'allowedDomains'): DomainPattern {
  if (typeof source !== 'string') throw bad(list, String(source), 'a pattern must be a string');
  let rest = source.trim();
  if (rest === '') throw bad(list, source, 'it is empty');
  if (/[\s\\?#@]/.test(rest)) throw bad(list, source, 'it holds whitespace, a backslash, "?", "#" or "@" (a pattern names a host, not a URL with credentials or a query)');
  if (rest === '*') return { source, scheme: null, kind: 'any', host: null, wildcard: false, port: null };
  let scheme: string | null = null;
  const sep = rest.indexOf('://');
  if (sep >= 0) {
    scheme = rest.slice(0, sep).toLowerCase();
    rest = rest.slice(sep + 3);
    if (!SCHEME.test(scheme)) throw bad(list, source, `"${scheme}" is not a scheme`);
    if (rest === '' || rest === '/') {
      // file:// and file:/// name the scheme; https:// alone would too, but say it plainly
      return { source, scheme, kind: 'scheme', host: null, wildcard: false, port: null };
    }
  } else if (/^[a-z][a-z0-9+.-]*:$/i.test(rest)) {
    return { source, scheme: rest.slice(0, -1).toLowerCase(), kind: 'scheme', host: null, wildcard: false, port: null };
  }
  if (rest.endsWith('/')) rest = rest.slice(0, -1);
  if (rest.includes('/')) throw bad(list, source, 'it has a path (patterns match hosts, not paths)');
  if (scheme !== null && !(scheme in DEFAULT_PORTS)) throw bad(list, source, `the ${scheme}: scheme has no host to match (write "${scheme}:" for every ${scheme}: URL)`);
  // host[:port], [v6][:port]
  let hostPart: string;
  let portText: string | null = null;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) throw bad(list, source, 'an IPv6 literal lacks its "]"');
    hostPart = rest.slice(0, close + 1);
    const after = rest.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) throw bad(list, source, 'only ":port" may follow an IPv6 literal');
      portText = after.slice(1);
    }
  } else {
    const colon = rest.lastIndexOf(':');
    if (colon >= 0) {
      hostPart = rest.slice(0, colon);
      portText = rest.slice(colon + 1);
    } else hostPart = rest;
  }
  let port: number | null = null;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw bad(list, source, `"${portText}" is not a port (1..65535)`);
    port = Number(portText);
  }
  if (hostPart === '*') {
    if (port !== null) return { source, scheme, kind: 'host', host: '*', wildcard: true, port };
    return { source, scheme, kind: 'any', host: null, wildcard: false, port: null };
  }
  let wildcard = false;
  if (hostPart.startsWith('*.')) {
    wildcard = true;
    hostPart = hostPart.slice(2);
  }
  if (hostPart.includes('*')) throw bad(list, source, 'a wildcard may only be the whole first label ("*.example.com")');
  const host = canonicalHost(hostPart);
  if (host === null) throw bad(list, source, `"${hostPart}" is not a host name or IP address`);
  if (wildcard && isIpLiteral(host)) throw bad(list, source, 'an IP address cannot take a wildcard');
  return { source, scheme, kind: 'host', host, wildcard, port };
}

/** The canonical form of a host as patterns and URLs are compared (null: not a host). */
function canonicalHost(raw: string): string | null {
  let h = raw;
  if (h.endsWith('.') && !h.startsWith('[')) h = h.slice(0, -1);
  if (h === '' || h.startsWith('.') || h.includes('..')) return null;
  let parsed: string;
  try {
    const u = new URL(`http://${h}/`);
    if (u.username || u.password || u.port || u.pathname !== '/') return null;
    parsed = u.hostname;
  } catch {
    return null;
  }
  if (parsed.endsWith('.')) parsed = parsed.slice(0, -1);
  if (isIpLiteral(parsed)) return parsed;
  if (!parsed.split('.').every((l) => LABEL.test(l))) return null;
  return parsed;
}

function isIpLiteral(host: string): boolean {
  return host.startsWith('[') || /^\d+\.\d+\.\d+\.\d+$/.test(host);
}

/** The allow layers of `allowedDomains` (a flat list is one layer; empty layers dropped). */
export function allowLayers(allowedDomains: AllowedDomains | undefined): string[][] {
  const list = allowedDomains ?? [];
  const layers = list.every((x) => typeof x === 'string') ? [list as readonly string[]] : (list as readonly (readonly string[])[]);
  return layers.filter((l) => l.length > 0).map((l) => [...l]);
}

/** Parse both lists; throws GUARD_ERR_BAD_PATTERN naming the first bad pattern. Null when both are empty (no guard). */
export function compileDomainPolicy(lists: { allowedDomains?: AllowedDomains; blockedDomains?: readonly string[] }): DomainPolicy | null {
  const allowed = allowLayers(lists.allowedDomains).map((l) => l.map((p) => parseDomainPattern(p, 'allowedDomains')));
  const blocked = (lists.blockedDomains ?? []).map((p) => parseDomainPattern(p, 'blockedDomains'));
  if (allowed.length === 0 && blocked.length === 0) return null;
  return { allowed, blocked };
}

/** A URL as the matcher sees it. */
interface UrlParts {
  scheme: string;
  /** Canonical host, '' for host-less URLs. */
  host: string;
  port: number | null;
}

function urlParts(url: string): UrlParts | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const scheme = u.protocol.slice(0, -1);
  let host = u.hostname;
  if (host.endsWith('.')) host = host.slice(0, -1);
  const port = u.port ? Number(u.port) : (DEFAULT_PORTS[scheme] ?? null);
  return { scheme, host, port };
}

function matches(p: DomainPattern, u: UrlParts): boolean {
  if (p.scheme !== null && p.scheme !== u.scheme) return false;
  if (p.kind === 'scheme') return true;
  if (p.kind === 'any') return p.scheme !== null || u.host !== '' || !LOCAL_SCHEMES.has(u.scheme);
  // kind 'host': only URLs that have a host
  if (u.host === '' || !(u.scheme in DEFAULT_PORTS)) return false;
  if (p.port !== null && p.port !== u.port) return false;
  if (p.host === '*') return true;
  return u.host === p.host || (p.wildcard && u.host.endsWith(`.${p.host}`));
}

/** Judge `url` against `policy` (see the file comment): blocked wins; an empty allow list allows the rest. */
export function checkUrl(policy: DomainPolicy, url: string): GuardVerdict {
  const u = urlParts(url);
  // An unparsable URL cannot be loaded by the browser either; say it is not allowed when an allow list exists.
  if (u === null) return policy.allowed.length > 0 ? notAllowed() : { allowed: true };
  for (const p of policy.blocked) {
    // A bare "*" blocks every network URL, not about:blank; naming a local scheme ("data:") blocks it.
    if (p.kind === 'any' && p.scheme === null && LOCAL_SCHEMES.has(u.scheme)) continue;
    if (matches(p, u)) return { allowed: false, list: 'blockedDomains', pattern: p.source, rule: `blockedDomains: ${p.source}` };
  }
  if (LOCAL_SCHEMES.has(u.scheme)) return { allowed: true };
  for (const layer of policy.allowed) if (!layer.some((p) => matches(p, u))) return notAllowed();
  return { allowed: true };
}

function notAllowed(): GuardVerdict {
  return { allowed: false, list: 'allowedDomains', pattern: null, rule: 'allowedDomains: no pattern matches' };
}

/**
 * The effective lists when several layers give them (CLI flags, suite defaults, a task; outer first): each non-empty
 * allowedDomains list is kept as a layer a URL must pass (an inner layer can only narrow an outer one), and
 * blockedDomains is the union of all layers (a block is never lifted).
 */
export function mergeDomainLists(...layers: ReadonlyArray<{ allowedDomains?: AllowedDomains; blockedDomains?: readonly string[] } | undefined>): {
  allowedDomains: string[][];
  blockedDomains: string[];
} {
  const allowed: string[][] = [];
  const blocked: string[] = [];
  for (const l of layers) {
    if (!l) continue;
    allowed.push(...allowLayers(l.allowedDomains));
    for (const b of l.blockedDomains ?? []) if (!blocked.includes(b)) blocked.push(b);
  }
  return { allowedDomains: allowed, blockedDomains: blocked };
}

/** The pattern naming `url`'s origin (`http://127.0.0.1:8080`, `file:`), or null for a URL without one (about:, data:). */
export function originPattern(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const scheme = u.protocol.slice(0, -1);
  if (scheme in DEFAULT_PORTS && u.host) return `${scheme}://${u.host}`;
  if (LOCAL_SCHEMES.has(scheme)) return null;
  return `${scheme}:`;
}

/**
 * The lists a run with start page `url` uses: every allow layer also allows the start page's origin (a suite's
 * static server has an OS-assigned port nobody can name in advance); blocked patterns still win over it.
 */
export function allowStartPage(lists: { allowedDomains: string[][]; blockedDomains: string[] }, url: string | undefined): { allowedDomains: string[][]; blockedDomains: string[] } {
  const origin = url === undefined ? null : originPattern(url);
  if (origin === null) return lists;
  return { allowedDomains: lists.allowedDomains.map((l) => (l.includes(origin) ? l : [...l, origin])), blockedDomains: lists.blockedDomains };
}

/**
 * The Fetch.enable URL patterns (globs: `*` any run of characters, `?` one) that catch every URL the policy could
 * block, so that requests which cannot be blocked are never paused. With an allow list, that is every URL (`*`).
 * With only blocked patterns, each host pattern becomes `*HOST*` (the host as a substring of the canonical URL covers
 * its subdomains, ports, userinfo and a trailing dot; a URL merely mentioning it elsewhere is paused and allowed), or
 * `*HOST:PORT*` for a port that is no scheme's default (canonical URLs always show it), a scheme pattern `SCHEME:*`. Over-matching costs a round trip; under-matching would let a request through.
 */
export function interceptPatterns(policy: DomainPolicy): string[] {
  if (policy.allowed.length > 0) return ['*'];
  const out = new Set<string>();
  for (const p of policy.blocked) {
    if (p.kind === 'any' || p.host === '*') return ['*'];
    if (p.kind === 'scheme') {
      out.add(`${p.scheme}:*`);
      continue;
    }
    // A port that is no scheme's default is always in the canonical URL: narrow to HOST:PORT.
    const port = p.port !== null && !Object.values(DEFAULT_PORTS).includes(p.port) ? `:${p.port}` : '';
    out.add(`*${p.host!.replace(/[*?\\]/g, (c) => `\\${c}`)}${port}*`);
  }
  return [...out];
}
