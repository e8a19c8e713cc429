/**
 * A CDP endpoint's HTTP URLs. A desktop's cdpUrl carries its token as a path prefix
 * (http://127.0.0.1:Q/<token>/), so `json/version` and friends are resolved relative to it,
 * never as absolute paths (which would drop the token and get 403).
 */

/** The URL of `path` (e.g. "json/version", "/json/list") under the CDP endpoint `cdpUrl`, keeping its path prefix. */
export function cdpHttpUrl(cdpUrl: string, path: string): URL {
  const base = new URL(cdpUrl);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return new URL(path.replace(/^\/+/, ''), base);
}
