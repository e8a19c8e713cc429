/**
 * Test-only: a TCP proxy that breaks uploads on purpose (a link cut, a worker that stops mid-file), a staged
 * run with a recording of real size, and a digest of a directory tree to compare two trees by.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { join } from 'node:path';
import { writeVncuaRun } from '../../../recorder/process/test-helpers/runs.ts';

/** A proxy on 127.0.0.1 in front of `target` (an http:// URL). */
export interface FaultyProxy {
  url: string;
  /** Connections cut so far. */
  cuts: number;
  /** Connections stalled so far (their bytes past the limit held back). */
  stalls: number;
  /** Cut every connection and refuse new ones (the worker's host is gone). */
  kill(): void;
  close(): Promise<void>;
}

/**
 * Forward to `target`; once a connection has carried `afterBytes` bytes from the client, 'cut' resets it
 * (the first `times` such connections), 'stall' forwards nothing more on it (the peer waits forever).
 */
export async function faultyProxy(target: string, o: { afterBytes: number; mode: 'cut' | 'stall'; times?: number }): Promise<FaultyProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  let left = o.times ?? 1;
  let dead = false;
  const server = createServer((client) => {
    if (dead) return client.resetAndDestroy();
    const upstream = new Socket();
    upstream.connect(Number(t.port), t.hostname);
    sockets.add(client).add(upstream);
    const drop = () => {
      sockets.delete(client);
      sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
    upstream.on('data', (d) => client.write(d));
    let n = 0;
    let held = false;
    client.on('data', (d: Buffer) => {
      if (held) return;
      n += d.length;
      if (n > o.afterBytes && left > 0) {
        left--;
        const keep = d.subarray(0, d.length - (n - o.afterBytes));
        upstream.write(keep);
        if (o.mode === 'cut') {
          proxy.cuts++;
          // Let the first part reach the receiver, then reset both sides.
          setImmediate(() => {
            client.resetAndDestroy();
            upstream.resetAndDestroy();
          });
        } else {
          proxy.stalls++;
          held = true;
        }
        return;
      }
      upstream.write(d);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as { port: number }).port;
  const proxy: FaultyProxy = {
    url: `http://127.0.0.1:${port}/`,
    cuts: 0,
    stalls: 0,
    kill() {
      dead = true;
      for (const s of sockets) s.resetAndDestroy();
    },
    close: () =>
      new Promise<void>((ok) => {
        dead = true;
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
  return proxy;
}

/**
 * Stage a run in `dir` as a worker's attempt leaves it: a vncua run (trace, result.json, task.json,
 * recording/) plus a server stream of `recordingBytes` random bytes (incompressible, like a busy screen's
 * raw updates) and an empty directory.
 */
export async function writeStagedRun(dir: string, recordingBytes = 8 * 1024 * 1024): Promise<void> {
  await writeVncuaRun(dir, { success: { index: 0, dt: 150, phase: 'immediate' } });
  await writeFile(join(dir, 'recording', 'server.1.rfb.bin'), randomBytes(recordingBytes));
  await writeFile(join(dir, 'recording', 'server.1.time.bin'), Buffer.alloc(0));
  await mkdir(join(dir, 'action_screenshots'), { recursive: true });
}

/** Every entry under `dir` (relative path -> 'dir', or size and sha256 of a file), sorted; entries under a name in `skip` left out. */
export async function treeDigest(dir: string, skip: readonly string[] = []): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const names = (await readdir(dir, { recursive: true })).sort();
  for (const name of names) {
    if (skip.some((s) => name === s || name.startsWith(`${s}/`))) continue;
    const p = join(dir, name);
    const st = await stat(p);
    if (st.isDirectory()) out[name] = 'dir';
    else {
      const h = createHash('sha256');
      for await (const c of createReadStream(p)) h.update(c as Buffer);
      out[name] = `${st.size} ${h.digest('hex')}`;
    }
  }
  return out;
}
