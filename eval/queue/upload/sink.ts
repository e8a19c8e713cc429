/**
 * The ResultsSink of a worker that does not see the results root: each attempt writes into a local temp dir;
 * a finished one is uploaded to the coordinator's results receiver (receiver.ts, protocol.ts): every file
 * streamed from disk (never whole in memory), a few at once over keep-alive connections, each checked by the
 * receiver against its size and sha256 and retried with backoff when it fails; then the commit puts the run
 * in place, and the local staging dir is removed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { VncuaError } from '../../../harness/errors.ts';
import type { ResultsSink } from '../results-sink.ts';
import { certificateError, isCertificateError } from '../tls.ts';
import { checkRelPath } from './paths.ts';
import { API, type CommitBody, type CommitFile, encodePath, SHA_HEADER, SIZE_HEADER } from './protocol.ts';

/** Options of `uploadSink`. */
export interface UploadSinkOptions {
  /** The receiver's URL (`http://host:port/`, from the suite manifest). */
  url: string;
  /** The receiver's token (from the suite manifest). */
  token: string;
  /** Where staging dirs are made (default `<os tmpdir>/vncua-queue-staging`). */
  tmpRoot?: string;
  /** Aborting cancels every upload in progress (their staging dirs are kept). */
  signal?: AbortSignal;
  /** Files uploaded at once (default 4). */
  parallel?: number;
  /** Tries of each request before giving up (default 4). */
  attempts?: number;
  /** Wait before the first retry, doubled after each (default 250 ms). */
  backoffMs?: number;
  /** A request with no progress this long fails (and is retried; default 60 s). */
  idleTimeoutMs?: number;
}

/** A ResultsSink that uploads; `close()` drops its idle keep-alive connections. */
export interface UploadSink extends ResultsSink {
  /**
   * Ask the receiver once (a DELETE of an upload that does not exist) within `timeoutMs`: true when it answers and takes
   * the token; false when it does not answer (the coordinator may be restarting) or refuses the token; a refused TLS
   * certificate is QUEUE_ERR_TLS, a setup error of this worker.
   */
  check(timeoutMs?: number): Promise<boolean>;
  close(): void;
}

/** One answer of the receiver. */
interface Answer {
  status: number;
  body: { code?: string; message?: string; [k: string]: unknown } | null;
}

/** A file to PUT: read from `path`; `sha256` is set once it was read whole. */
interface FileBody {
  path: string;
  sha256: string;
}

/** A network failure (no answer), worth retrying. */
class NoAnswer extends Error {}

/** Make the sink (see the file comment). */
export function uploadSink(o: UploadSinkOptions): UploadSink {
  let base: URL;
  try {
    base = new URL(o.url);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new VncuaError('QUEUE_ERR_UPLOAD', `The results receiver URL ${JSON.stringify(o.url)} is not an http:// or https:// URL: take it from the suite manifest.`, {
      details: { url: o.url },
    });
  }
  const where = `${base.protocol}//${base.host}`;
  const secure = base.protocol === 'https:';
  const parallel = Math.max(1, o.parallel ?? 4);
  const agent = secure ? new HttpsAgent({ keepAlive: true, maxSockets: parallel + 1 }) : new HttpAgent({ keepAlive: true, maxSockets: parallel + 1 });
  const attempts = Math.max(1, o.attempts ?? 4);
  const backoff = o.backoffMs ?? 250;
  const idle = o.idleTimeoutMs ?? 60_000;
  const root = resolve(o.tmpRoot ?? join(tmpdir(), 'vncua-queue-staging'));

  const send = (method: string, path: string, signal: AbortSignal, body?: Buffer | FileBody, headers: Record<string, string | number> = {}): Promise<Answer> =>
    new Promise<Answer>((ok, fail) => {
      const req = (secure ? httpsRequest : httpRequest)(new URL(path, base), {
        method,
        agent,
        signal,
        timeout: idle,
        headers: { authorization: `Bearer ${o.token}`, ...headers, ...(Buffer.isBuffer(body) ? { 'content-type': 'application/json', 'content-length': body.length } : {}) },
      });
      req.on('timeout', () => req.destroy(new NoAnswer(`no progress for ${idle} ms`)));
      req.on('error', (e: NodeJS.ErrnoException) => {
        if (signal.aborted) fail(e);
        // A refused certificate will be refused again: no retry.
        else if (secure && isCertificateError(e)) fail(certificateError(`The results receiver at ${where}`, where, e));
        else fail(new NoAnswer(e.code ?? e.message));
      });
      req.on('response', (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => fail(new NoAnswer(e.message)));
        res.on('end', () => {
          let parsed: Answer['body'] = null;
          try {
            parsed = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : null;
          } catch {
            parsed = { message: Buffer.concat(chunks).toString('utf8').slice(0, 300) };
          }
          ok({ status: res.statusCode ?? 0, body: parsed });
        });
      });
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else {
        // The file streamed from disk in 1 MiB reads, hashed on the way; its sha256 follows as a trailer.
        const rs = createReadStream(body.path, { highWaterMark: 1024 * 1024 });
        const h = createHash('sha256');
        rs.on('data', (c) => h.update(c as Buffer));
        rs.on('error', (e) => req.destroy(e));
        rs.on('end', () => {
          body.sha256 = h.digest('hex');
          req.addTrailers({ [SHA_HEADER]: body.sha256 });
          req.end();
        });
        rs.pipe(req, { end: false });
      }
    });

  /** `send` with retries of no-answers, 5xx (but 507), 408, 429 and those in `retryOn`; an Answer otherwise, or the last failure thrown as QUEUE_ERR_UPLOAD. */
  const call = async (what: string, signal: AbortSignal, retryOn: number[], go: () => Promise<Answer>): Promise<Answer> => {
    let last = '';
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await sleep(backoff * 2 ** (i - 1) * (0.75 + Math.random() / 2), undefined, { signal }).catch(() => undefined);
      if (signal.aborted) throw aborted(what, signal);
      let a: Answer;
      try {
        a = await go();
      } catch (e) {
        if (signal.aborted) throw aborted(what, signal);
        if (e instanceof VncuaError) throw e;
        last = `no answer (${(e as Error).message})`;
        continue;
      }
      const retry = (a.status >= 500 && a.status !== 507) || a.status === 408 || a.status === 429 || retryOn.includes(a.status);
      if (!retry) return a;
      last = `HTTP ${a.status}: ${a.body?.message ?? ''}`;
    }
    throw new VncuaError(
      'QUEUE_ERR_UPLOAD',
      `Uploading the run to the results receiver at ${where} failed at ${what} after ${attempts} tries (last: ${last}). Check that the coordinator is running and that this machine reaches its address; the run's staging dir is kept.`,
      { details: { url: where, step: what, last } },
    );
  };

  const refused = (what: string, a: Answer, rel: string): VncuaError => {
    const code = a.body?.code;
    const details = { url: where, step: what, status: a.status, receiverCode: code };
    if (a.status === 409 && code === 'QUEUE_ERR_ALREADY_FINISHED') {
      return new VncuaError(
        'QUEUE_ERR_ALREADY_FINISHED',
        `${rel} already holds a finished run in the results root (another attempt finished first): this attempt was not committed.`,
        {
          details,
        },
      );
    }
    if (a.status === 401) {
      return new VncuaError(
        'QUEUE_ERR_UPLOAD',
        `The results receiver at ${where} refused the upload token (HTTP 401): the token is wrong. Use the suite manifest of the coordinator that runs now (a restarted coordinator has a new token).`,
        { details },
      );
    }
    if (code === 'QUEUE_ERR_BAD_PATH') return new VncuaError('QUEUE_ERR_BAD_PATH', `The results receiver refused a path at ${what}: ${a.body?.message ?? ''}`, { details });
    const hint = a.status === 507 ? ' Free space on the coordinator.' : '';
    return new VncuaError('QUEUE_ERR_UPLOAD', `The results receiver at ${where} refused ${what} (HTTP ${a.status}): ${a.body?.message ?? 'no reason given'}.${hint}`, { details });
  };

  return {
    async staging(jobId: string, token: string): Promise<string> {
      const dir = join(root, safeName(jobId), safeName(token));
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      return dir;
    },

    async commit(stagingDir: string, rel: string, opts: { signal?: AbortSignal } = {}): Promise<void> {
      checkRelPath(rel, 'run');
      const signal = AbortSignal.any([o.signal, opts.signal].filter((s): s is AbortSignal => s !== undefined));
      const { files, dirs } = await listTree(stagingDir);
      if (signal.aborted) throw aborted('begin', signal);
      const listed: CommitFile[] = [];
      const begun = await call('begin', signal, [], () => send('POST', API, signal));
      if (begun.status !== 201 || typeof begun.body?.id !== 'string') throw refused('begin', begun, rel);
      const id = begun.body.id;
      let done = false;
      try {
        await pool(files, parallel, async (f) => {
          const what = `file ${f.path} (${f.size} bytes)`;
          const file: FileBody = { path: f.abs, sha256: '' };
          const a = await call(what, signal, [422], () =>
            send('PUT', `${API}/${id}/f/${encodePath(f.path)}`, signal, file, {
              'content-type': 'application/octet-stream',
              'transfer-encoding': 'chunked',
              trailer: SHA_HEADER,
              [SIZE_HEADER]: f.size,
            }),
          );
          if (a.status !== 201) throw refused(what, a, rel);
          listed.push({ path: f.path, size: f.size, sha256: file.sha256 });
        });
        const body: CommitBody = { rel, files: listed, dirs };
        const json = Buffer.from(JSON.stringify(body));
        const a = await call('commit', signal, [], () => send('POST', `${API}/${id}/commit`, signal, json));
        if (a.status !== 200) throw refused('commit', a, rel);
        done = true;
      } finally {
        if (!done) {
          // Drop the half upload on the receiver (best effort; its sweep removes it otherwise).
          const quick = AbortSignal.timeout(5000);
          await send('DELETE', `${API}/${id}`, quick).catch(() => undefined);
        }
      }
      await dropStaging(stagingDir);
    },

    discard: dropStaging,

    async check(timeoutMs = 5000): Promise<boolean> {
      try {
        const a = await send('DELETE', `${API}/${randomBytes(16).toString('hex')}`, AbortSignal.timeout(timeoutMs));
        return a.status !== 401;
      } catch (e) {
        if (e instanceof VncuaError) throw e; // QUEUE_ERR_TLS
        return false;
      }
    },

    close(): void {
      agent.destroy();
    },
  };
}

/** A job id or token as one directory name. */
function safeName(s: string): string {
  const n = s.replace(/[^A-Za-z0-9._@#=+-]/g, '_').slice(0, 200);
  return n === '' || n === '.' || n === '..' ? '_' : n;
}

/** Remove a staging dir and its job's dir when that is left empty. */
async function dropStaging(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await rmdir(dirname(dir)).catch(() => undefined);
}

function aborted(what: string, signal: AbortSignal): VncuaError {
  return new VncuaError('QUEUE_ERR_UPLOAD', `The upload was cancelled at ${what}; the run's staging dir is kept.`, {
    cause: signal.reason,
    details: { step: what, aborted: true },
  });
}

/** Every file (relative path, size) and directory under `dir`; QUEUE_ERR_UPLOAD for anything else (a symlink). */
async function listTree(dir: string): Promise<{ files: Array<{ path: string; size: number; abs: string }>; dirs: string[] }> {
  const files: Array<{ path: string; size: number; abs: string }> = [];
  const dirs: string[] = [];
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const abs = join(e.parentPath, e.name);
    const path = abs.slice(dir.length + 1);
    if (e.isDirectory()) dirs.push(path);
    else if (e.isFile()) files.push({ path, size: (await lstat(abs)).size, abs });
    else {
      throw new VncuaError('QUEUE_ERR_UPLOAD', `The staging dir holds ${path}, which is not a file or directory (a symlink?): a run is uploaded as plain files only.`, {
        details: { file: abs },
      });
    }
  }
  return { files: files.sort((a, b) => b.size - a.size), dirs: dirs.sort() };
}

/** Run `fn` on every item, `n` at once; the first failure stops taking new items and is thrown. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown = null;
  const lane = async () => {
    while (failed === null && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (e) {
        failed ??= e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
  if (failed !== null) throw failed;
}
