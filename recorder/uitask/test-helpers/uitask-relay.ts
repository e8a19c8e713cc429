/**
 * Test-only: a TCP relay in front of a VNC server that records its first connection the way the
 * Python uitask recorder does: `client.rfb.bin` / `server.rfb.bin` (the raw bytes of each
 * direction) and `client.time.bin` / `server.time.bin` (per relayed chunk, big-endian u64 epoch
 * NANOSECONDS then big-endian u64 cumulative byte length), no recording.json.
 * Timestamps come from harness/trace/clock.ts now() (µs precision), the clock vncua traces use, so
 * a test can compare inferred action times with times measured around the actions.
 * Bytes are written synchronously before their time record.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { now } from '../../../harness/trace/clock.ts';

/** A running relay. */
export interface UitaskRelay {
  /** tcp://127.0.0.1:PORT to connect the client to. */
  url: string;
  /** Bytes recorded per direction so far. */
  readonly bytes: { client: number; server: number };
  /** Resolves when the recorded connection has closed (both sockets). */
  readonly done: Promise<void>;
  /** Stop listening, close the connection and the files. */
  close(): Promise<void>;
}

/** One recorded direction: its two files and the running byte count. */
class StreamFiles {
  private readonly data: number;
  private readonly time: number;
  length = 0;
  private closed = false;

  constructor(dir: string, name: 'client' | 'server') {
    this.data = openSync(join(dir, `${name}.rfb.bin`), 'w');
    this.time = openSync(join(dir, `${name}.time.bin`), 'w');
  }

  /** Record one chunk relayed now. */
  write(chunk: Uint8Array): void {
    if (this.closed) return;
    const ns = BigInt(Math.round(now() * 1000)) * 1000n;
    writeSync(this.data, chunk);
    this.length += chunk.length;
    const rec = Buffer.alloc(16);
    rec.writeBigUInt64BE(ns, 0);
    rec.writeBigUInt64BE(BigInt(this.length), 8);
    writeSync(this.time, rec);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fd of [this.data, this.time]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
  }
}

/** Start a relay to `upstream` (tcp://host:port) recording into `dir` (created). Later connections are refused. */
export async function startUitaskRelay(upstream: string, dir: string): Promise<UitaskRelay> {
  const target = new URL(upstream);
  if (target.protocol !== 'tcp:') throw new Error(`the uitask relay dials raw TCP, like uitask; got ${upstream}`);
  mkdirSync(dir, { recursive: true });
  const sockets = new Set<Socket>();
  let files: { client: StreamFiles; server: StreamFiles } | null = null;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const server = createServer((client) => {
    if (files) {
      client.destroy();
      return;
    }
    const f = { client: new StreamFiles(dir, 'client'), server: new StreamFiles(dir, 'server') };
    files = f;
    const up = connect({ host: target.hostname, port: Number(target.port) });
    client.setNoDelay(true);
    up.setNoDelay(true);
    let open = 2;
    for (const s of [client, up]) {
      sockets.add(s);
      s.on('error', () => {
        client.destroy();
        up.destroy();
      });
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        up.destroy();
        if (--open === 0) {
          f.client.close();
          f.server.close();
          resolveDone();
        }
      });
    }
    client.on('data', (chunk: Buffer) => {
      f.client.write(chunk);
      up.write(chunk);
    });
    up.on('data', (chunk: Buffer) => {
      f.server.write(chunk);
      client.write(chunk);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `tcp://127.0.0.1:${port}`,
    get bytes() {
      return { client: files?.client.length ?? 0, server: files?.server.length ?? 0 };
    },
    done,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of [...sockets]) s.destroy();
        files?.client.close();
        files?.server.close();
        if (!files) resolveDone();
        server.close(() => resolve());
      }),
  };
}
