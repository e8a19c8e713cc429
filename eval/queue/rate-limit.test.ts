/**
 * RedisRateGate on a real redis-server: three worker processes sharing a 10/s limit never exceed it in any 1 s span
 * (checked on the gate's own grant times, Redis's clock, with the window rule exact); a 429 in one process holds the
 * others' calls until its backoff ends; cancellation and timeouts never count a request; a Redis restart is waited
 * out; and a backoff passed to BullMQ stops the queue from starting a job until it ends (and why the worker needs
 * QUEUE_BACKOFF_LIMITER for that).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VncuaError } from '../../harness/errors.ts';
import { isInfraErrorCode } from '../infra.ts';
import { QUEUE_BACKOFF_LIMITER, RedisRateGate, pauseQueueOnBackoff } from './rate-limit.ts';
import { connectRedis, startRedis, type TestRedis } from './test-helpers.ts';

const FIXTURE = fileURLToPath(new URL('./test-helpers/rate-child.fixture.ts', import.meta.url));
const CALL = { adapter: 'chat', model: 'm' };

let redis: TestRedis;
const clients = new Set<Redis>();
/** A client of the test's Redis, closed after the file. */
function connect(): Redis {
  const c = connectRedis(redis.port);
  clients.add(c);
  return c;
}
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await redis?.close();
});
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  const c = connect();
  await c.flushall();
  c.disconnect();
});

/** A worker process running the fixture; its JSON lines as they come. */
interface Child {
  proc: ChildProcess;
  lines: Array<Record<string, unknown>>;
  /** Resolves once it printed {"done":true} (rejects if it exits first). */
  done: Promise<void>;
}

/** Start fixture processes; once all are ready, let them make their calls (unless `go` is false: release() each). */
async function startChildren(args: string[][], go = true): Promise<Child[]> {
  const children = args.map((a) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', FIXTURE, String(redis.port), ...a], { stdio: ['pipe', 'pipe', 'inherit'] });
    cleanups.push(() => proc.kill('SIGKILL'));
    const lines: Array<Record<string, unknown>> = [];
    let ready!: () => void;
    const isReady = new Promise<void>((r) => (ready = r));
    const done = new Promise<void>((resolve, reject) => {
      let buf = '';
      proc.stdout!.on('data', (d: Buffer) => {
        buf += d.toString();
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line === 'ready') ready();
          else {
            const v = JSON.parse(line) as Record<string, unknown>;
            lines.push(v);
            if (v.done) resolve();
          }
        }
      });
      proc.on('exit', (code) => reject(new Error(`rate child exited with ${code} before it was done`)));
    });
    done.catch(() => {});
    return { proc, lines, done, isReady };
  });
  await Promise.all(children.map((c) => c.isReady));
  if (go) for (const c of children) c.proc.stdin!.write('go\n');
  return children;
}

/** Let a child that is ready (connected, waiting on stdin) make its calls. */
const release = (c: Child) => c.proc.stdin!.write('go\n');

const grantsOf = (c: Child) => c.lines.filter((l) => typeof l.at === 'number').map((l) => l.at as number);

/**
 * The first pair (i, i + limit) of sorted grants closer than `periodMs`: a span of one period holding limit + 1.
 * Compared in whole µs (Redis's clock), as the gate compares them.
 */
function windowViolation(grants: number[], limit: number, periodMs: number): [number, number] | null {
  const s = grants.map((ms) => Math.round(ms * 1000)).sort((a, b) => a - b);
  for (let i = 0; i + limit < s.length; i++) if (s[i + limit]! - s[i]! < periodMs * 1000) return [s[i]!, s[i + limit]!];
  return null;
}

describe('RedisRateGate across worker processes', () => {
  it('three processes sharing 10/s: 30 grants, never 11 within any 1 s span, every process served', async () => {
    const children = await startChildren([0, 1, 2].map(() => ['10/s', '10', '2']));
    await Promise.all(children.map((c) => c.done));
    const all = children.flatMap(grantsOf);
    expect(all).toHaveLength(30);
    for (const c of children) expect(grantsOf(c)).toHaveLength(10);
    expect(windowViolation(all, 10, 1000)).toBeNull();
    // The same grants checked with a 9/s reading must show a full window (the limit is reached, not just kept under).
    expect(windowViolation(all, 9, 1000)).not.toBeNull();
  }, 60_000);

  it("a 429 in one process holds the others' calls: no grant anywhere between the backoff and its end, and they carry on after", async () => {
    const BACKOFF = 3000;
    // All three are connected and waiting; the first one goes, gets 3 grants and reports its 429; only then do the
    // other two start calling (from processes already running: within the backoff, however loaded the machine).
    const children = await startChildren(
      [
        ['10/s', '10', '1', '3', String(BACKOFF)],
        ['10/s', '10', '1'],
        ['10/s', '10', '1'],
      ],
      false,
    );
    release(children[0]!);
    const deadline = Date.now() + 30_000;
    while (!children[0]!.lines.some((l) => l.backoff)) {
      if (Date.now() > deadline) throw new Error('the first process never reported its backoff');
      await new Promise((r) => setTimeout(r, 10));
    }
    for (const c of children.slice(1)) release(c);
    await Promise.all(children.map((c) => c.done));
    const b = children[0]!.lines.find((l) => l.backoff)?.backoff as { from: number; until: number };
    expect(b.until - b.from).toBeCloseTo(BACKOFF, 6);
    const all = children.flatMap(grantsOf);
    expect(all).toHaveLength(30);
    expect(all.filter((t) => t >= b.from && t < b.until)).toEqual([]);
    // The other two asked during the backoff: every one of their grants came after it, and all came.
    for (const c of children.slice(1)) {
      expect(grantsOf(c)).toHaveLength(10);
      expect(grantsOf(c).every((t) => t >= b.until)).toBe(true);
    }
    expect(windowViolation(all, 10, 1000)).toBeNull();
  }, 60_000);
});

describe('RedisRateGate in one process', () => {
  const conn = connect;

  it('cancellation through the signal (and a timeout) rejects with its code and never counts the request', async () => {
    const c = conn();
    const gate = new RedisRateGate({ connection: c, rules: '1/min' });
    await gate.acquire(CALL);
    const ctl = new AbortController();
    const waiting = gate.acquire(CALL, { signal: ctl.signal });
    // The log holds the first request only while the second waits.
    expect(await c.zcard('vncua:rate:log:60000:*')).toBe(1);
    ctl.abort(new Error('stop'));
    await expect(waiting).rejects.toMatchObject({ code: 'AGENT_ERR_CANCELLED' });
    const reason = new VncuaError('AGENT_ERR_BUDGET_EXCEEDED', 'budget');
    await expect(gate.acquire(CALL, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await expect(gate.acquire(CALL, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'QUEUE_ERR_RATE_LIMIT_TIMEOUT' });
    expect(await c.zcard('vncua:rate:log:60000:*')).toBe(1);
  });

  it('rules by model and by adapter: a call counts against the rules that name its model or adapter, and the global one', async () => {
    const c = conn();
    const gate = new RedisRateGate({ connection: c, rules: ['100/min', '2/min:gpt-5', '3/min:anthropic'] });
    for (let i = 0; i < 2; i++) await gate.acquire({ adapter: 'openai-cua', model: 'gpt-5' });
    await expect(gate.acquire({ adapter: 'openai-cua', model: 'gpt-5' }, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'QUEUE_ERR_RATE_LIMIT_TIMEOUT' });
    // Another model of the same adapter is not held by gpt-5's rule.
    await gate.acquire({ adapter: 'openai-cua', model: 'computer-use-preview' });
    for (let i = 0; i < 3; i++) await gate.acquire({ adapter: 'anthropic', model: 'claude-sonnet-4-5' });
    await expect(gate.acquire({ adapter: 'anthropic', model: 'claude-opus-4-1' }, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'QUEUE_ERR_RATE_LIMIT_TIMEOUT' });
    expect(await c.zcard('vncua:rate:log:60000:*')).toBe(6);
    expect(await c.zcard('vncua:rate:log:60000:gpt-5')).toBe(2);
    expect(await c.zcard('vncua:rate:log:60000:anthropic')).toBe(3);
  });

  it('a backoff holds its model only, keeps the later of two, and tells the listeners', async () => {
    const gate = new RedisRateGate({ connection: conn() });
    const heard: unknown[] = [];
    gate.onBackoff((e) => heard.push(e));
    const b = await gate.backoff(CALL, 800, 'HTTP 429');
    const shorter = await gate.backoff(CALL, 10, 'HTTP 429 again');
    expect(shorter.until).toBe(b.until);
    const other = await gate.acquire({ adapter: 'chat', model: 'other' });
    expect(other.at).toBeLessThan(b.until);
    const held = await gate.acquire(CALL);
    expect(held.at).toBeGreaterThanOrEqual(b.until);
    expect(heard).toEqual([
      { call: CALL, ms: 800, reason: 'HTTP 429' },
      { call: CALL, ms: 10, reason: 'HTTP 429 again' },
    ]);
  });

  it('a Redis restart while a call waits: the gate waits it out and admits the call once Redis is back', async () => {
    const c = conn();
    const gate = new RedisRateGate({ connection: c, rules: '1/s' });
    const first = await gate.acquire(CALL);
    const waiting = gate.acquire(CALL);
    await redis.restart();
    const second = await waiting;
    expect(second.at - first.at).toBeGreaterThanOrEqual(1000);
    // The log survived the restart (appendonly): the third call still waits its turn after the second.
    const third = await gate.acquire(CALL);
    expect(third.at - second.at).toBeGreaterThanOrEqual(1000);
  }, 60_000);

  it('a bad rule is QUEUE_ERR_BAD_RATE_LIMIT; an error Redis answers is QUEUE_ERR_RATE_GATE', async () => {
    const c = conn();
    expect(() => new RedisRateGate({ connection: c, rules: '60/mn' })).toThrow(expect.objectContaining({ code: 'QUEUE_ERR_BAD_RATE_LIMIT' }));
    const gate = new RedisRateGate({ connection: c, rules: '5/s' });
    // The log's key holds a string: Redis answers WRONGTYPE.
    await c.set('vncua:rate:log:1000:*', 'not a sorted set');
    await expect(gate.acquire(CALL)).rejects.toMatchObject({ code: 'QUEUE_ERR_RATE_GATE' });
    // Not the agent's fault: the run is an infra error, retried.
    expect(isInfraErrorCode('QUEUE_ERR_RATE_GATE')).toBe(true);
  });
});

describe('pauseQueueOnBackoff: a 429 stops the BullMQ queue from starting runs', () => {
  /** Start a worker (limiter or not), report a backoff of `ms`, add a job: when did it start, on Redis's clock? */
  async function jobStartAfterBackoff(name: string, limiter: boolean, ms: number): Promise<{ t0: number; started: number }> {
    const c = connect();
    const queue = new Queue(name, { connection: connect() });
    cleanups.push(() => queue.close());
    let started!: (t: number) => void;
    const start = new Promise<number>((r) => (started = r));
    const worker = new Worker(
      name,
      async () => {
        const [s, us] = await c.time();
        started(Number(s) * 1000 + Number(us) / 1000);
      },
      { connection: connect(), ...(limiter ? { limiter: QUEUE_BACKOFF_LIMITER } : {}) },
    );
    cleanups.push(() => worker.close(true));
    await worker.waitUntilReady();
    const gate = new RedisRateGate({ connection: c });
    pauseQueueOnBackoff(gate, worker);
    const [s, us] = await c.time();
    const t0 = Number(s) * 1000 + Number(us) / 1000;
    await gate.backoff(CALL, ms, 'HTTP 429');
    // The worker's rateLimit() has set the queue's limiter key.
    while ((await c.pttl(`bull:${name}:limiter`)) <= 0) await new Promise((r) => setTimeout(r, 10));
    await queue.add('run', {});
    return { t0, started: await start };
  }

  it('with QUEUE_BACKOFF_LIMITER the job starts only after the backoff; without a limiter BullMQ ignores rateLimit()', async () => {
    const held = await jobStartAfterBackoff('paused', true, 1500);
    expect(held.started).toBeGreaterThanOrEqual(held.t0 + 1500);
    const ignored = await jobStartAfterBackoff('unpaused', false, 5000);
    expect(ignored.started).toBeLessThan(ignored.t0 + 5000);
  }, 60_000);
});
