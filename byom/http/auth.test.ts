/**
 * Planner tokens: the client credentials grant, the on-disk cache shared by processes (two child
 * processes racing make one token request), expiry, renewal after a 401, and rejected credentials.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientCredentialsSource, defaultTokenCacheFile } from './auth.ts';
import { startTokenServer } from './test-helpers/servers.ts';

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) {
    try {
      await c();
    } catch {
      // keep closing
    }
  }
});
async function setup(options: Parameters<typeof startTokenServer>[0] = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-tokens-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  const server = await startTokenServer(options);
  closers.push(() => server.close());
  const cacheFile = join(dir, 'sub', 'tokens.json');
  const source = () =>
    new ClientCredentialsSource({ authUrl: `${server.url}oauth/token`, clientId: 'id', clientSecret: 'secret', cacheFile, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
  return { dir, server, cacheFile, source };
}

describe('ClientCredentialsSource', () => {
  it('fetches once, caches on disk (0600) and a second source reuses the cached token', async () => {
    const { server, cacheFile, source } = await setup();
    const a = source();
    expect(await a.token()).toBe('tok-1');
    expect(await a.token()).toBe('tok-1');
    const b = source();
    expect(await b.token()).toBe('tok-1');
    expect(server.fetches).toBe(1);
    expect([a.fetches, b.fetches]).toEqual([1, 0]);
    expect((await stat(cacheFile)).mode & 0o777).toBe(0o600);
    const data = JSON.parse(await readFile(cacheFile, 'utf8'));
    expect(data.version).toBe(1);
    expect(Object.values(data.tokens)).toEqual([expect.objectContaining({ access_token: 'tok-1' })]);
    expect(JSON.stringify(data)).not.toContain('secret');
  });

  it('does not reuse a token about to expire', async () => {
    const { server, source } = await setup({ expiresIn: 30 }); // inside the 60 s skew
    expect(await source().token()).toBe('tok-1');
    expect(await source().token()).toBe('tok-2');
    expect(server.fetches).toBe(2);
  });

  it('renew() takes a token another process already renewed, else fetches one', async () => {
    const { server, cacheFile, source } = await setup();
    const a = source();
    expect(await a.token()).toBe('tok-1');
    // Another process renewed meanwhile: the cache holds a different valid token.
    const data = JSON.parse(await readFile(cacheFile, 'utf8'));
    const key = Object.keys(data.tokens)[0]!;
    data.tokens[key].access_token = 'tok-from-elsewhere';
    await writeFile(cacheFile, JSON.stringify(data));
    expect(await a.renew('tok-1')).toBe('tok-from-elsewhere');
    expect(server.fetches).toBe(1);
    // The cached token itself was rejected: fetch.
    expect(await a.renew('tok-from-elsewhere')).toBe('tok-2');
    expect(server.fetches).toBe(2);
  });

  it('two processes racing for a token make one request between them', async () => {
    const { server, cacheFile } = await setup({ delayMs: 400 });
    const fixture = fileURLToPath(new URL('./test-helpers/token-child.fixture.ts', import.meta.url));
    const children = [0, 1].map(() => spawn(process.execPath, ['--import', 'tsx', fixture, `${server.url}oauth/token`, cacheFile], { stdio: ['pipe', 'pipe', 'inherit'] }));
    closers.push(() => {
      for (const c of children) c.kill('SIGKILL');
    });
    const lines = children.map((c) => {
      const out: string[] = [];
      let buf = '';
      const waiters: Array<() => void> = [];
      c.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          out.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
          for (const w of waiters.splice(0)) w();
        }
      });
      return {
        async next(): Promise<string> {
          while (out.length === 0) await new Promise<void>((r) => waiters.push(r));
          return out.shift()!;
        },
      };
    });
    expect(await Promise.all(lines.map((l) => l.next()))).toEqual(['ready', 'ready']);
    for (const c of children) c.stdin!.write('go\n');
    const results = (await Promise.all(lines.map((l) => l.next()))).map((l) => JSON.parse(l) as { token: string; fetches: number });
    expect(results.map((r) => r.token)).toEqual(['tok-1', 'tok-1']);
    expect(results.map((r) => r.fetches).sort()).toEqual([0, 1]);
    expect(server.fetches).toBe(1);
    expect(server.requests.length).toBe(1);
  }, 60_000);

  it('rejected client credentials are MODEL_ERR_AUTH, at once', async () => {
    const { server, source } = await setup({ status: 401 });
    await expect(source().token()).rejects.toMatchObject({ code: 'MODEL_ERR_AUTH', details: { status: 401 } });
    expect(server.requests.length).toBe(1);
  });

  it('the default cache file lives under XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultTokenCacheFile({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/vncua/tokens.json');
    expect(defaultTokenCacheFile({})).toMatch(/\.cache\/vncua\/tokens\.json$/);
  });
});
