/**
 * The queue's results upload and rate limit, end to end with real parts (a real redis-server, a real
 * coordinator, real `vncua worker` processes with real desktops):
 * - upload mode: `vncua eval --queue --results-listen 127.0.0.1:0` starts the results receiver; workers
 *   that do not see the results root (each in its own mount namespace, a tmpfs over --out: `unshare -m`)
 *   upload every finished run, and the results tree is the one a shared-root (local) run writes;
 * - `--rate-limit 2/s` over two workers running the chat agent against a fake model server: the server never
 *   sees more than 2 requests in any second (its own arrival times), the gate's waits are in the traces, and a
 *   429 (Retry-After: 2) backs off both workers: no request from either arrives during the backoff;
 * - `--rate-limit 2/s` without a queue: the runs of one `vncua eval --workers 2` share one in-process gate;
 * - secrets: a queued suite whose tasks name an auth binding and a typed secret, the values only in the workers'
 *   environment: the page gets both, and neither is in anything Redis was sent (MONITOR), the results or any output.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { serveTestPages } from '../eval/test-fixtures/pages.ts';
import { QUEUE_DIR } from '../eval/queue/manifest.ts';
import { type TestRedis, type VncuaChild, spawnVncua, startRedis, waitFor, runDirs } from '../eval/queue/test-helpers.ts';
import { serveHtml, startSite } from '../harness/guard/test-helpers.ts';
import { type LeakHit, scanBytes, scanDirs } from '../harness/secrets/scan.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BASIC = join(ROOT, 'eval/suites/basic/tasks.json');

let redis: TestRedis | undefined;
let dir: string;
const children: VncuaChild[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-queue-wiring-'));
});
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill('SIGKILL');
  await redis?.close();
  redis = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const everything = () => children.map((c, i) => `--- child ${i}\n${c.output()}`).join('\n');

/** Start workers (concurrency 1) and wait until each takes jobs; `prefix` wraps the process (unshare). */
async function startWorkers(n: number, o: { env?: NodeJS.ProcessEnv; prefix?: readonly string[] } = {}): Promise<VncuaChild[]> {
  const ws = Array.from({ length: n }, (_, i) =>
    spawnVncua('worker', ['--queue', redis!.url, '--concurrency', '1', '--stall-timeout', '30', '--name', `w${i + 1}`], o.env ?? {}, o.prefix ? { prefix: o.prefix } : {}),
  );
  children.push(...ws);
  for (const w of ws)
    await waitFor(
      () => w.output().includes('takes jobs'),
      60_000,
      'a worker did not start taking jobs',
      () => w.output(),
    );
  return ws;
}

/** Every file under `d`, relative, sorted. */
function files(d: string): string[] {
  return (readdirSync(d, { recursive: true, withFileTypes: true }) as Array<{ isFile(): boolean; parentPath: string; name: string }>)
    .filter((e) => e.isFile())
    .map((e) => relative(d, join(e.parentPath, e.name)))
    .sort();
}

/** Wait for a child to exit, failing with everyone's output after `ms`. */
async function exitOf(c: VncuaChild, ms: number, what: string): Promise<number | null> {
  const code = await Promise.race([c.exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);
  if (code === 'timeout') throw new Error(`${what} did not finish within ${ms / 1000} s:\n${everything()}`);
  return code;
}

describe('upload mode: workers that do not see the results root', () => {
  it('upload every run to the coordinator’s receiver; the tree is the one a local run writes', async () => {
    redis = await startRedis();
    const only = 'click-button,hover-menu';
    const out = join(dir, 'upload-queue');
    await mkdir(out, { recursive: true });
    // Each worker in its own mount namespace, a fresh tmpfs over --out: the coordinator's marker file is not there.
    const hide = ['unshare', '-m', 'sh', '-c', `mount -t tmpfs vncua-hidden "${out}" && exec "$@"`, 'sh'];
    const workers = await startWorkers(2, { prefix: hide });
    const coordinator = spawnVncua('eval', ['--queue', redis.url, '--results-listen', '127.0.0.1:0', '--tasks', BASIC, '--agent', 'replay', '--only', only, '--out', out]);
    children.push(coordinator);
    expect(await exitOf(coordinator, 300_000, 'the coordinator'), everything()).toBe(0);
    const text = coordinator.output();
    expect(text).toMatch(/eval: receiving the results of workers that do not see .* at http:\/\/127\.0\.0\.1:\d+\//);
    expect(text).toContain('2/2 done');
    // The workers really wrote nowhere under --out themselves: their view of it is an empty tmpfs.
    for (const w of workers) expect(execFileSync('sh', ['-c', `ls -A /proc/${w.child.pid}/root${out}`], { encoding: 'utf8' }).trim(), w.output()).toBe('');
    const committed = workers.flatMap((w) => [...w.output().matchAll(/vncua worker: (\S+@\d+x\d+): [a-z_]+(?: \(success\))?, committed/g)].map((m) => m[1]));
    expect(committed.sort(), everything()).toEqual(['click-button@1280x800', 'hover-menu@1280x800']);
    expect(existsSync(join(out, QUEUE_DIR)), 'the queue directory (incoming uploads) was not cleaned up').toBe(false);

    // The same runs locally (a shared root, written in place): the same runs, the same files in each.
    const local = join(dir, 'upload-local');
    const l = spawnVncua('eval', ['--tasks', BASIC, '--agent', 'replay', '--only', only, '--workers', '2', '--out', local]);
    children.push(l);
    expect(await exitOf(l, 300_000, 'the local run'), l.output()).toBe(0);
    expect(runDirs(out)).toEqual(runDirs(local));
    for (const rel of runDirs(out)) expect(files(join(out, rel)), rel).toEqual(files(join(local, rel)));
    const q = JSON.parse(readFileSync(join(out, 'scores.json'), 'utf8'));
    const s = JSON.parse(readFileSync(join(local, 'scores.json'), 'utf8'));
    const pick = (a: Record<string, unknown>) => ({ agent: a.agent, runs: a.runs, successes: a.successes, infra_errors: a.infra_errors });
    expect(q.by_agent.map(pick)).toEqual(s.by_agent.map(pick));
    expect(q.by_agent[0]).toMatchObject({ agent: 'replay', runs: 2, infra_errors: 0 });
  }, 600_000);
});

/** A task file `name` of tasks that only wait on the test pages' ok/ID.html: the chat agent's model calls are all they do. */
async function waitTasks(name: string, ids: string[], pagesUrl: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, JSON.stringify(ids.map((id) => ({ id, goal: 'Wait', url: `${pagesUrl}ok/${id}.html`, success: { sentinel: '>code#1<' } }))));
  return file;
}

/** The chat agent, four steps a run and no retries. */
const chatArgs = () => ['--agent', 'chat', '--max-steps', '4', '--retries', '0'] as const;
/** What goes after `--`: the fake model server. */
const chatModelArgs = (baseURL: string) => ['--', '--base-url', baseURL, '--model', 'test-vlm'] as const;

/** 2/s held, read from the server's own arrival times: any 3 consecutive arrivals span a second (less the time a granted request takes to reach the server). */
function expectTwoPerSecond(times: number[]): void {
  const spans = times.slice(2).map((t, i) => t - times[i]!);
  expect(Math.min(...spans), `arrivals (ms): ${times.map((t) => t - times[0]!).join(' ')}`).toBeGreaterThan(700);
}

describe('upload mode: a coordinator killed and started again', () => {
  it('finished runs wait in the queue while no receiver answers, then go to the new receiver (new port, new token); every run once', async () => {
    redis = await startRedis();
    const labels = ['click-button', 'double-click-file', 'hover-menu', 'hover-tooltip'];
    const out = join(dir, 'upload-restart');
    await mkdir(out, { recursive: true });
    const hide = ['unshare', '-m', 'sh', '-c', `mount -t tmpfs vncua-hidden "${out}" && exec "$@"`, 'sh'];
    const workers = await startWorkers(2, { prefix: hide });
    const args = ['--queue', redis.url, '--results-listen', '127.0.0.1:0', '--tasks', BASIC, '--agent', 'replay', '--only', labels.join(','), '--out', out];
    const first = spawnVncua('eval', args);
    children.push(first);
    const receiverOf = (c: VncuaChild) => /results of workers that do not see .* at (http:\/\/\S+)/.exec(c.output())?.[1];
    await waitFor(() => workers.some((w) => /, committed/.test(w.output())), 180_000, 'no run committed', everything);
    const firstReceiver = receiverOf(first);
    await first.kill('SIGKILL');
    // No coordinator: a run that finishes cannot be delivered; it goes back to the queue and its worker runs nothing more.
    await waitFor(
      () => workers.some((w) => /the coordinator's results receiver did not take the run .*; back to the queue until a receiver answers/.test(w.output())),
      180_000,
      'no worker found the receiver gone',
      everything,
    );
    const second = spawnVncua('eval', args);
    children.push(second);
    expect(await exitOf(second, 300_000, 'the restarted coordinator'), everything()).toBe(0);
    expect(second.output()).toMatch(/suite [0-9a-f]{16} on .*\(resumed\)/);
    expect(receiverOf(second)).not.toBe(firstReceiver);
    expect(workers.map((w) => w.output()).join('\n')).toMatch(/the coordinator's results receiver is now 127\.0\.0\.1:\d+/);
    // Every run committed exactly once, across both coordinators, and on disk once.
    const committed = workers.flatMap((w) => [...w.output().matchAll(/vncua worker: (\S+)@\d+x\d+: [a-z_]+(?: \(success\))?, committed/g)].map((m) => m[1]));
    expect(committed.sort(), everything()).toEqual([...labels].sort());
    expect(runDirs(out)).toEqual(labels.map((l) => `replay/1280_800/${l}`).sort());
    for (const rel of runDirs(out)) expect(JSON.parse(readFileSync(join(out, rel, 'result.json'), 'utf8')).status, rel).toBe('finished');
  }, 600_000);
});

describe('--rate-limit across workers', () => {
  it('holds 2/s over two workers (the server’s own arrival times), and a 429 backs both off', async () => {
    redis = await startRedis();
    const pages = await serveTestPages();
    const arrivals: Array<{ at: number; n: number }> = [];
    const LIMITED_AT = 6;
    const api = await startChatServer((_body, n) => {
      arrivals.push({ at: Date.now(), n });
      if (n === LIMITED_AT)
        return { status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } };
      return JSON.stringify({ action: 'wait', seconds: 0 });
    });
    try {
      const file = await waitTasks('rate-tasks.json', ['a', 'b', 'c', 'd'], pages.url);
      const out = join(dir, 'rate-out');
      const workers = await startWorkers(2, { env: { VNCUA_CHAT_API_KEY: 'sk-test' } });
      const coordinator = spawnVncua('eval', ['--queue', redis.url, '--rate-limit', '2/s', '--tasks', file, ...chatArgs(), '--out', out, ...chatModelArgs(api.baseURL)]);
      children.push(coordinator);
      const code = await exitOf(coordinator, 400_000, 'the coordinator');
      expect(coordinator.output(), everything()).toContain('4/4 done');
      expect([0, 1]).toContain(code);
      // Both workers ran runs, so the limit was shared, not per process.
      for (const w of workers) expect(w.output(), everything()).toMatch(/committed/);
      const times = arrivals.map((a) => a.at);
      expect(times.length).toBeGreaterThanOrEqual(16);
      expectTwoPerSecond(times);
      // The gate made calls wait (their rate_wait_ms is in the traces).
      const traces = runDirs(out).map((rel) => readFileSync(join(out, rel, 'execution.json'), 'utf8'));
      expect(
        traces.some((t) => /"rate_wait_ms":\s*[1-9]/.test(t)),
        'no model call waited at the gate',
      ).toBe(true);
      // The 429 (Retry-After: 2 s): no request from either worker arrives in the next 1.8 s.
      const limited = arrivals.find((a) => a.n === LIMITED_AT)!;
      const during = arrivals.filter((a) => a.at > limited.at && a.at < limited.at + 1800);
      expect(during, `arrivals after the 429 (ms): ${arrivals.map((a) => a.at - limited.at).join(' ')}`).toEqual([]);
      expect(workers.map((w) => w.output()).join('\n')).toMatch(/model rate limited .*: the queue backs off \d+ ms/);
    } finally {
      await api.close();
      await pages.close();
    }
  }, 600_000);
});

describe('--rate-limit without a queue', () => {
  it('one gate for every run of the process: 2/s over two local runners (the server’s arrival times)', async () => {
    const pages = await serveTestPages();
    const arrivals: number[] = [];
    const api = await startChatServer(() => {
      arrivals.push(Date.now());
      return JSON.stringify({ action: 'wait', seconds: 0 });
    });
    try {
      const file = await waitTasks('local-rate-tasks.json', ['a', 'b'], pages.url);
      const out = join(dir, 'local-rate-out');
      const l = spawnVncua('eval', ['--rate-limit', '2/s', '--tasks', file, ...chatArgs(), '--workers', '2', '--out', out, ...chatModelArgs(api.baseURL)], {
        VNCUA_CHAT_API_KEY: 'sk-test',
      });
      children.push(l);
      expect([0, 1]).toContain(await exitOf(l, 300_000, 'the local run'));
      expect(l.output()).toContain('2/2 done');
      expect(arrivals.length).toBeGreaterThanOrEqual(8);
      expectTwoPerSecond(arrivals);
    } finally {
      await api.close();
      await pages.close();
    }
  }, 400_000);
});

describe('secrets in a queued suite', () => {
  it('workers take auth bindings and typed secrets from their own environment; no value in Redis (MONITOR), the results or any output', async () => {
    redis = await startRedis();
    const site = await startSite();
    const PW = `Qpw${randomBytes(12).toString('base64url')}`;
    const BEARER = `Qbr${randomBytes(12).toString('base64url')}`;
    const typed: string[] = [];
    const bearers = new Set<string>();
    site.route('/typed', (req, res) => {
      typed.push(new URL(req.url ?? '/', site.origin).searchParams.get('v') ?? '');
      res.writeHead(204).end();
    });
    site.route('/api', (req, res) => {
      bearers.add(String(req.headers.authorization));
      res.writeHead(200).end('ok');
    });
    serveHtml(
      site,
      '/type.html',
      '<!doctype html><title>type</title><style>input{position:fixed;inset:0;width:100%;height:100%;font-size:40px}</style><input autofocus oninput="fetch(\'/typed?v=\'+encodeURIComponent(this.value))"><script>fetch("/api")</script>',
    );
    // Everything any client sends to Redis during the suite, arguments included.
    const monitor = spawn('redis-cli', ['-p', String(redis.port), 'monitor'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let commands = '';
    monitor.stdout.on('data', (d: Buffer) => (commands += d));
    try {
      await waitFor(
        () => commands.includes('OK'),
        20_000,
        'redis-cli monitor did not start',
        () => commands,
      );
      const file = join(dir, 'secret-tasks.json');
      const secrets = { pw: { env: 'VNCUA_Q_PW' } };
      const auth = [{ domain: site.pattern, type: 'bearer', tokenEnv: 'VNCUA_Q_BEARER' }];
      await writeFile(
        file,
        JSON.stringify(
          ['s1', 's2'].map((id) => ({ id, goal: 'Type the password', url: `${site.origin}/type.html`, success: { sentinel: 'never-there' }, maxSteps: 3, auth, secrets })),
        ),
      );
      const script = join(dir, 'type-secret.json');
      await writeFile(
        script,
        JSON.stringify([
          { action: 'mouse_click', params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' } },
          { action: 'type_text', params: { text: '{{secret:pw}}' } },
          { action: 'finish', params: {} },
        ]),
      );
      const out = join(dir, 'secret-out');
      // Only the workers have the values: the coordinator's environment holds none.
      const workers = await startWorkers(2, { env: { VNCUA_Q_PW: PW, VNCUA_Q_BEARER: BEARER } });
      const coordinator = spawnVncua('eval', ['--queue', redis.url, '--tasks', file, '--agent', 'scripted', '--script', script, '--retries', '0', '--out', out]);
      children.push(coordinator);
      expect(await exitOf(coordinator, 300_000, 'the coordinator'), everything()).toBe(0);
      expect(coordinator.output()).toContain('2/2 done');
      // Both runs typed the value (the page saw it whole) and sent the bearer from its first request.
      expect(typed.filter((v) => v === PW).length, everything()).toBeGreaterThanOrEqual(2);
      expect([...bearers]).toEqual([`Bearer ${BEARER}`]);
      for (const id of ['s1', 's2']) {
        const trace = readFileSync(join(out, 'scripted', '1280_800', id, 'execution.json'), 'utf8');
        expect(trace).toContain('"secret_spans":["pw"]');
      }
      await stopAll(workers);
      const hits: LeakHit[] = [];
      for (const s of [PW, BEARER]) {
        hits.push(...(await scanDirs([out], s)).hits);
        hits.push(...scanBytes('redis MONITOR', Buffer.from(commands), s));
        for (const [i, c] of children.entries()) hits.push(...scanBytes(`child ${i} output`, Buffer.from(c.output()), s));
      }
      expect(commands.length).toBeGreaterThan(1000);
      expect(hits).toEqual([]);
    } finally {
      monitor.kill('SIGKILL');
      await site.close();
    }
  }, 600_000);
});

/** SIGTERM the workers and wait for them (their last output is part of the scan). */
async function stopAll(ws: VncuaChild[]): Promise<void> {
  for (const w of ws) await w.kill('SIGTERM');
}
