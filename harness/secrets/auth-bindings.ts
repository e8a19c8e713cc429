/**
 * Per-domain authentication bindings: a domain pattern (the navigation guard's grammar, harness/guard/patterns.ts)
 * bound to a method. Secret values are never given in a binding: each `…Env` field names a variable looked up in the
 * secrets file, then the environment (sources.ts). The TS API also takes `custom` bindings with a callback.
 *
 *   { "domain": "*.example.com", "type": "basic",  "username": "ann" | "usernameEnv": "U", "passwordEnv": "P" }
 *   { "domain": "api.example.com", "type": "bearer", "tokenEnv": "EXAMPLE_TOKEN" }
 *   { "domain": "example.com", "type": "apiKey", "header": "X-API-Key", "prefix": "", "keyEnv": "EXAMPLE_KEY" }
 *   { "domain": "example.com", "type": "cookies", "cookies": [{ "name": "sid", "valueEnv": "SID", "path": "/", "httpOnly": true }] }
 *   { "domain": "example.com", "type": "localStorage", "items": [{ "key": "token", "valueEnv": "LS_TOKEN" }] }
 *   { "domain": "example.com", "type": "oauth", "tokenUrl": "https://auth.example.com/token", "clientIdEnv": "ID", "clientSecretEnv": "S", "scope": "read" }
 *   { "domain": "example.com", "type": "custom", "apply": async ({ url, signal, refresh }) => ({ headers, cookies, localStorage }) }   (TS API)
 *
 * A bad binding is AUTH_ERR_BAD_BINDING, a variable that is not set AUTH_ERR_SECRET_MISSING, a value given inline
 * SECRET_ERR_INLINE: each names the binding (`auth[0] bearer *.example.com`), never a value.
 */
import { VncuaError } from '../errors.ts';
import { checkUrl, compileDomainPolicy, type DomainPolicy } from '../guard/patterns.ts';
import { registerSecret, registerSecretForm } from './registry.ts';
import { inlineSecret, type SecretLookup } from './sources.ts';

/** A cookie a binding sets (Network.setCookie fields). */
export interface AuthCookie {
  name: string;
  value: string;
  path?: string;
  secure?: boolean;
  httpOnly?: boolean;
  sameSite?: 'Strict' | 'Lax' | 'None';
}

/** What a binding puts into the browser. */
export interface AuthMaterial {
  /** Headers added to every matching request. */
  headers?: Record<string, string>;
  /** Cookies set for the matching origin before its first request. */
  cookies?: AuthCookie[];
  /** localStorage items set for the matching origin before its scripts run. */
  localStorage?: Record<string, string>;
}

/** What a custom binding's callback is given. */
export interface AuthCallbackContext {
  /** The request that needs the binding. */
  url: string;
  /** True when called again after a 401/403 (refresh what you cache). */
  refresh: boolean;
  signal: AbortSignal;
}

/** A binding as given (task file, config or TS API). */
export type AuthBindingInput = Record<string, unknown> & { domain: string; type: string };

/** A resolved binding: its label, matcher and how it makes its material. */
export interface AuthBinding {
  /** `auth[0] bearer *.example.com`: names it in errors and traces. */
  readonly label: string;
  readonly domain: string;
  readonly type: string;
  readonly policy: DomainPolicy;
  /** The names of the secrets it holds (typeable as {{secret:NAME}}). */
  readonly secretNames: readonly string[];
  /** Its values by secret name. */
  readonly secretValues: ReadonlyMap<string, string>;
  /** The material for a request to `url` (refresh: after a 401/403, drop anything cached). */
  material(ctx: AuthCallbackContext, fetchToken: OAuthFetcher): Promise<AuthMaterial>;
}

/** Fetches an OAuth token: injected so tests and the browser side share one implementation (oauth.ts). */
export type OAuthFetcher = (
  b: { label: string; tokenUrl: string; clientId: string; clientSecret: string; scope?: string | undefined; audience?: string | undefined },
  o: { signal: AbortSignal },
) => Promise<{ token: string; expiresAt: number }>;

const TYPES = ['basic', 'bearer', 'apiKey', 'cookies', 'localStorage', 'oauth', 'custom'] as const;
/** Fields that would carry a secret value inline (refused with SECRET_ERR_INLINE). */
const INLINE = ['password', 'token', 'key', 'apiKey', 'value', 'clientSecret', 'secret', 'accessToken'];
/** The same, inside a cookie or a localStorage item (whose `key` is the item's name, not a secret). */
const INLINE_ITEM = ['value', 'secret', 'token', 'password'];
const SAME_SITE = ['Strict', 'Lax', 'None'];

/** Turn `input` (task file, config or TS API) into resolved bindings, looking each named variable up; see the file comment. */
export function resolveAuthBindings(input: unknown, lookup: SecretLookup): AuthBinding[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) throw bad('auth', 'must be a list of bindings ({ "domain", "type", ... })');
  return input.map((b, i) => resolveOne(b, i, lookup));
}

function bad(label: string, why: string): VncuaError {
  return new VncuaError('AUTH_ERR_BAD_BINDING', `Auth binding ${label}: ${why}.`, { details: { binding: label } });
}

function resolveOne(raw: unknown, i: number, lookup: SecretLookup): AuthBinding {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(`auth[${i}]`, 'must be an object with domain and type');
  const b = raw as Record<string, unknown>;
  const type = typeof b.type === 'string' ? b.type : '';
  const domain = typeof b.domain === 'string' ? b.domain : '';
  const label = `auth[${i}] ${type || '?'} ${domain || '?'}`;
  if (!(TYPES as readonly string[]).includes(type)) throw bad(label, `type must be one of ${TYPES.join(', ')}`);
  if (!domain) throw bad(label, 'domain is missing (a pattern such as example.com or *.example.com)');
  let policy: DomainPolicy;
  try {
    policy = compileDomainPolicy({ blockedDomains: [domain] })!;
  } catch (e) {
    throw bad(label, `domain: ${(e as Error).message}`);
  }
  for (const f of INLINE) if (f in b) throw inlineSecret(`${label} ${f}`);
  const values = new Map<string, string>();
  const need = (field: string): string => needFrom(b, field, label, lookup, values);
  const str = (field: string, dflt?: string): string | undefined => {
    const v = b[field];
    if (v === undefined) return dflt;
    if (typeof v !== 'string') throw bad(label, `${field} must be a string`);
    return v;
  };
  const common = { label, domain, type, policy };
  const done = (material: AuthBinding['material']): AuthBinding => ({ ...common, secretNames: [...values.keys()], secretValues: values, material });
  switch (type) {
    case 'basic': {
      const user = b.usernameEnv !== undefined ? need('usernameEnv') : str('username');
      if (user === undefined) throw bad(label, 'give username or usernameEnv');
      if (user.includes(':')) throw bad(label, 'the username may not contain ":" (HTTP Basic)');
      const password = need('passwordEnv');
      const header = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
      registerSecretForm(String(b.passwordEnv), header.slice(6));
      return done(async () => ({ headers: { Authorization: header } }));
    }
    case 'bearer': {
      const token = need('tokenEnv');
      return done(async () => ({ headers: { Authorization: `Bearer ${token}` } }));
    }
    case 'apiKey': {
      const header = str('header', 'X-API-Key')!;
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header)) throw bad(label, `header "${header}" is not a valid HTTP header name`);
      const prefix = str('prefix', '')!;
      const key = need('keyEnv');
      return done(async () => ({ headers: { [header]: `${prefix}${key}` } }));
    }
    case 'cookies': {
      if (!Array.isArray(b.cookies) || b.cookies.length === 0) throw bad(label, 'cookies must be a non-empty list of { name, valueEnv }');
      const cookies: AuthCookie[] = b.cookies.map((c: unknown, j: number) => {
        if (typeof c !== 'object' || c === null) throw bad(label, `cookies[${j}] must be { name, valueEnv }`);
        const o = c as Record<string, unknown>;
        for (const f of INLINE_ITEM) if (f in o) throw inlineSecret(`${label} cookies[${j}].${f}`);
        if (typeof o.name !== 'string' || !o.name) throw bad(label, `cookies[${j}].name is missing`);
        if (o.sameSite !== undefined && !SAME_SITE.includes(o.sameSite as string)) throw bad(label, `cookies[${j}].sameSite must be Strict, Lax or None`);
        const value = needFrom(o, 'valueEnv', label, lookup, values);
        const out: AuthCookie = { name: o.name, value };
        if (typeof o.path === 'string') out.path = o.path;
        if (typeof o.secure === 'boolean') out.secure = o.secure;
        if (typeof o.httpOnly === 'boolean') out.httpOnly = o.httpOnly;
        if (o.sameSite !== undefined) out.sameSite = o.sameSite as AuthCookie['sameSite'] & string;
        return out;
      });
      return done(async () => ({ cookies }));
    }
    case 'localStorage': {
      if (!Array.isArray(b.items) || b.items.length === 0) throw bad(label, 'items must be a non-empty list of { key, valueEnv }');
      const items: Record<string, string> = {};
      b.items.forEach((c: unknown, j: number) => {
        if (typeof c !== 'object' || c === null) throw bad(label, `items[${j}] must be { key, valueEnv }`);
        const o = c as Record<string, unknown>;
        for (const f of INLINE_ITEM) if (f in o) throw inlineSecret(`${label} items[${j}].${f}`);
        if (typeof o.key !== 'string' || !o.key) throw bad(label, `items[${j}].key is missing`);
        items[o.key] = needFrom(o, 'valueEnv', label, lookup, values);
      });
      return done(async () => ({ localStorage: items }));
    }
    case 'oauth': {
      const tokenUrl = str('tokenUrl');
      if (!tokenUrl || !/^https?:\/\//.test(tokenUrl)) throw bad(label, 'tokenUrl must be an http(s) URL');
      const clientId = need('clientIdEnv');
      const clientSecret = need('clientSecretEnv');
      const scope = str('scope');
      const audience = str('audience');
      let cached: { token: string; expiresAt: number } | null = null;
      return done(async (ctx, fetchToken) => {
        if (ctx.refresh || !cached || cached.expiresAt <= Date.now()) {
          cached = null;
          cached = await fetchToken({ label, tokenUrl, clientId, clientSecret, scope, audience }, { signal: ctx.signal });
        }
        return { headers: { Authorization: `Bearer ${cached.token}` } };
      });
    }
    default: {
      const apply = b.apply;
      if (typeof apply !== 'function') throw bad(label, 'a custom binding needs apply: (ctx) => Promise<{ headers?, cookies?, localStorage? }> (TypeScript API only)');
      return done(async (ctx) => {
        let m: AuthMaterial;
        try {
          m = ((await apply(ctx)) ?? {}) as AuthMaterial;
        } catch (e) {
          throw new VncuaError('AUTH_ERR_CALLBACK', `Auth binding ${label}: its apply callback failed (${e instanceof Error ? e.name : 'error'}).`, {
            cause: e,
            details: { binding: label },
          });
        }
        // What a callback returns is secret too.
        for (const v of Object.values(m.headers ?? {})) registerSecret(`${label.split(' ')[0]}.header`, v.replace(/^(Bearer|Basic)\s+/i, ''));
        for (const c of m.cookies ?? []) registerSecret(`${label.split(' ')[0]}.cookie.${c.name}`, c.value);
        for (const [k, v] of Object.entries(m.localStorage ?? {})) registerSecret(`${label.split(' ')[0]}.localStorage.${k}`, v);
        return m;
      });
    }
  }
}

function needFrom(o: Record<string, unknown>, field: string, label: string, lookup: SecretLookup, values: Map<string, string>): string {
  const name = o[field];
  if (typeof name !== 'string' || name === '') throw bad(label, `${field} (the name of the environment variable holding it) is missing`);
  const v = lookup(name);
  if (v === undefined || v === '') {
    throw new VncuaError(
      'AUTH_ERR_SECRET_MISSING',
      `Auth binding ${label}: ${field} names ${name}, which is not set in the environment nor in the secrets file; set it or drop the binding.`,
      {
        details: { binding: label, field, env: name },
      },
    );
  }
  values.set(name, v);
  registerSecret(name, v);
  return v;
}

/** The first binding whose domain matches `url`, or null. */
export function bindingFor(bindings: readonly AuthBinding[], url: string): AuthBinding | null {
  for (const b of bindings) if (!checkUrl(b.policy, url).allowed) return b;
  return null;
}
