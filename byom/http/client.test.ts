/**
 * PlannerClient against real HTTP servers on 127.0.0.1: one persistent connection, retries with
 * backoff on 500 / 429 / bad JSON / timeouts (attempts counted; no timing asserts), one
 * re-authentication on 401, and a clear code for each way a call can fail.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientCredentialsSource, StaticTokenSource } from './auth.ts';
import { PlannerClient } from './client.ts';
import { startScriptedServer, startTokenServer, type Reply, type ScriptedServer } from './test-helpers/servers.ts';
import type { PlannerRequest } from './wire.ts';

const request: PlannerRequest = { task: 'do it', screenshot: 'iVBORw0KGgo=', resolution: { width: 1280, height: 800 }, previous_steps: [] };
const plan = (n = 1): Reply => ({ body: { actions: [{ type: 'WAIT', seconds: n }], id: `plan-${n}` } });
const fast = { maxAttempts: 4, baseDelayMs: 2, maxDelayMs: 10 };

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
async function server(script: (n: number) => Reply): Promise<ScriptedServer> {
  const s = await startScriptedServer((_req, n) => script(n));
  closers.push(() => s.close());
  return s;
}
function client(s: ScriptedServer, options: Partial<ConstructorParameters<typeof PlannerClient>[0]> = {}): PlannerClient {
  const c = new PlannerClient({ endpoint: `${s.url}plan`, auth: new StaticTokenSource('static-1'), retry: fast, ...options });
  closers.push(() => c.close());
  return c;
}

describe('PlannerClient', () => {
  it('POSTs the request as JSON with the bearer token, and keeps one connection across calls', async () => {
    const s = await server((n) => plan(n));
    const c = client(s);
    for (let i = 1; i <= 5; i++) {
      const r = await c.plan({ ...request, previous_steps: [{ step: i - 1, action: { type: 'WAIT', seconds: i - 1 } }] });
      expect(r.response).toEqual({ actions: [{ type: 'WAIT', seconds: i }], id: `plan-${i}` });
      expect(r.attempts).toBe(1);
    }
    expect(s.requests.length).toBe(5);
    expect(s.connections).toBe(1);
    expect(new Set(s.requests.map((r) => r.socket))).toEqual(new Set([1]));
    const first = s.requests[0]!;
    expect(first.method).toBe('POST');
    expect(first.path).toBe('/plan');
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.headers.authorization).toBe('Bearer static-1');
    expect(JSON.parse(first.body)).toEqual({ ...request, previous_steps: [{ step: 0, action: { type: 'WAIT', seconds: 0 } }] });
  });

  it('retries 500 with backoff and succeeds, on the same connection', async () => {
    const s = await server((n) => (n <= 2 ? { status: 500, body: { error: 'boom' } } : plan()));
    const r = await client(s).plan(request);
    expect(r.attempts).toBe(3);
    expect(s.requests.length).toBe(3);
    expect(r.retries.map((x) => [x.attempt, x.code, x.status, x.retry_after])).toEqual([
      [1, 'MODEL_ERR_SERVER', 500, false],
      [2, 'MODEL_ERR_SERVER', 500, false],
    ]);
    for (const [i, x] of r.retries.entries()) expect(x.delay_ms).toBeLessThan(Math.min(fast.maxDelayMs, fast.baseDelayMs * 2 ** i));
    expect(s.connections).toBe(1);
  });

  it('honours Retry-After on 429', async () => {
    const s = await server((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : n === 2 ? { status: 429, headers: { 'retry-after': '0' } } : plan()));
    const r = await client(s, { random: () => 0.5 }).plan(request);
    expect(r.attempts).toBe(3);
    expect(r.retries.map((x) => [x.code, x.status, x.delay_ms, x.retry_after])).toEqual([
      ['MODEL_ERR_RATE_LIMITED', 429, 1000, true],
      ['MODEL_ERR_RATE_LIMITED', 429, 0, true],
    ]);
  });

  it('retries a body that is not JSON, but not JSON that is not a plan', async () => {
    const s = await server((n) => (n <= 2 ? { body: '{"actions": [' } : plan()));
    const r = await client(s).plan(request);
    expect(r.attempts).toBe(3);
    expect(r.retries.map((x) => x.code)).toEqual(['MODEL_ERR_BAD_RESPONSE', 'MODEL_ERR_BAD_RESPONSE']);

    const s2 = await server(() => ({ body: { actions: [{ type: 'TELEPORT' }] } }));
    await expect(client(s2).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_BAD_RESPONSE', details: { attempts: 1 } });
    expect(s2.requests.length).toBe(1);
  });

  it("gives up after maxAttempts with the last failure's code", async () => {
    const s500 = await server(() => ({ status: 503 }));
    await expect(client(s500).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_SERVER', details: { attempts: 4, status: 503 } });
    expect(s500.requests.length).toBe(4);
    const s429 = await server(() => ({ status: 429 }));
    await expect(client(s429).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_RATE_LIMITED', details: { attempts: 4 } });
    expect(s429.requests.length).toBe(4);
    const sBad = await server(() => ({ body: 'not json' }));
    await expect(client(sBad).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_BAD_RESPONSE', details: { attempts: 4 } });
    const s400 = await server(() => ({ status: 400, body: { error: 'bad screenshot' } }));
    await expect(client(s400).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_REQUEST', details: { attempts: 1, status: 400 } });
    expect(s400.requests.length).toBe(1);
    const s404 = await server(() => ({ status: 404 }));
    await expect(client(s404).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_NOT_FOUND', details: { attempts: 1, status: 404 } });
    expect(s404.requests.length).toBe(1);
    const s403 = await server(() => ({ status: 403 }));
    await expect(client(s403).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_AUTH', details: { attempts: 1 } });
  });

  it('times out a silent server on every attempt, and retries a dropped connection', async () => {
    const hang = await server(() => 'hang');
    await expect(client(hang, { requestTimeoutMs: 150, retry: { ...fast, maxAttempts: 2 } }).plan(request)).rejects.toMatchObject({
      code: 'MODEL_ERR_TIMEOUT',
      details: { attempts: 2 },
    });
    expect(hang.requests.length).toBe(2);
    const drop = await server((n) => (n === 1 ? 'drop' : plan()));
    const r = await client(drop).plan(request);
    expect(r.attempts).toBe(2);
    expect(r.retries[0]!.code).toBe('MODEL_ERR_CONNECT');
  });

  it('re-authenticates once on 401 and retries with the new token', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-planner-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const tokens = await startTokenServer();
    closers.push(() => tokens.close());
    const s = await startScriptedServer((req) => (req.headers.authorization === 'Bearer tok-1' ? { status: 401 } : plan()));
    closers.push(() => s.close());
    const auth = new ClientCredentialsSource({ authUrl: `${tokens.url}token`, clientId: 'id', clientSecret: 'secret', cacheFile: join(dir, 'tokens.json') });
    const c = client(s, { auth });
    const r = await c.plan(request);
    expect(r.reauthenticated).toBe(true);
    expect(s.requests.map((q) => q.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    expect(tokens.fetches).toBe(2);
    // The new token is used from then on, without fetching again.
    const r2 = await c.plan(request);
    expect(r2.reauthenticated).toBe(false);
    expect(s.requests.at(-1)!.headers.authorization).toBe('Bearer tok-2');
    expect(tokens.fetches).toBe(2);
    // The token request was the client credentials grant.
    const form = new URLSearchParams(tokens.requests[0]!.body);
    expect(Object.fromEntries(form)).toEqual({ grant_type: 'client_credentials', client_id: 'id', client_secret: 'secret' });
    expect(tokens.requests[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('a second 401 after re-authenticating, or a 401 with a static token, is MODEL_ERR_AUTH', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'vncua-planner-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const tokens = await startTokenServer();
    closers.push(() => tokens.close());
    const s = await server(() => ({ status: 401 }));
    const auth = new ClientCredentialsSource({ authUrl: `${tokens.url}token`, clientId: 'id', clientSecret: 'secret', cacheFile: join(dir, 'tokens.json') });
    await expect(client(s, { auth }).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_AUTH', details: { status: 401, reauthenticated: true } });
    expect(s.requests.length).toBe(2);
    expect(tokens.fetches).toBe(2);

    const s2 = await server(() => ({ status: 401 }));
    await expect(client(s2).plan(request)).rejects.toMatchObject({ code: 'MODEL_ERR_AUTH', details: { reauthenticated: false } });
    expect(s2.requests.length).toBe(1);
  });

  it('a call cancelled while its request is in flight is AGENT_ERR_CANCELLED, not the raw abort reason', async () => {
    const s = await server(() => 'hang');
    const ac = new AbortController();
    const p = client(s).plan(request, { signal: ac.signal });
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const reason = new Error('stop');
    ac.abort(reason);
    await expect(p).rejects.toMatchObject({ code: 'AGENT_ERR_CANCELLED', cause: reason });
    expect(s.requests.length).toBe(1);
  });

  it('a cancelled call stops at once, also in the middle of a backoff wait', async () => {
    const s = await server(() => ({ status: 500 }));
    const ac = new AbortController();
    const p = client(s, { retry: { maxAttempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000 }, random: () => 0.99 }).plan(request, { signal: ac.signal });
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    ac.abort(new Error('stop'));
    await expect(p).rejects.toMatchObject({ code: 'AGENT_ERR_CANCELLED' });
    expect(s.requests.length).toBe(1);
  });
});
