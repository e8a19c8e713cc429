/**
 * The coordinator side of bench/queue-upload.ts, in a process of its own (as the coordinator is), driven over
 * IPC: `http OUT TOKEN` runs the results receiver; `redis OUT PORT` consumes runs sent as Redis stream entries
 * (XREAD, 256 KiB chunks), writes each file as it comes, checks its size and sha256, deletes what it consumed
 * (XDEL), and renames the run into place. Both answer { mem } with the process's peak RSS; their first message holds the RSS when ready.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Redis } from 'ioredis';
import { startResultsReceiver } from '../../eval/queue/upload/receiver.ts';

const [mode, out, arg] = process.argv.slice(2) as [string, string, string];
const send = (m: unknown) => process.send?.(m);
process.on('disconnect', () => process.exit(0)); // the bench is gone
const status = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) * 1024;
const peakRss = () => status('VmHWM');

if (mode === 'http') {
  const rx = await startResultsReceiver({ out, token: arg });
  send({ url: rx.url, rss: status('VmRSS') });
  process.on('message', (m: { mem?: true; stop?: true }) => {
    if (m.mem) send({ mem: peakRss() });
    if (m.stop) void rx.close().then(() => process.exit(0));
  });
} else {
  const redis = new Redis({ host: '127.0.0.1', port: Number(arg), lazyConnect: true });
  await redis.connect();
  send({ ready: true, rss: status('VmRSS') });
  process.on('message', (m: { mem?: true; stop?: true; consume?: string; rel?: string }) => {
    if (m.mem) send({ mem: peakRss() });
    if (m.stop) void redis.quit().then(() => process.exit(0));
    if (m.consume) {
      consume(m.consume, m.rel!).then(
        () => send({ done: m.consume }),
        (e: Error) => send({ failed: m.consume, message: e.message }),
      );
    }
  });
}

/** Fields of a stream entry as a map of name -> Buffer. */
function fields(list: Buffer[]): Map<string, Buffer> {
  const f = new Map<string, Buffer>();
  for (let i = 0; i + 1 < list.length; i += 2) f.set(list[i]!.toString(), list[i + 1]!);
  return f;
}

/** The entries of an XREAD answer for one stream: RESP3's map as ioredis gives it ([key, entries]), or RESP2's [[key, entries]]. */
function entriesOf(reply: unknown): Array<[Buffer, Buffer[]]> {
  if (reply === null || reply === undefined) return [];
  const r = reply as unknown[];
  if (Buffer.isBuffer(r[0])) return r[1] as Array<[Buffer, Buffer[]]>;
  return (r as Array<[Buffer, Array<[Buffer, Buffer[]]>]>)[0]![1];
}

async function consume(key: string, rel: string): Promise<void> {
  const redis = new Redis({ host: '127.0.0.1', port: Number(arg) });
  const tmp = join(out, '.incoming-redis', key);
  const open = new Map<string, { ws: WriteStream; hash: ReturnType<typeof createHash>; n: number }>();
  const fileOf = async (p: string) => {
    let f = open.get(p);
    if (!f) {
      await mkdir(dirname(join(tmp, p)), { recursive: true });
      f = { ws: createWriteStream(join(tmp, p)), hash: createHash('sha256'), n: 0 };
      open.set(p, f);
    }
    return f;
  };
  let last = '0';
  try {
    for (;;) {
      const entries = entriesOf(await redis.callBuffer('XREAD', 'COUNT', 16, 'BLOCK', 10_000, 'STREAMS', key, last));
      if (entries.length === 0) throw new Error(`no entry on ${key} for 10 s`);
      const ids: Buffer[] = [];
      for (const [id, list] of entries) {
        ids.push(id);
        last = id.toString();
        const f = fields(list);
        const t = f.get('t')!.toString();
        const p = f.get('p')?.toString() ?? '';
        if (t === 'chunk') {
          const file = await fileOf(p);
          const d = f.get('d')!;
          file.hash.update(d);
          file.n += d.length;
          if (!file.ws.write(d)) await new Promise<void>((r) => file.ws.once('drain', () => r()));
        } else if (t === 'file') {
          const file = await fileOf(p);
          await new Promise<void>((ok, fail) => file.ws.end((e?: Error | null) => (e ? fail(e) : ok())));
          const sha = file.hash.digest('hex');
          if (file.n !== Number(f.get('n')!.toString()) || sha !== f.get('h')!.toString()) throw new Error(`${p}: size or sha256 mismatch`);
          open.delete(p);
        } else if (t === 'dir') {
          await mkdir(join(tmp, p), { recursive: true });
        } else if (t === 'end') {
          await redis.callBuffer('DEL', key);
          const target = join(out, rel);
          await mkdir(dirname(target), { recursive: true });
          await rename(tmp, target);
          return;
        }
      }
      await redis.callBuffer('XDEL', key, ...ids);
    }
  } catch (e) {
    for (const f of open.values()) f.ws.destroy();
    await rm(tmp, { recursive: true, force: true });
    throw e;
  } finally {
    redis.disconnect();
  }
}
