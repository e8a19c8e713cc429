/**
 * Test-only: a real Debian `redis-server` on 127.0.0.1 at a free port (redis takes no port 0: one is found by
 * binding 127.0.0.1:0 first), with its data in a temporary directory (`--appendonly yes`, so a restart keeps it).
 * The same interface as wt/queue-core's eval/queue/test-helpers.ts (port, url, restart, kill, start, close), so
 * the rate-limit tests can move to that one when both are merged; `connectRedis()` makes a client for a test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/** A running redis-server. */
export interface TestRedis {
  port: number;
  /** redis://127.0.0.1:PORT/0 */
  url: string;
  /** Kill it (SIGKILL: as a crash) and start it again on the same port and data; resolves once it answers. */
  restart(): Promise<void>;
  /** Kill it (SIGKILL); start() brings it back. */
  kill(): Promise<void>;
  /** Start it again after kill(). */
  start(): Promise<void>;
  /** Kill it and remove its data. */
  close(): Promise<void>;
}

/** An ioredis client of `port` as the queue uses one (maxRetriesPerRequest: null, reconnecting every 100 ms, refused connects not reported). */
export function connectRedis(port: number): Redis {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => 100 });
  c.on('error', () => {});
  return c;
}

/** A port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Start redis-server; resolves once it answers PING (deadline `timeoutMs`, default 20 s). */
export async function startRedis(options: { timeoutMs?: number } = {}): Promise<TestRedis> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const dir = await mkdtemp(join(tmpdir(), 'vncua-redis-'));
  const port = await freePort();
  let proc: ChildProcess | null = null;
  let log = '';

  const launch = async () => {
    const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--dir', dir, '--protected-mode', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc = p;
    p.stdout!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
    p.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
    const probe = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    probe.on('error', () => {});
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        if (p.exitCode !== null) throw new Error(`redis-server exited with ${p.exitCode}: ${log}`);
        try {
          if (probe.status !== 'ready') await probe.connect();
          if ((await probe.ping()) === 'PONG') return;
        } catch {
          probe.disconnect();
        }
        if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms: ${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      probe.disconnect();
    }
  };

  const kill = async () => {
    const p = proc;
    proc = null;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill('SIGKILL');
    await exited;
  };

  try {
    await launch();
  } catch (e) {
    await kill().catch(() => {});
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    async restart() {
      await kill();
      await launch();
    },
    kill,
    start: launch,
    async close() {
      await kill().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
