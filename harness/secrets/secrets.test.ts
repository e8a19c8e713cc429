import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { bindingFor, resolveAuthBindings } from './auth-bindings.ts';
import { fetchClientCredentialsToken } from './oauth.ts';
import { hasSecretPlaceholder, splitSecretPlaceholders } from './placeholders.ts';
import { holdsSecret, redactDeep, redactSecrets, registerSecret } from './registry.ts';
import { resolveRunSecrets } from './run-secrets.ts';
import { parseDotenv, secretLookup } from './sources.ts';
import { writeFileAtomic } from '../trace/atomic.ts';
import { readFile } from 'node:fs/promises';

function thrown(f: () => unknown): { code: string; message: string } {
  try {
    f();
  } catch (e) {
    if (!isVncuaError(e)) throw e;
    return { code: e.code, message: e.message };
  }
  throw new Error('did not throw');
}

describe('placeholders', () => {
  it('splits text into plain runs and secret names', () => {
    expect(splitSecretPlaceholders('user {{secret:pw}}\n')).toEqual([
      { kind: 'text', text: 'user ' },
      { kind: 'secret', name: 'pw' },
      { kind: 'text', text: '\n' },
    ]);
    expect(hasSecretPlaceholder('{{secret:a.b-c_1}}')).toBe(true);
    expect(hasSecretPlaceholder('{{secret:}} {{secrets:x}}')).toBe(false);
    // Asking first must not change what splitting finds (a shared global RegExp's lastIndex once did).
    expect(hasSecretPlaceholder('id={{secret:pw}};')).toBe(true);
    expect(splitSecretPlaceholders('id={{secret:pw}};').map((p) => p.kind)).toEqual(['text', 'secret', 'text']);
  });
});

describe('registry', () => {
  it('redacts a value and its encodings, longest first', () => {
    const v = 'Zq8#vL2 pX9/tR4=mK7&wY3';
    registerSecret('reg_test', v);
    const b64 = Buffer.from(v).toString('base64');
    const text = `a ${v} b ${encodeURIComponent(v)} c ${b64} d ${JSON.stringify({ v }).slice(5)}`;
    const out = redactSecrets(text);
    expect(out).not.toContain(v);
    expect(out).not.toContain(encodeURIComponent(v));
    expect(out).not.toContain(b64);
    expect(out.split('{{secret:reg_test}}').length - 1).toBe(4);
    expect(holdsSecret(text)).toBe(true);
    expect(redactDeep({ k: [v], [v]: 1 })).toEqual({ k: ['{{secret:reg_test}}'], '{{secret:reg_test}}': 1 });
  });

  it('writeFileAtomic writes the placeholder, never the value', async () => {
    const v = 'atomic-secret-3fa9c2d1e7';
    registerSecret('atomic_test', v);
    const p = join(mkdtempSync(join(tmpdir(), 'vncua-secret-')), 'f.json');
    await writeFileAtomic(p, JSON.stringify({ text: `x${v}y` }));
    expect(await readFile(p, 'utf8')).toBe('{"text":"x{{secret:atomic_test}}y"}');
  });
});

describe('sources', () => {
  it('reads dotenv and JSON secrets files; the file wins over the environment', () => {
    expect(parseDotenv('# c\nA=1\nexport B="two words"\nC=\'x=y\'\n', 'f')).toEqual({ A: '1', B: 'two words', C: 'x=y' });
    const e = thrown(() => parseDotenv('A=1\nnot a line hunter2\n', 'f.env'));
    expect(e.code).toBe('SECRET_ERR_FILE');
    expect(e.message).toContain('line 2');
    expect(e.message).not.toContain('hunter2');
    const dir = mkdtempSync(join(tmpdir(), 'vncua-secret-'));
    writeFileSync(join(dir, 's.json'), JSON.stringify({ TOK: 'from-file-token' }));
    const look = secretLookup({ secretsFile: join(dir, 's.json'), env: { TOK: 'env', OTHER: 'o' } });
    expect(look('TOK')).toBe('from-file-token');
    expect(look('OTHER')).toBe('o');
    expect(thrown(() => secretLookup({ secretsFile: join(dir, 'missing.env') })).code).toBe('SECRET_ERR_FILE');
  });

  it('refuses a secret value in a task file, and names a missing variable', () => {
    const inline = thrown(() => resolveRunSecrets({ secrets: { pw: 'hunter2-inline' }, allowLiterals: false, where: 'Task t1' }));
    expect(inline.code).toBe('SECRET_ERR_INLINE');
    expect(inline.message).not.toContain('hunter2');
    const missing = thrown(() => resolveRunSecrets({ secrets: { pw: { env: 'NOPE_VAR' } }, env: {}, allowLiterals: false, where: 'Task t1' }));
    expect(missing.code).toBe('SECRET_ERR_MISSING');
    expect(missing.message).toContain('NOPE_VAR');
    const s = resolveRunSecrets({ secrets: { pw: { env: 'PW' } }, env: { PW: 'run-secret-value-1' }, allowLiterals: false, where: 'Task' });
    expect(s.expand('a{{secret:pw}}b')).toEqual([
      { text: 'a', secret: null },
      { text: 'run-secret-value-1', secret: 'pw' },
      { text: 'b', secret: null },
    ]);
    const unknown = thrown(() => s.expand('{{secret:other}}'));
    expect(unknown.code).toBe('SECRET_ERR_UNKNOWN');
    expect(unknown.message).toContain('known: pw');
  });
});

describe('auth bindings', () => {
  const env = { TOK: 'bearer-token-abcdef', U: 'ann', P: 'basic-pass-123456', K: 'api-key-987654', SID: 'cookie-sid-55555', ID: 'client-id', CS: 'client-secret-777' };
  const look = (n: string) => env[n as keyof typeof env];

  it('makes headers for basic, bearer and apiKey, matching domains with the guard grammar', async () => {
    const bs = resolveAuthBindings(
      [
        { domain: '*.example.com', type: 'bearer', tokenEnv: 'TOK' },
        { domain: 'basic.test:8080', type: 'basic', usernameEnv: 'U', passwordEnv: 'P' },
        { domain: 'https://api.test', type: 'apiKey', header: 'X-Key', prefix: 'Key ', keyEnv: 'K' },
        { domain: 'c.test', type: 'cookies', cookies: [{ name: 'sid', valueEnv: 'SID', httpOnly: true }] },
      ],
      look,
    );
    const ctx = { url: '', refresh: false, signal: new AbortController().signal };
    const noToken = async () => {
      throw new Error('unused');
    };
    expect(bindingFor(bs, 'https://a.b.example.com/x')?.label).toBe('auth[0] bearer *.example.com');
    expect(bindingFor(bs, 'https://example.org/')).toBeNull();
    expect(bindingFor(bs, 'http://basic.test:8081/')).toBeNull();
    expect(await bs[0]!.material(ctx, noToken)).toEqual({ headers: { Authorization: 'Bearer bearer-token-abcdef' } });
    expect(await bindingFor(bs, 'http://basic.test:8080/')!.material(ctx, noToken)).toEqual({
      headers: { Authorization: `Basic ${Buffer.from('ann:basic-pass-123456').toString('base64')}` },
    });
    expect(await bindingFor(bs, 'https://api.test/')!.material(ctx, noToken)).toEqual({ headers: { 'X-Key': 'Key api-key-987654' } });
    expect(bindingFor(bs, 'http://api.test/')).toBeNull();
    expect(await bs[3]!.material(ctx, noToken)).toEqual({ cookies: [{ name: 'sid', value: 'cookie-sid-55555', httpOnly: true }] });
    // The Basic header's base64 is redacted too.
    expect(redactSecrets(Buffer.from('ann:basic-pass-123456').toString('base64'))).toBe('{{secret:P}}');
  });

  it('bad bindings: one-line codes naming the binding, never a value', () => {
    const missing = thrown(() => resolveAuthBindings([{ domain: 'x.test', type: 'bearer', tokenEnv: 'NOT_SET_ANYWHERE' }], look));
    expect(missing.code).toBe('AUTH_ERR_SECRET_MISSING');
    expect(missing.message).toBe(
      'Auth binding auth[0] bearer x.test: tokenEnv names NOT_SET_ANYWHERE, which is not set in the environment nor in the secrets file; set it or drop the binding.',
    );
    const inline = thrown(() => resolveAuthBindings([{ domain: 'x.test', type: 'bearer', token: 'literal-token-xyz' }], look));
    expect(inline.code).toBe('SECRET_ERR_INLINE');
    expect(inline.message).not.toContain('literal-token-xyz');
    expect(thrown(() => resolveAuthBindings([{ domain: 'x.test', type: 'magic' }], look)).code).toBe('AUTH_ERR_BAD_BINDING');
    const pattern = thrown(() => resolveAuthBindings([{ domain: 'a.*.test', type: 'bearer', tokenEnv: 'TOK' }], look));
    expect(pattern.code).toBe('AUTH_ERR_BAD_BINDING');
    expect(pattern.message).toContain('auth[0] bearer a.*.test');
    expect(thrown(() => resolveAuthBindings([{ domain: 'x.test', type: 'apiKey', header: 'bad header', keyEnv: 'K' }], look)).code).toBe('AUTH_ERR_BAD_BINDING');
    expect(thrown(() => resolveAuthBindings([{ domain: 'x.test', type: 'custom' }], look)).code).toBe('AUTH_ERR_BAD_BINDING');
    for (const m of [missing, inline]) expect(m.message).not.toMatch(/\n/);
  });
});

describe('OAuth client credentials', () => {
  let server: Server | null = null;
  afterEach(async () => {
    server?.close();
    server = null;
  });

  async function tokenServer(answer: (body: string, auth: string | undefined) => [number, string]): Promise<string> {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const [status, text] = answer(body, req.headers.authorization);
        res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const a = server.address();
    return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/oauth/token?x=1`;
  }

  it('fetches, caches and refreshes a token', async () => {
    let n = 0;
    const url = await tokenServer((body, auth) => {
      n++;
      expect(body).toContain('grant_type=client_credentials');
      expect(auth).toBe(`Basic ${Buffer.from('client-id:client-secret-777').toString('base64')}`);
      return [200, JSON.stringify({ access_token: `oauth-access-${n}-zzzz`, expires_in: 3600 })];
    });
    const [b] = resolveAuthBindings(
      [{ domain: 'o.test', type: 'oauth', tokenUrl: url, clientIdEnv: 'ID', clientSecretEnv: 'CS' }],
      (k) => ({ ID: 'client-id', CS: 'client-secret-777' })[k],
    );
    const signal = new AbortController().signal;
    expect(await b!.material({ url: 'http://o.test/', refresh: false, signal }, fetchClientCredentialsToken)).toEqual({ headers: { Authorization: 'Bearer oauth-access-1-zzzz' } });
    expect(await b!.material({ url: 'http://o.test/', refresh: false, signal }, fetchClientCredentialsToken)).toEqual({ headers: { Authorization: 'Bearer oauth-access-1-zzzz' } });
    expect(n).toBe(1);
    expect(await b!.material({ url: 'http://o.test/', refresh: true, signal }, fetchClientCredentialsToken)).toEqual({ headers: { Authorization: 'Bearer oauth-access-2-zzzz' } });
    expect(redactSecrets('oauth-access-2-zzzz')).not.toContain('oauth-access');
  });

  it('a failing token URL is AUTH_ERR_TOKEN_URL naming the binding, not the secret nor the URL path', async () => {
    const url = await tokenServer(() => [500, '{"error":"client-secret-777"}']);
    const [b] = resolveAuthBindings(
      [{ domain: 'o.test', type: 'oauth', tokenUrl: url, clientIdEnv: 'ID', clientSecretEnv: 'CS' }],
      (k) => ({ ID: 'client-id', CS: 'client-secret-777' })[k],
    );
    const err = await b!.material({ url: 'http://o.test/', refresh: false, signal: new AbortController().signal }, fetchClientCredentialsToken).catch((e) => e);
    expect(err.code).toBe('AUTH_ERR_TOKEN_URL');
    expect(err.message).toMatch(/^Auth binding auth\[0\] oauth o\.test: the OAuth token URL http:\/\/127\.0\.0\.1:\d+\/… answered HTTP 500;/);
    expect(err.message).not.toContain('client-secret');
    expect(err.message).not.toContain('oauth/token');
  });
});
