/**
 * Test-only: a real `redis-server` (Debian's package) on 127.0.0.1 at a free port, its data in a temp
 * dir with the append-only file on, so that restart() brings it back on the same port with the same
 * data (a Redis restart in the middle of a suite). Optionally with a password (requirepass), or speaking TLS only
 * with a certificate of a test CA (makeTestCerts).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';

/** An ioredis client of `port` as the queue uses one (maxRetriesPerRequest: null, reconnecting every 100 ms, refused connects not reported). */
export function connectRedis(port: number): Redis {
  const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null, retryStrategy: () => 100 });
  c.on('error', () => {});
  return c;
}

/** A running redis-server. */
export interface TestRedis {
  port: number;
  /** `redis://[:password@]127.0.0.1:PORT/0` (`rediss://` with TLS). */
  url: string;
  /** Kill it (SIGKILL: as a crash) and start it again on the same port and data dir (`wipe`: with its data gone). */
  restart(opts?: { wipe?: boolean }): Promise<void>;
  /** Kill it (SIGKILL); start() brings it back. */
  kill(): Promise<void>;
  /** Start it again after kill(). */
  start(): Promise<void>;
  /** Kill it and remove its data. */
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (redis-server cannot listen on port 0: bind one, read it, let it go). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once 127.0.0.1:port accepts a connection; rejects after `timeoutMs`. */
async function waitListening(port: number, timeoutMs: number, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}) before listening on ${port}:\n${log()}`);
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on 127.0.0.1:${port} within ${timeoutMs} ms:\n${log()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** PEM files of a test CA and of a server certificate it signed for 127.0.0.1. */
export interface TestCerts {
  ca: string;
  cert: string;
  key: string;
}

/** Make a test CA and a server certificate for IP 127.0.0.1 under `dir` (Debian's openssl). */
export function makeTestCerts(dir: string): TestCerts {
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=vncua test CA');
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(f('san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  ssl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('server.pem'), '-days', '2', '-extfile', f('san.cnf'));
  return { ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key') };
}

/** Start redis-server (kill it with close() in a finally); with `tls`, it speaks TLS only (its URL is rediss://). */
export async function startRedis(opts: { password?: string; timeoutMs?: number; tls?: TestCerts } = {}): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'vncua-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    const listen = opts.tls
      ? ['--port', '0', '--tls-port', String(port), '--tls-cert-file', opts.tls.cert, '--tls-key-file', opts.tls.key, '--tls-ca-cert-file', opts.tls.ca, '--tls-auth-clients', 'no']
      : ['--port', String(port)];
    const args = [...listen, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir, '--daemonize', 'no'];
    if (opts.password) args.push('--requirepass', opts.password);
    const c = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.on('data', (d) => (log += d));
    c.stderr!.on('data', (d) => (log += d));
    await waitListening(port, opts.timeoutMs ?? 15_000, c, () => log);
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  const auth = opts.password ? `:${encodeURIComponent(opts.password)}@` : '';
  return {
    port,
    url: `${opts.tls ? 'rediss' : 'redis'}://${auth}127.0.0.1:${port}/0`,
    async restart(o = {}) {
      await kill();
      if (o.wipe) for (const f of await readdir(dir)) await rm(join(dir, f), { recursive: true, force: true });
      await start();
    },
    kill,
    start,
    async close() {
      try {
        await kill();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A `vncua COMMAND ARGS` child (bin/vncua.js from the repository root) whose output is kept. */
export interface VncuaChild {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves to the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Kill it with `signal` (default SIGKILL) unless it already exited; resolves once it has. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

const REPO = new URL('../../', import.meta.url);

/** Start `vncua COMMAND ARGS` in a child process (kill it in a finally); `prefix` runs it through a wrapper that execs it (e.g. unshare). */
export function spawnVncua(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}, opts: { prefix?: readonly string[] } = {}): VncuaChild {
  const argv = [process.execPath, new URL('bin/vncua.js', REPO).pathname, command, ...args];
  const [file, ...rest] = [...(opts.prefix ?? []), ...argv];
  const child = spawn(file!, rest, {
    cwd: REPO.pathname,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d) => (text += d));
  child.stderr!.on('data', (d) => (text += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    output: () => text,
    exited,
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Poll `cond` every 50 ms until it holds; after `timeoutMs`, fail with `what` and `context()` (the children's output). */
export async function waitFor<T>(cond: () => T | Promise<T>, timeoutMs: number, what: string, context: () => string = () => ''): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms\n${context()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every run directory under `out` (relative), from its result.json files; none under .vncua-queue. */
export function runDirs(out: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (!e.isDirectory() || e.name === 'recording' || e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (existsSync(join(p, 'result.json'))) found.push(relative(out, p));
      else walk(p);
    }
  };
  walk(out);
  return found.sort();
}
