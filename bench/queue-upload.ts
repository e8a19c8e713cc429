/**
 * How a queue worker that does not see the results root should send a finished run to the coordinator:
 * over HTTP (eval/queue/upload: the receiver and uploadSink) or through Redis streams (XADD of 256 KiB
 * chunks, read back by a consumer that writes each file). The run is a REAL recorded one (`vncua eval`,
 * replay agent, click-button at 1280x800) extended to MINUTES of busy screen (bench/lib/long-run.ts), so its
 * recording is tens of MB, plus its small files. The coordinator side runs in a child process for either;
 * redis-server (Debian, loopback, no persistence) is started here. Runs interleaved, medians.
 *
 * Run: npx tsx bench/queue-upload.ts [RUNS=9] [--minutes M=4]
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { newUploadToken } from '../eval/queue/upload/receiver.ts';
import { uploadSink } from '../eval/queue/upload/sink.ts';
import { treeDigest } from '../eval/queue/upload/test-helpers.ts';
import { makeLongRun } from './lib/long-run.ts';
import { median, quantile } from './stats.ts';

const args = process.argv.slice(2);
const RUNS = Number(args.find((a) => /^\d+$/.test(a)) ?? 9);
const MINUTES = args.includes('--minutes') ? Number(args[args.indexOf('--minutes') + 1]) : 4;
const CHUNK = 256 * 1024;
const WINDOW = 8;
const child = new URL('./lib/queue-upload-child.ts', import.meta.url).pathname;
const MiB = 1024 * 1024;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise((ok) => s.close(ok));
  return port;
}

/** Fork the coordinator side; resolves with its first message. */
function startChild(mode: string, out: string, arg: string): Promise<{ proc: ChildProcess; first: Record<string, unknown> }> {
  const proc = fork(child, [mode, out, arg], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((ok, fail) => {
    proc.once('message', (m) => ok({ proc, first: m as Record<string, unknown> }));
    proc.once('exit', (c) => fail(new Error(`${mode} child exited with ${c}`)));
  });
}

function ask<T>(proc: ChildProcess, msg: object, pick: (m: any) => T | undefined): Promise<T> {
  return new Promise((ok, fail) => {
    const on = (m: any) => {
      if (m.failed) {
        proc.off('message', on);
        fail(new Error(`child: ${m.message}`));
        return;
      }
      const v = pick(m);
      if (v !== undefined) {
        proc.off('message', on);
        ok(v);
      }
    };
    proc.on('message', on);
    proc.send(msg);
  });
}

/** Every file (largest first) and directory of `dir`. */
async function tree(dir: string): Promise<{ files: Array<{ path: string; size: number }>; dirs: string[] }> {
  const files: Array<{ path: string; size: number }> = [];
  const dirs: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(e.parentPath, e.name).slice(dir.length + 1);
    if (e.isDirectory()) dirs.push(path);
    else files.push({ path, size: (await stat(join(dir, path))).size });
  }
  return { files: files.sort((a, b) => b.size - a.size), dirs };
}

/** Send the run in `dir` as entries of stream `key`: 256 KiB chunks, then each file's size and sha256, then `end`; at most WINDOW XADDs in flight. */
async function produce(redis: Redis, key: string, dir: string): Promise<void> {
  const { files, dirs } = await tree(dir);
  const inflight: Promise<unknown>[] = [];
  const add = async (...fv: Array<string | Buffer>) => {
    inflight.push(redis.callBuffer('XADD', key, '*', ...fv));
    if (inflight.length >= WINDOW) await inflight.shift();
  };
  for (const d of dirs) await add('t', 'dir', 'p', d);
  for (const f of files) {
    const h = createHash('sha256');
    for await (const c of createReadStream(join(dir, f.path), { highWaterMark: CHUNK })) {
      h.update(c as Buffer);
      await add('t', 'chunk', 'p', f.path, 'd', c as Buffer);
    }
    await add('t', 'file', 'p', f.path, 'n', String(f.size), 'h', h.digest('hex'));
  }
  await add('t', 'end');
  await Promise.all(inflight);
}

const work = await mkdtemp(join(tmpdir(), 'vncua-bench-upload-'));
const procs: ChildProcess[] = [];
let redisProc: ChildProcess | undefined;
try {
  process.stderr.write(`queue-upload: making a real run extended to ${MINUTES} min...\n`);
  const long = await makeLongRun(join(work, 'run'), { minutes: MINUTES, steps: 100, updateMs: 500 });
  const src = long.run;
  const srcTree = await treeDigest(src);
  const { files } = await tree(src);
  const total = files.reduce((n, f) => n + f.size, 0);
  const big = files[0]!;

  const port = await freePort();
  redisProc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', work], { stdio: 'ignore' });
  let redis: Redis | undefined;
  for (const end = Date.now() + 20_000; !redis; ) {
    const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      redis = c;
    } catch (e) {
      c.disconnect();
      if (Date.now() > end) throw new Error(`redis-server did not answer on port ${port} in 20 s: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const mem = async (field: string) => Number(new RegExp(`\\b${field}:(\\d+)`).exec(String(await redis.call('INFO', 'memory')))?.[1] ?? 0);
  const redisBase = await mem('used_memory');

  const token = newUploadToken();
  const httpOut = join(work, 'out-http');
  const redisOut = join(work, 'out-redis');
  await mkdir(redisOut, { recursive: true });
  const h = await startChild('http', httpOut, token);
  const r = await startChild('redis', redisOut, String(port));
  procs.push(h.proc, r.proc);
  const sink = uploadSink({ url: String(h.first.url), token, tmpRoot: join(work, 'staging') });

  const times: Record<'http' | 'redis', number[]> = { http: [], redis: [] };
  const lastRel: Record<'http' | 'redis', string> = { http: '', redis: '' };
  for (let i = -1; i < RUNS; i++) {
    for (const how of i % 2 === 0 ? (['http', 'redis'] as const) : (['redis', 'http'] as const)) {
      const rel = `replay/1280_800/run-${i + 1}`;
      const staged = how === 'http' ? await sink.staging(`bench.run@1280x800#${i + 1}`, 'a1') : join(work, 'staged-redis');
      await rm(staged, { recursive: true, force: true });
      await cp(src, staged, { recursive: true });
      const t = performance.now();
      if (how === 'http') await sink.commit(staged, rel);
      else {
        const key = `vncua:upload:${i + 1}`;
        const done = ask(r.proc, { consume: key, rel }, (m) => m.done);
        done.catch(() => undefined); // awaited below; a failure must not go unhandled while producing
        await produce(redis!, key, staged);
        await done;
      }
      const ms = performance.now() - t;
      if (i >= 0) times[how].push(ms);
      // Keep the disk small: the previous run goes, the last one is compared below.
      if (lastRel[how]) await rm(join(how === 'http' ? httpOut : redisOut, lastRel[how]), { recursive: true, force: true });
      lastRel[how] = rel;
    }
  }
  for (const how of ['http', 'redis'] as const) {
    const got = await treeDigest(join(how === 'http' ? httpOut : redisOut, lastRel[how]));
    if (JSON.stringify(got) !== JSON.stringify(srcTree)) throw new Error(`${how}: the landed tree differs from the run`);
  }
  const redisPeak = await mem('used_memory_peak');
  const hMem = await ask(h.proc, { mem: true }, (m) => m.mem as number | undefined);
  const rMem = await ask(r.proc, { mem: true }, (m) => m.mem as number | undefined);
  sink.close();
  redis.disconnect();

  const mb = (b: number) => (b / MiB).toFixed(1);
  const row = (name: string, xs: number[]) =>
    `| ${name} | ${median(xs).toFixed(0)} | ${quantile(xs, 0.9).toFixed(0)} | ${(total / MiB / (median(xs) / 1000)).toFixed(0)} | ${(median(xs) / median(times.http)).toFixed(2)}x |`;
  const ratio = median(times.redis) / median(times.http);
  const lines = [
    `### One finished run, worker to coordinator on 127.0.0.1 (${RUNS} runs each, interleaved, after a warm-up)`,
    '',
    `The run: a real \`vncua eval\` click-button run at 1280x800 extended to ${MINUTES} min of busy screen: ${files.length} files, ${mb(total)} MiB (recording/${big.path.replace(/^recording\//, '')} ${mb(big.size)} MiB). Both land the same tree, byte for byte (checked).`,
    '',
    '| transport | median ms | p90 ms | MiB/s | time vs HTTP |',
    '| --- | --- | --- | --- | --- |',
    row('HTTP: uploadSink -> results receiver (4 files at once, keep-alive, sha256 checked per file, commit by rename)', times.http),
    row(`Redis streams: XADD ${CHUNK / 1024} KiB chunks (${WINDOW} in flight) -> XREAD consumer writing files, XDEL as consumed`, times.redis),
    '',
    `- Redis memory: used_memory ${mb(redisBase)} MiB before, used_memory_peak ${mb(redisPeak)} MiB over the Redis runs (${((redisPeak - redisBase) / total).toFixed(2)}x the run's size on top of what was there; the queue's jobs share this Redis).`,
    `- Coordinator side (a node process each), peak RSS (VmHWM) against RSS when ready: HTTP receiver ${mb(hMem)} MiB (${mb(Number(h.first.rss))} at start), Redis stream consumer ${mb(rMem)} MiB (${mb(Number(r.first.rss))} at start).`,
    `- Redis streams take ${ratio.toFixed(2)}x the time of HTTP. Decision: HTTP (${ratio >= 1 ? 'faster, and' : 'slower here, but'} no run bytes pass through the queue's Redis; files stream to disk).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const p of procs) {
    try {
      p.send({ stop: true });
    } catch {
      p.kill();
    }
  }
  redisProc?.kill();
  const exited = (p: ChildProcess) => (p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r)));
  const late = setTimeout(() => {
    for (const p of [...procs, redisProc]) p?.kill('SIGKILL');
  }, 5000);
  await Promise.all([...procs, ...(redisProc ? [redisProc] : [])].map(exited));
  clearTimeout(late);
  await rm(work, { recursive: true, force: true });
}
