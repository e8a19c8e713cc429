/**
 * Where the HTTP planner's bearer token comes from: a static token, or the OAuth2 client
 * credentials grant against `authUrl`, with the token cached on disk for every process of the
 * user (default `$XDG_CACHE_HOME/vncua/tokens.json`, else `~/.cache/vncua/tokens.json`).
 *
 * Token request: `POST authUrl` with `application/x-www-form-urlencoded` body
 * `grant_type=client_credentials&client_id=…&client_secret=…[&scope=…]`; answer
 * `{ "access_token": "…", "expires_in": 3600, "token_type": "Bearer" }` (expires_in optional,
 * default 3600 s). 400/401/403 → MODEL_ERR_AUTH at once; 5xx, 429, bad JSON, timeouts and
 * connection errors are retried (retry.ts).
 *
 * Cache file (mode 0600, in a 0700 directory, replaced atomically by rename):
 * `{ "version": 1, "tokens": { "<authUrl> <clientId> <scope>": { "access_token", "expires_at" (epoch ms), "obtained_at" } } }`.
 * Every read-then-fetch-then-write runs under a lock file beside it (lock.ts), so processes racing
 * for a token make one request between them; the others read what it wrote. A token is reused
 * until `expirySkewMs` (60 s) before it expires; after a 401, `renew()` fetches a new one unless
 * another process already replaced the rejected one in the cache.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';
import { withFileLock } from './lock.ts';
import { httpUrl, parseOptions } from '../options.ts';
import { parseRetryAfter, retryPolicy, withRetries, type Attempt, type RetryPolicy } from './retry.ts';
import { httpRequest } from './transport.ts';

/** A source of bearer tokens for the planner. */
export interface TokenSource {
  /** The token to send now. */
  token(signal?: AbortSignal): Promise<string>;
  /** A new token after the server rejected `rejected` with 401; null when this source cannot renew. */
  renew(rejected: string, signal?: AbortSignal): Promise<string | null>;
}

/** A fixed token (VNCUA_PLANNER_TOKEN): sent as is, never renewed. */
export class StaticTokenSource implements TokenSource {
  constructor(readonly value: string) {}
  async token(): Promise<string> {
    return this.value;
  }
  async renew(): Promise<string | null> {
    return null;
  }
}

/** Options of the client credentials grant. */
export interface ClientCredentialsOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  /** The token cache file; null for no disk cache (default: defaultTokenCacheFile()). */
  cacheFile?: string | null;
  /** Timeout of each token request in ms (default 30 000). */
  requestTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Refresh a token this long before it expires (default 60 000 ms). */
  expirySkewMs?: number;
  /** Longest wait for the cache lock before fetching without it (default 30 000 ms). */
  lockTimeoutMs?: number;
  /** Jitter source of the backoff (tests). */
  random?: () => number;
}

/** A cached token. */
export interface CachedToken {
  access_token: string;
  /** Epoch ms. */
  expires_at: number;
  /** Epoch ms. */
  obtained_at: number;
}

interface CacheFile {
  version: 1;
  tokens: Record<string, CachedToken>;
}

/** The default token cache file: `$XDG_CACHE_HOME/vncua/tokens.json`, else `~/.cache/vncua/tokens.json`. */
export function defaultTokenCacheFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'vncua', 'tokens.json');
}

async function readCache(file: string): Promise<CacheFile> {
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as Partial<CacheFile>;
    if (v && v.version === 1 && typeof v.tokens === 'object' && v.tokens !== null) return v as CacheFile;
  } catch {
    // missing or damaged: start afresh
  }
  return { version: 1, tokens: {} };
}

async function writeCache(file: string, data: CacheFile): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, file);
}

/** The OAuth2 client credentials grant, with the shared on-disk cache. */
export class ClientCredentialsSource implements TokenSource {
  readonly #o: ClientCredentialsOptions;
  readonly #retry: RetryPolicy;
  readonly #key: string;
  readonly #cacheFile: string | null;
  #current: CachedToken | null = null;
  /** Token requests this source made (not counting tokens read from the cache). */
  fetches = 0;

  constructor(options: ClientCredentialsOptions) {
    this.#o = options;
    this.#retry = retryPolicy(options.retry);
    this.#key = `${options.authUrl} ${options.clientId} ${options.scope ?? ''}`;
    this.#cacheFile = options.cacheFile === undefined ? defaultTokenCacheFile() : options.cacheFile;
    parseOptions(z.object({ authUrl: httpUrl('must be an http:// or https:// URL') }), { authUrl: options.authUrl }, 'ClientCredentialsSource');
  }

  #valid(t: CachedToken | null | undefined): t is CachedToken {
    return !!t && typeof t.access_token === 'string' && t.expires_at - (this.#o.expirySkewMs ?? 60_000) > Date.now();
  }

  async token(signal?: AbortSignal): Promise<string> {
    if (!this.#valid(this.#current)) this.#current = await this.#obtain(null, signal);
    return this.#current.access_token;
  }

  async renew(rejected: string, signal?: AbortSignal): Promise<string | null> {
    this.#current = await this.#obtain(rejected, signal);
    return this.#current.access_token;
  }

  /** A valid token other than `rejected`: from the cache if another process put one there, else fetched (and cached). */
  async #obtain(rejected: string | null, signal?: AbortSignal): Promise<CachedToken> {
    const file = this.#cacheFile;
    if (file === null) return this.#fetch(signal);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    const out = await withFileLock(
      `${file}.lock`,
      async () => {
        const cache = await readCache(file);
        const hit = cache.tokens[this.#key];
        if (this.#valid(hit) && hit.access_token !== rejected) return hit;
        const fresh = await this.#fetch(signal);
        for (const [k, t] of Object.entries(cache.tokens)) if (!(t && t.expires_at > Date.now())) delete cache.tokens[k];
        cache.tokens[this.#key] = fresh;
        try {
          await writeCache(file, cache);
        } catch {
          // The token is good even if it could not be cached.
        }
        return fresh;
      },
      { signal, timeoutMs: this.#o.lockTimeoutMs ?? 30_000 },
    );
    return out.value;
  }

  /** One client credentials request (with retries). */
  async #fetch(signal?: AbortSignal): Promise<CachedToken> {
    const url = new URL(this.#o.authUrl);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: this.#o.clientId, client_secret: this.#o.clientSecret });
    if (this.#o.scope) form.set('scope', this.#o.scope);
    const { value } = await withRetries(
      async (): Promise<Attempt<CachedToken>> => {
        const res = await httpRequest(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form.toString(),
          timeoutMs: this.#o.requestTimeoutMs ?? 30_000,
          signal,
        });
        this.fetches++;
        const where = `The token endpoint ${url.origin}${url.pathname}`;
        if (res.status === 400 || res.status === 401 || res.status === 403) {
          return {
            ok: false,
            retryable: false,
            status: res.status,
            error: new VncuaError(
              'MODEL_ERR_AUTH',
              `${where} rejected the client credentials (HTTP ${res.status}); check clientId/clientSecret (VNCUA_PLANNER_CLIENT_ID / VNCUA_PLANNER_CLIENT_SECRET).`,
              { details: { url: url.href, status: res.status } },
            ),
          };
        }
        if (res.status === 429 || res.status >= 500) {
          const code = res.status === 429 ? 'MODEL_ERR_RATE_LIMITED' : 'MODEL_ERR_SERVER';
          return {
            ok: false,
            retryable: true,
            status: res.status,
            retryAfterMs: parseRetryAfter(res.headers['retry-after']),
            error: new VncuaError(code, `${where} answered HTTP ${res.status}.`, { details: { url: url.href, status: res.status } }),
          };
        }
        if (res.status < 200 || res.status >= 300) {
          return {
            ok: false,
            retryable: false,
            status: res.status,
            error: new VncuaError('MODEL_ERR_REQUEST', `${where} answered HTTP ${res.status}; check authUrl.`, { details: { url: url.href, status: res.status } }),
          };
        }
        let body: { access_token?: unknown; expires_in?: unknown };
        try {
          body = JSON.parse(res.body) as typeof body;
        } catch {
          return {
            ok: false,
            retryable: true,
            status: res.status,
            error: new VncuaError('MODEL_ERR_BAD_RESPONSE', `${where} answered with a body that is not JSON.`, { details: { url: url.href, body: res.body.slice(0, 200) } }),
          };
        }
        if (typeof body?.access_token !== 'string' || body.access_token === '') {
          return {
            ok: false,
            retryable: false,
            status: res.status,
            error: new VncuaError('MODEL_ERR_BAD_RESPONSE', `${where} answered without an access_token string.`, { details: { url: url.href } }),
          };
        }
        const ttl = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
        const now = Date.now();
        return { ok: true, value: { access_token: body.access_token, expires_at: now + ttl * 1000, obtained_at: now } };
      },
      this.#retry,
      { signal, random: this.#o.random },
    );
    return value;
  }
}
