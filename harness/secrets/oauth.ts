/**
 * OAuth 2.0 client credentials (RFC 6749 §4.4): POST grant_type=client_credentials to the token URL, the client's id
 * and secret in an HTTP Basic header (§2.3.1), read access_token and expires_in from the JSON answer. A failure is
 * AUTH_ERR_TOKEN_URL naming the binding, the token URL's origin (redacted) and the HTTP status, never a value.
 */
import { timeoutSignal } from '../cancel.ts';
import { VncuaError } from '../errors.ts';
import { redactUrl } from '../redact.ts';
import type { OAuthFetcher } from './auth-bindings.ts';
import { registerSecret } from './registry.ts';

/** How long the token request may take. */
const TOKEN_TIMEOUT_MS = 15_000;
/** A token is renewed this long before it expires. */
const EXPIRY_MARGIN_MS = 30_000;

/** Fetch a client-credentials token (see the file comment). */
export const fetchClientCredentialsToken: OAuthFetcher = async (b, o) => {
  const fail = (why: string, status?: number, cause?: unknown): VncuaError =>
    new VncuaError('AUTH_ERR_TOKEN_URL', `Auth binding ${b.label}: the OAuth token URL ${redactUrl(b.tokenUrl)} ${why}; check tokenUrl and the client credentials.`, {
      cause,
      details: { binding: b.label, tokenUrl: redactUrl(b.tokenUrl), ...(status === undefined ? {} : { status }) },
    });
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (b.scope) body.set('scope', b.scope);
  if (b.audience) body.set('audience', b.audience);
  const basic = Buffer.from(`${encodeURIComponent(b.clientId)}:${encodeURIComponent(b.clientSecret)}`).toString('base64');
  let res: Response;
  try {
    res = await fetch(b.tokenUrl, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal: timeoutSignal(o.signal, TOKEN_TIMEOUT_MS),
    });
  } catch (e) {
    if (o.signal.aborted) throw o.signal.reason;
    throw fail(`could not be reached (${(e as Error & { cause?: { code?: string } })?.cause?.code ?? (e as Error)?.name ?? 'error'})`, undefined, undefined);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw fail(`answered HTTP ${res.status}`, res.status);
  }
  let data: { access_token?: unknown; expires_in?: unknown };
  try {
    data = (await res.json()) as typeof data;
  } catch {
    throw fail('answered something that is not JSON', res.status);
  }
  if (typeof data?.access_token !== 'string' || data.access_token === '') throw fail('answered JSON without an access_token', res.status);
  registerSecret(`${b.label.split(' ')[0]}.access_token`, data.access_token);
  const life = typeof data.expires_in === 'number' && data.expires_in > 0 ? data.expires_in * 1000 : 3600_000;
  return { token: data.access_token, expiresAt: Date.now() + Math.max(0, life - EXPIRY_MARGIN_MS) };
};
