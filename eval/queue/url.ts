/**
 * The queue's address: `redis://[[user]:password@]HOST:PORT/N` (or `rediss://` for TLS), parsed into
 * ioredis connection options. The password never appears in messages (redactUrl).
 */
import { VncuaError } from '../../harness/errors.ts';

/** A parsed queue URL. */
export interface QueueUrl {
  host: string;
  port: number;
  /** Redis database number (the path's /N; default 0). */
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
  /** The URL without its password, for messages. */
  display: string;
}

function bad(text: string, why: string): VncuaError {
  return new VncuaError('QUEUE_ERR_BAD_URL', `Bad queue URL "${redactUrl(text)}": ${why}; expected redis://[:PASSWORD@]HOST:PORT/N, e.g. redis://127.0.0.1:6379/0.`, {
    details: { url: redactUrl(text) },
  });
}

/** The URL with any password replaced by `***` (for messages; works on malformed text too). */
export function redactUrl(text: string): string {
  return text.replace(/^([a-z]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/** Parse a queue URL; QUEUE_ERR_BAD_URL when it is not `redis[s]://[[user]:password@]HOST:PORT[/N]`. */
export function parseQueueUrl(text: string): QueueUrl {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw bad(text, 'not a URL');
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw bad(text, `the scheme is ${u.protocol.replace(/:$/, '')}, not redis or rediss`);
  if (!u.hostname) throw bad(text, 'no host');
  if (u.port === '') throw bad(text, 'no port');
  const port = Number(u.port);
  const path = u.pathname.replace(/^\//, '');
  if (path !== '' && !/^\d{1,2}$/.test(path)) throw bad(text, `the database "${path}" is not a number 0-99`);
  if (u.search || u.hash) throw bad(text, 'query strings and fragments are not supported');
  const db = path === '' ? 0 : Number(path);
  const username = u.username ? decodeURIComponent(u.username) : undefined;
  const password = u.password ? decodeURIComponent(u.password) : undefined;
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    host,
    port,
    db,
    ...(username ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    tls: u.protocol === 'rediss:',
    display: `${u.protocol}//${username ?? ''}${password !== undefined ? ':***' : ''}${username || password !== undefined ? '@' : ''}${u.host}/${db}`,
  };
}
