/**
 * The warm pool's logic over a fake provider (no X, no Chromium): spares at the next runs' sizes in
 * queue order, each desktop serving one run, dead spares replaced and never handed out, failed starts
 * reported on the run that would have got them, cancellation and the end releasing everything, and
 * never more desktops alive than workers + N (nor than the provider's capacity). Every wait is for a
 * condition, never a fixed time.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Agent } from '../harness/agent/agent.ts';
import { sleep } from '../harness/cancel.ts';
import type { ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { desktopPool } from './desktop-pool.ts';
import type { DesktopProvider, LeasedDesktop } from './providers/types.ts';
import { runSuite, type SuiteAgent } from './runner.ts';
import type { EvalTask } from './tasks.ts';

const A: ScreenSize = { width: 1280, height: 800 };
const B: ScreenSize = { width: 1920, height: 1080 };
const C: ScreenSize = { width: 1024, height: 768 };
const key = (s: ScreenSize) => `${s.width}x${s.height}`;

/** Wait until `cond()` holds (polling), or fail after `ms`. */
async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await sleep(5);
  }
}

interface FakeDesktop {
  id: number;
  size: string;
  via: 'start' | 'acquire';
  /** URLs it was opened at (start: by open(); acquire: its request URL). */
  opened: string[];
  handedOut: number;
  released: boolean;
  /** Its start was cancelled or failed (it never ran). */
  aborted: boolean;
  /** Started. */
  up: boolean;
  healthy: boolean;
  answers: boolean;
  exit(): void;
}

/** The fake desktops' CDP: GET /<id>/json/version answers while that desktop `answers` (the pool's check before it hands a spare out). */
let cdp: Server;
let cdpBase = '';
const answering = new Map<number, FakeDesktop>();
beforeAll(async () => {
  cdp = createServer((req, res) => {
    const m = /^\/(\d+)\/json\/version$/.exec(req.url ?? '');
    const d = m ? answering.get(Number(m[1])) : undefined;
    if (d?.answers && !d.released) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"Browser":"fake"}');
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => cdp.listen(0, '127.0.0.1', r));
  cdpBase = `http://127.0.0.1:${(cdp.address() as AddressInfo).port}`;
});
afterAll(async () => {
  cdp.closeAllConnections();
  await new Promise((r) => cdp.close(r));
});

let ids = 0;

/** A provider whose desktops are objects; counts how many are alive (from start() to release()). */
function fakeProvider(o: { startMs?: number; capacity?: number; failStart?: (n: number) => boolean; openGate?: Promise<void> } = {}) {
  const desktops: FakeDesktop[] = [];
  let alive = 0;
  let maxAlive = 0;
  let starts = 0;
  const launch = async (size: ScreenSize, via: 'start' | 'acquire', signal: AbortSignal | undefined, url?: string): Promise<LeasedDesktop> => {
    starts++;
    const n = ++ids;
    alive++;
    maxAlive = Math.max(maxAlive, alive);
    const d: FakeDesktop = {
      id: n,
      size: key(size),
      via,
      opened: url ? [url] : [],
      handedOut: 0,
      released: false,
      aborted: false,
      up: false,
      healthy: true,
      answers: true,
      exit: () => {},
    };
    desktops.push(d);
    answering.set(n, d);
    try {
      await sleep(o.startMs ?? 5, signal);
      if (o.failStart?.(starts)) throw new VncuaError('DESKTOP_ERR_START_FAILED', `fake desktop ${n} did not start`);
    } catch (e) {
      d.aborted = true;
      alive--;
      throw e;
    }
    const exited = new Promise<void>((r) => (d.exit = r));
    d.up = true;
    return {
      vncUrl: `ws://fake/${n}`,
      cdpUrl: `${cdpBase}/${n}/`,
      width: size.width,
      height: size.height,
      ports: [],
      info: { provider: 'fake', id: n },
      exited,
      health: async () => (d.healthy ? null : { code: 'EVAL_ERR_DESKTOP_LOST', message: `fake desktop ${n} is unwell` }),
      release: async () => {
        if (d.released) return;
        d.released = true;
        alive--;
      },
      ...(via === 'start'
        ? {
            open: async (u: string) => {
              d.opened.push(u);
              await o.openGate;
              return { href: u };
            },
          }
        : { ready: Promise.resolve() }),
    };
  };
  const provider: DesktopProvider = {
    name: 'fake',
    ...(o.capacity !== undefined ? { capacity: o.capacity } : {}),
    start: (req) => launch(req.size, 'start', req.signal),
    acquire: (req) => launch(req.size, 'acquire', req.signal, req.url),
  };
  return {
    provider,
    desktops,
    alive: () => alive,
    maxAlive: () => maxAlive,
  };
}

/** An agent that waits for the page, counts the desktop it got, and finishes (or waits for cancellation). */
function fakeAgent(f: ReturnType<typeof fakeProvider>, o: { hold?: () => boolean } = {}): SuiteAgent {
  return {
    name: 'fake',
    build: (ctx) =>
      ({
        run: async (r: { signal?: AbortSignal; ready?: Promise<unknown> }) => {
          await r.ready;
          const d = f.desktops.find((x) => ctx.vncUrl === `ws://fake/${x.id}`)!;
          d.handedOut++;
          expect(d.opened).toEqual([ctx.url]);
          if (o.hold?.()) {
            await new Promise((resolve) => r.signal?.addEventListener('abort', resolve, { once: true }));
            return { status: 'cancelled', steps: 0, durationMs: 1 };
          }
          await sleep(2);
          return { status: 'finished', steps: 1, durationMs: 1 };
        },
      }) as unknown as Agent,
  };
}

const tasks = (n: number): EvalTask[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t-${i}`, goal: 'g', url: `http://127.0.0.1:1/t-${i}.html`, success: { sentinel: 'x' }, group: 't' }));

let out: string;
beforeEach(async () => {
  out = await mkdtemp(join(tmpdir(), 'vncua-pool-'));
});
afterEach(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('desktopPool', () => {
  it('starts spares for the next runs, in queue order, at their sizes', async () => {
    const f = fakeProvider();
    const pool = desktopPool(f.provider, { spares: 2, workers: 1 });
    pool.plan([A, B, A, C]);
    expect(f.desktops.map((d) => d.size)).toEqual(['1280x800', '1920x1080']);
    const d1 = await pool.acquire({ size: A, url: 'http://x/1' });
    await d1.ready;
    expect(d1.pooled).toBe(true);
    expect(d1.info).toMatchObject({ pooled: true, id: f.desktops[0]!.id });
    // The A spare went to this run: the next two runs are B (its spare is there) and A (started once d1's page is ready).
    await until(() => f.desktops.length === 3, 'the next A spare');
    expect(f.desktops.map((d) => d.size)).toEqual(['1280x800', '1920x1080', '1280x800']);
    await d1.release();
    pool.plan([B, A, C]);
    const d2 = await pool.acquire({ size: B, url: 'http://x/2' });
    expect(d2.info).toMatchObject({ id: f.desktops[1]!.id });
    // Next: A (there) and C.
    await until(() => f.desktops.length === 4, 'the C spare');
    expect(f.desktops.map((d) => d.size)).toEqual(['1280x800', '1920x1080', '1280x800', '1024x768']);
    await d2.release();
    await pool.close!();
    expect(f.alive()).toBe(0);
    expect(f.desktops.every((d) => d.released || d.aborted)).toBe(true);
  });

  it("starts the next spare once the handed-out desktop's task page is ready, not beside its page load", async () => {
    let openDone = () => {};
    const f = fakeProvider({ openGate: new Promise<void>((r) => (openDone = r)) });
    const pool = desktopPool(f.provider, { spares: 1, workers: 1 });
    pool.plan([A, A]);
    await until(() => f.desktops[0]?.up === true, 'the first spare up');
    const d1 = await pool.acquire({ size: A, url: 'http://x/1' });
    // The page is still opening: the run behind it has no spare started yet.
    await new Promise((r) => setTimeout(r, 50));
    expect(f.desktops.length).toBe(1);
    openDone();
    await d1.ready;
    await until(() => f.desktops.length === 2, 'the next spare, once the page was ready');
    await d1.release();
    await pool.close!();
    expect(f.alive()).toBe(0);
  });

  it("checks a spare while its task page starts opening: the check's round trip is not added to the task's", async () => {
    const f = fakeProvider();
    const seen: string[][] = [];
    const pool = desktopPool(f.provider, {
      spares: 1,
      workers: 1,
      answers: async (lease) => {
        // What the spare had been asked to open when its check ran.
        seen.push([...f.desktops.find((x) => lease.vncUrl === `ws://fake/${x.id}`)!.opened]);
        return true;
      },
    });
    pool.plan([A]);
    await until(() => f.desktops[0]?.up === true, 'the spare up');
    const d = await pool.acquire({ size: A, url: 'http://x/1' });
    expect(seen).toEqual([['http://x/1']]);
    await d.ready;
    expect(d.info).toMatchObject({ pooled: true, id: f.desktops[0]!.id });
    await d.release();
    await pool.close!();
    expect(f.alive()).toBe(0);
  });

  it('never starts a desktop no run will use: a spare the queue no longer needs is stopped at once', async () => {
    const f = fakeProvider();
    const pool = desktopPool(f.provider, { spares: 2, workers: 1 });
    pool.plan([A, A, A]);
    await until(() => f.desktops.filter((d) => d.via === 'start').length === 2, 'two spares');
    // The queue now holds one run: one spare is stopped.
    pool.plan([A]);
    await until(() => f.alive() === 1, 'one spare left');
    pool.plan([]);
    await until(() => f.alive() === 0, 'no spare left');
    expect(pool.stats()).toMatchObject({ started: 2, discarded: 2, hits: 0 });
    await pool.close!();
  });

  it('a spare that died while waiting is released and replaced, never handed out', async () => {
    const f = fakeProvider();
    const pool = desktopPool(f.provider, { spares: 1, workers: 1, checkEveryMs: 10 });
    pool.plan([A]);
    await until(() => f.desktops.length === 1 && f.desktops[0]!.up, 'the spare');
    // 1: its process exits.
    f.desktops[0]!.exit();
    await until(() => f.desktops[0]!.released && f.desktops.length === 2, 'the dead spare released and replaced');
    // 2: its health() fails while it waits.
    await until(() => f.desktops[1]!.up, 'the replacement');
    f.desktops[1]!.healthy = false;
    await until(() => f.desktops[1]!.released && f.desktops.length === 3, 'the unwell spare released and replaced');
    // 3: its CDP does not answer when a run takes it: the run gets another desktop (the task page the
    // spare began opening while it was checked goes with it).
    const third = f.desktops[2]!;
    await until(() => third.up, 'the third spare');
    third.answers = false;
    const d = await pool.acquire({ size: A, url: 'http://x/1' });
    await d.ready;
    expect(third.released).toBe(true);
    expect(third.handedOut).toBe(0);
    expect(d.info).not.toMatchObject({ id: third.id });
    expect(pool.stats().dead).toBe(3);
    await d.release();
    await pool.close!();
    expect(f.alive()).toBe(0);
  });

  it('a spare that could not start fails the run that takes it, with its own code; the run is retried', async () => {
    const f = fakeProvider({ failStart: (n) => n === 1 });
    const summary = await runSuite({ tasks: tasks(3), agent: fakeAgent(f), out, workers: 1, pool: 1, provider: f.provider });
    expect(summary.outcomes.map((o) => [o.status, o.attempts])).toEqual([
      ['finished', 2],
      ['finished', 1],
      ['finished', 1],
    ]);
    const first = JSON.parse(await readFile(`${summary.outcomes[0]!.dir}/task.json`, 'utf8'));
    expect(first.infra_errors).toMatchObject([{ attempt: 1, code: 'DESKTOP_ERR_START_FAILED' }]);
    expect(f.alive()).toBe(0);
  });

  it('runs a suite: each desktop serves one run, no spare is wasted, never more than workers + N alive', async () => {
    const f = fakeProvider({ startMs: 15 });
    const summary = await runSuite({
      tasks: tasks(10),
      resolutions: [A, B],
      agent: fakeAgent(f),
      out,
      workers: 2,
      pool: 2,
      provider: f.provider,
    });
    expect(summary.ran).toBe(20);
    expect(summary.outcomes.every((o) => o.status === 'finished')).toBe(true);
    // Every desktop started was handed to exactly one run, at its size, and released.
    expect(f.desktops).toHaveLength(20);
    expect(f.desktops.every((d) => d.handedOut === 1 && d.opened.length === 1 && d.released)).toBe(true);
    for (const o of summary.outcomes) {
      const d = f.desktops.find((x) => x.opened[0] === `http://127.0.0.1:1/${o.taskId}.html` && x.size === o.resolution);
      expect(d, `${o.taskId}@${o.resolution}`).toBeDefined();
    }
    expect(f.maxAlive()).toBeLessThanOrEqual(4);
    expect(f.alive()).toBe(0);
    expect(summary.outcomes.filter((o) => o.pooled).length).toBeGreaterThan(0);
    const t = JSON.parse(await readFile(`${summary.outcomes[19]!.dir}/task.json`, 'utf8'));
    expect(t.desktop).toMatchObject({ provider: 'fake', pooled: expect.any(Boolean) });
    expect(t.desktop_overhead_ms).toEqual(expect.any(Number));
    expect(t.desktop_acquire_ms).toEqual(expect.any(Number));
  });

  it("respects the provider's capacity", async () => {
    const f = fakeProvider({ capacity: 3, startMs: 10 });
    const summary = await runSuite({ tasks: tasks(8), resolutions: [A, B], agent: fakeAgent(f), out, workers: 2, pool: 4, provider: f.provider });
    expect(summary.ran).toBe(16);
    expect(summary.infraErrors).toBe(0);
    expect(f.maxAlive()).toBeLessThanOrEqual(3);
    expect(f.alive()).toBe(0);
  });

  it('cancellation stops every desktop: the runs, the spares started and those starting', async () => {
    const f = fakeProvider({ startMs: 30 });
    const ctl = new AbortController();
    const running = runSuite({ tasks: tasks(10), agent: fakeAgent(f, { hold: () => true }), out, workers: 2, pool: 3, provider: f.provider, signal: ctl.signal });
    await until(() => f.desktops.filter((d) => d.handedOut === 1).length === 2, 'two runs going');
    await until(() => f.desktops.length >= 5, 'spares starting');
    ctl.abort();
    const summary = await running;
    expect(summary.cancelled).toBe(true);
    expect(f.alive()).toBe(0);
    expect(f.desktops.every((d) => d.released || d.aborted)).toBe(true);
    expect(f.maxAlive()).toBeLessThanOrEqual(5);
  });

  it('the signal alone stops the spares', async () => {
    const f = fakeProvider({ startMs: 50 });
    const ctl = new AbortController();
    const pool = desktopPool(f.provider, { spares: 2, workers: 1, signal: ctl.signal });
    pool.plan([A, B, C]);
    await until(() => f.desktops.length === 2, 'two starting');
    ctl.abort();
    await until(() => f.alive() === 0, 'every spare stopped');
    await pool.close!();
  });

  it('is refused for a provider that cannot start desktops ahead (remote)', async () => {
    const err = await runSuite({
      tasks: tasks(1),
      agent: { name: 'a', build: () => ({}) as Agent },
      out,
      pool: 1,
      provider: 'remote',
      endpoints: [{ vncUrl: 'ws://127.0.0.1:1/', cdpUrl: 'http://127.0.0.1:2/' }],
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'EVAL_ERR_BAD_OPTIONS', details: { field: 'pool' } });
  });
});
