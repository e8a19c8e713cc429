/**
 * Secrets out of messages and files: a desktop's URLs carry its token in their path
 * (ws://127.0.0.1:P/<token>, http://127.0.0.1:Q/<token>/), and a URL may carry credentials.
 */

/** `url` fit for an error message or a file: scheme, host and port; credentials, path, query and fragment become "…". */
export function redactUrl(url: string | URL): string {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return '(a string that is not a URL)';
  }
  if (u.protocol === 'unix:' || u.protocol === 'file:') return `${u.protocol}//${u.pathname}`;
  const secret = u.username !== '' || u.password !== '';
  const rest = (u.pathname !== '' && u.pathname !== '/') || u.search !== '' || u.hash !== '';
  if (!u.host) return `${u.protocol}…`;
  return `${u.protocol}//${secret ? '…@' : ''}${u.host}${rest ? '/…' : ''}`;
}

/** `text` with the secret parts of `url` (its password, and path segments of 16 or more characters, such as a desktop's token) replaced by "…". */
export function redactSecretsIn(text: string, url: string | URL): string {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return typeof url === 'string' && url.length > 0 ? text.split(url).join('…') : text;
  }
  const secrets = u.pathname.split('/').filter((s) => s.length >= 16);
  if (u.password) secrets.push(u.password, decodeURIComponent(u.password));
  let out = text;
  for (const s of secrets) out = out.split(s).join('…');
  return out;
}
