/**
 * Connecting to the queue's Redis: probe it once (answers within `timeoutMs`, password accepted,
 * same queue format: QUEUE_ERR_UNREACHABLE, QUEUE_ERR_AUTH, QUEUE_ERR_VERSION), then the options of
 * the long-lived connections BullMQ opens, which reconnect forever (a Redis restart is waited out).
 */
import type { RedisOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { VncuaError } from '../../harness/errors.ts';
import { FORMAT_KEY, QUEUE_FORMAT, VNCUA_VERSION } from './manifest.ts';
import { certificateError, isCertificateError } from './tls.ts';
import type { QueueUrl } from './url.ts';

/** Default time for the first connection to answer. */
export const CONNECT_TIMEOUT_MS = 5000;

function baseOptions(url: QueueUrl): RedisOptions {
  return {
    host: url.host,
    port: url.port,
    db: url.db,
    ...(url.username ? { username: url.username } : {}),
    ...(url.password !== undefined ? { password: url.password } : {}),
    ...(url.tls ? { tls: {} } : {}),
  };
}

/** Options of the long-lived connections: reconnect forever (every 0.1 s rising to 1 s), commands wait for the connection. */
export function redisOptions(url: QueueUrl): RedisOptions {
  return {
    ...baseOptions(url),
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  };
}

/** Map a connection failure to QUEUE_ERR_AUTH / QUEUE_ERR_TLS / QUEUE_ERR_UNREACHABLE. */
export function connectError(url: QueueUrl, e: unknown, timeoutMs: number, timedOut: boolean): VncuaError {
  const msg = (e as Error | undefined)?.message ?? String(e);
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(msg)) {
    return new VncuaError(
      'QUEUE_ERR_AUTH',
      `Redis at ${url.display} refused the ${url.password !== undefined ? 'password' : 'connection without a password'} (${msg.split('.')[0]}): give the right one, redis://:PASSWORD@HOST:PORT/N.`,
      { details: { url: url.display } },
    );
  }
  if (url.tls && isCertificateError(e)) return certificateError(`Redis at ${url.display}`, url.display, e);
  const why = timedOut ? `no answer within ${timeoutMs} ms` : msg;
  // The two scheme mix-ups look like silence or a reset: say which one may be at play.
  const hint = url.tls
    ? ' If that port does not speak TLS, use redis:// instead of rediss://.'
    : code === 'ECONNRESET' || /ECONNRESET|Connection is closed/i.test(msg)
      ? ' If that port speaks TLS, use rediss://.'
      : '';
  return new VncuaError(
    'QUEUE_ERR_UNREACHABLE',
    `Redis at ${url.display} does not answer (${why}): check that redis-server runs there and the address and port are right.${hint}`,
    {
      details: { url: url.display, reason: why },
    },
  );
}

/**
 * Connect once to check the queue answers and is compatible (see the file comment); marks an empty
 * queue with this version's QUEUE_FORMAT. Resolves to a connected client for the caller's own commands
 * (it reconnects forever afterwards); disconnect it when done.
 */
export async function connectQueue(url: QueueUrl, opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Redis> {
  const timeoutMs = opts.timeoutMs ?? CONNECT_TIMEOUT_MS;
  const client = new Redis({ ...baseOptions(url), lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: timeoutMs, enableOfflineQueue: false });
  let last: unknown;
  client.on('error', (e) => (last = e));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    client.disconnect();
  }, timeoutMs);
  const onAbort = () => client.disconnect();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect();
    await client.ping();
  } catch (e) {
    client.disconnect();
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw connectError(url, last ?? e, timeoutMs, timedOut);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
  client.disconnect();
  // The long-lived client: reconnects on its own from here on.
  const live = new Redis(redisOptions(url));
  live.on('error', () => {}); // reconnection is automatic; callers see failures through their commands
  try {
    await live.set(FORMAT_KEY, String(QUEUE_FORMAT), 'NX');
    const format = await live.get(FORMAT_KEY);
    if (format !== String(QUEUE_FORMAT))
      throw new VncuaError(
        'QUEUE_ERR_VERSION',
        `the queue at ${url.display} is in queue format ${format} and this is vncua ${VNCUA_VERSION} (queue format ${QUEUE_FORMAT}): run coordinator and workers from the same vncua version, or use another Redis database (/N).`,
        { details: { url: url.display, format, expected: QUEUE_FORMAT } },
      );
  } catch (e) {
    live.disconnect();
    throw e;
  }
  return live;
}
