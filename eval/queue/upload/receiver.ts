/**
 * The coordinator's results receiver: workers that do not see the results root upload each finished run
 * here over HTTP, or HTTPS with a certificate (protocol.ts), and it lands in `<out>/<rel>` exactly as a local run writes it.
 *
 * TRANSPORT DECISION (bench/queue-upload.ts, bench/RESULTS.md "queue-upload"): HTTP, not Redis streams.
 * One real run of 29.4 MiB (8 files; a `vncua eval` recording extended to 4 minutes of busy screen), worker to
 * coordinator on 127.0.0.1, median of 9 (2026-11-27, 2 cores at load 19): HTTP 337 ms (87 MiB/s); Redis streams
 * (XADD of 256 KiB chunks, 8 in flight, an XREAD consumer writing the files, XDEL as consumed) 1.32x that (1.12x
 * in a run of 5 at load 16), and Redis's used_memory_peak went from 0.9 to 31.0 MiB: the consumer falls behind and
 * the whole run sits in the Redis that holds every job and lock of the queue (a 30-minute recording is ~220 MiB).
 * HTTP is faster, keeps run bytes out of Redis, streams each file to disk and checks it by sha256; so HTTP.
 *
 * How an upload lands: `POST /v1/uploads` makes `<out>/.vncua-queue/incoming/<id>/`; each file streams to
 * `incoming/<id>.part/<random>` (never held in memory), is checked against its declared size and sha256, and
 * only then renamed into `incoming/<id>/<path>`; the commit checks that the upload holds exactly the listed
 * files, refuses (409) when `<out>/<rel>` holds a finished run (eval/layout.ts readDirState), moves a leftover
 * there aside, and renames `incoming/<id>` to `<out>/<rel>` (one rename: the run appears whole or not at
 * all). An upload whose worker died stays under `.vncua-queue/incoming/`, which scoring and the viewer skip,
 * and is swept once untouched for `incomingMaxAgeMs`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { cp, mkdir, readdir, rename, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { VncuaError } from '../../../harness/errors.ts';
import { checkOutputDir } from '../../../harness/trace/out-dir.ts';
import { readDirState } from '../../layout.ts';
import { checkRelPath, QUEUE_DIR, resolveInside } from './paths.ts';
import { API, type CommitBody, SHA_HEADER, SIZE_HEADER, UPLOAD_ID } from './protocol.ts';

/** Options of `startResultsReceiver`. */
export interface ResultsReceiverOptions {
  /** The suite's results root. */
  out: string;
  /** The secret every request must carry (at least 16 characters; `newUploadToken()` makes one). */
  token: string;
  /** Address to listen on (default 127.0.0.1; give the coordinator's address workers reach). */
  host?: string;
  /** Port (default 0: OS-chosen). */
  port?: number;
  /** Aborting closes the receiver. */
  signal?: AbortSignal;
  /** An incoming upload untouched this long is swept (default 6 h). */
  incomingMaxAgeMs?: number;
  /** A request whose socket stays silent this long is dropped (default 120 s). */
  idleTimeoutMs?: number;
  /** Serve HTTPS with this certificate and key (PEM): the URL is https://; workers trust its CA (NODE_EXTRA_CA_CERTS). */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

/** A running receiver. */
export interface ResultsReceiver {
  /** `http://host:port/` (`https://` with `tls`): what workers are given (with the token) to upload to. */
  url: string;
  /** Remove incoming uploads untouched for `maxAgeMs` (default the receiver's incomingMaxAgeMs); returns how many. */
  sweep(maxAgeMs?: number): Promise<number>;
  /** Stop listening and drop open connections. */
  close(): Promise<void>;
}

/** A fresh random token for the receiver (256 bits, base64url). */
export function newUploadToken(): string {
  return randomBytes(32).toString('base64url');
}

/** An HTTP error answer. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const MAX_COMMIT_BODY = 32 * 1024 * 1024;

const badSha = () => new HttpError(400, 'QUEUE_ERR_UPLOAD', `Give the file's sha256 in lowercase hex as header or trailer ${SHA_HEADER}.`);

/** Start the receiver over `out` (see the file comment); QUEUE_ERR_RESULTS_UNWRITABLE when `out` cannot be written. */
export async function startResultsReceiver(o: ResultsReceiverOptions): Promise<ResultsReceiver> {
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? 0;
  if (typeof o.token !== 'string' || o.token.length < 16) {
    throw new VncuaError('QUEUE_ERR_LISTEN', 'The results receiver needs a token of at least 16 characters (newUploadToken() makes one).', { details: { host, port } });
  }
  const out = resolve(o.out);
  const queueDir = join(out, QUEUE_DIR);
  const incoming = join(queueDir, 'incoming');
  const trash = join(queueDir, 'trash');
  await ensureWritable(out, incoming);
  const maxAge = o.incomingMaxAgeMs ?? 6 * 3600_000;
  const tokenHash = createHash('sha256').update(o.token).digest();
  /** Uploads committed by this receiver (id -> rel): a commit retried after a lost answer succeeds again. */
  const committed = new Map<string, string>();
  /** Uploads with a request in flight: never swept. */
  const active = new Map<string, number>();
  /** Commits in progress per run dir: one at a time. */
  const locks = new Map<string, Promise<unknown>>();

  const authorized = (req: IncomingMessage): boolean => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m) return false;
    return timingSafeEqual(createHash('sha256').update(m[1]!).digest(), tokenHash);
  };
  const uploadDir = async (id: string): Promise<string> => {
    if (!UPLOAD_ID.test(id)) throw new HttpError(404, 'QUEUE_ERR_UPLOAD', `No upload ${id.slice(0, 40)} here.`);
    const dir = join(incoming, id);
    if (!(await stat(dir).catch(() => null))?.isDirectory()) {
      throw new HttpError(404, 'QUEUE_ERR_UPLOAD', `No upload ${id} here (it was committed, dropped or swept): upload the run again.`);
    }
    return dir;
  };

  const begin = async (): Promise<object> => {
    const id = randomBytes(16).toString('hex');
    await mkdir(join(incoming, id));
    return { id };
  };

  const putFile = async (req: IncomingMessage, id: string, encPath: string): Promise<object> => {
    const dir = await uploadDir(id);
    let path: string;
    try {
      path = encPath.split('/').map(decodeURIComponent).join('/');
    } catch {
      throw new HttpError(400, 'QUEUE_ERR_BAD_PATH', 'The file path is not valid percent-encoding.');
    }
    if (encPath.split('/').some((s) => decodeURIComponent(s).includes('/'))) throw new HttpError(400, 'QUEUE_ERR_BAD_PATH', 'A file path segment holds an encoded "/".');
    const segs = pathOrHttp(path, 'file');
    const size = Number(req.headers[SIZE_HEADER]);
    if (!Number.isSafeInteger(size) || size < 0) throw new HttpError(400, 'QUEUE_ERR_UPLOAD', `Header ${SIZE_HEADER} must be the file's size in bytes.`);
    // The sha256 comes as a header, or as a trailer after the body (a sender that hashes while it sends).
    const declaredSha = () => String(req.headers[SHA_HEADER] ?? req.trailers[SHA_HEADER] ?? '');
    if (req.headers[SHA_HEADER] !== undefined && !/^[0-9a-f]{64}$/.test(declaredSha())) throw badSha();
    const parts = `${dir}.part`;
    await mkdir(parts, { recursive: true });
    const part = join(parts, randomBytes(8).toString('hex'));
    const hash = createHash('sha256');
    let n = 0;
    const check = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        n += chunk.length;
        if (n > size) return cb(new HttpError(422, 'QUEUE_ERR_UPLOAD', `${path}: more bytes than the declared ${size}.`));
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(req, check, createWriteStream(part, { flags: 'wx', highWaterMark: 1024 * 1024 }));
      if (n !== size) throw new HttpError(422, 'QUEUE_ERR_UPLOAD', `${path}: ${n} bytes arrived, ${size} were declared.`);
      const got = hash.digest('hex');
      const sha = declaredSha();
      if (!/^[0-9a-f]{64}$/.test(sha)) throw badSha();
      if (got !== sha) throw new HttpError(422, 'QUEUE_ERR_UPLOAD', `${path}: its sha256 ${got} is not the declared ${sha}.`);
      const dest = join(dir, ...segs);
      await mkdir(dirname(dest), { recursive: true });
      await rename(part, dest);
      await utimes(dir, new Date(), new Date()).catch(() => undefined);
      return { size, sha256: sha };
    } catch (e) {
      await unlink(part).catch(() => undefined);
      if (e instanceof HttpError) throw e;
      const errno = (e as NodeJS.ErrnoException).code;
      if (errno === 'ENOSPC' || errno === 'EDQUOT')
        throw new HttpError(507, 'QUEUE_ERR_UPLOAD', `The coordinator's disk is full (${errno}) writing ${path}: free space under ${out}.`);
      if (errno === 'ENOTDIR' || errno === 'EISDIR' || errno === 'EEXIST')
        throw new HttpError(400, 'QUEUE_ERR_BAD_PATH', `${path} clashes with another file of the upload (${errno}).`);
      throw e;
    }
  };

  const commit = async (id: string, body: unknown): Promise<object> => {
    const b = body as Partial<CommitBody> | null;
    if (!b || typeof b !== 'object' || !Array.isArray(b.files) || !Array.isArray(b.dirs)) {
      throw new HttpError(400, 'QUEUE_ERR_UPLOAD', 'A commit body is JSON { rel, files: [{ path, size, sha256 }], dirs: [path] }.');
    }
    const relSegs = pathOrHttp(b.rel, 'run');
    const rel = relSegs.join('/');
    if (committed.get(id) === rel) return { rel, again: true };
    const files = new Map<string, number>();
    for (const f of b.files) {
      const segs = pathOrHttp(f?.path, 'file');
      if (!Number.isSafeInteger(f.size)) throw new HttpError(400, 'QUEUE_ERR_UPLOAD', `The commit gives no size for ${f.path}.`);
      files.set(segs.join('/'), f.size);
    }
    const dirs = b.dirs.map((d) => pathOrHttp(d, 'file'));
    // Under the run dir's lock: a commit retried while the first is still moving the upload waits, then sees it done.
    return withLock(locks, rel, async () => {
      if (committed.get(id) === rel) return { rel, again: true };
      const dir = await uploadDir(id);
      // The upload holds exactly the listed files, each of its size (each was checked against its sha256 as it landed).
      const held = await listFiles(dir);
      const missing = [...files].filter(([p, size]) => held.get(p) !== size).map(([p]) => p);
      const extra = [...held.keys()].filter((p) => !files.has(p));
      if (missing.length > 0 || extra.length > 0) {
        throw new HttpError(
          422,
          'QUEUE_ERR_UPLOAD',
          `The upload does not hold the files the commit lists: ${missing.length} missing or of another size (${missing.slice(0, 3).join(', ')}), ${extra.length} not listed (${extra.slice(0, 3).join(', ')}).`,
        );
      }
      for (const d of dirs) await mkdir(join(dir, ...d), { recursive: true });
      const target = await resolveOrHttp(out, relSegs);
      const state = await readDirState(target);
      if (state.state === 'finished') {
        throw new HttpError(409, 'QUEUE_ERR_ALREADY_FINISHED', `${rel} already holds a finished run (status ${state.result.status}); the upload was not committed over it.`);
      }
      await mkdir(dirname(target), { recursive: true });
      await resolveOrHttp(out, relSegs); // the parents just made: still no symlink out
      let aside: string | null = null;
      if (state.state === 'unfinished') {
        aside = join(trash, id);
        await mkdir(trash, { recursive: true });
        await rename(target, aside);
      }
      try {
        await rename(dir, target);
      } catch (e) {
        try {
          if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
          // <out>/<agent> on another filesystem: copy beside the target under a dot name (never scored), then rename.
          const near = join(dirname(target), `.${basename(target)}.incoming-${id}`);
          await cp(dir, near, { recursive: true });
          await rename(near, target);
          await rm(dir, { recursive: true, force: true });
        } catch (e2) {
          if (aside) await rename(aside, target).catch(() => undefined); // the leftover back where it was
          throw e2;
        }
      }
      committed.set(id, rel);
      await rm(`${dir}.part`, { recursive: true, force: true });
      if (aside) await rm(aside, { recursive: true, force: true });
      return { rel };
    });
  };

  const drop = async (id: string): Promise<null> => {
    if (!UPLOAD_ID.test(id)) throw new HttpError(404, 'QUEUE_ERR_UPLOAD', 'No such upload.');
    await rm(join(incoming, id), { recursive: true, force: true });
    await rm(join(incoming, `${id}.part`), { recursive: true, force: true });
    return null;
  };

  const route = async (req: IncomingMessage): Promise<{ status: number; body: object | null; id?: string }> => {
    const url = req.url ?? '/';
    const path = url.split('?')[0]!;
    if (!path.startsWith(`${API}`)) throw new HttpError(404, 'QUEUE_ERR_UPLOAD', `No route ${req.method} ${path.slice(0, 100)}.`);
    const rest = path.slice(API.length);
    if (rest === '' && req.method === 'POST') return { status: 201, body: await begin() };
    const m = /^\/([^/]+)(?:\/(commit|f\/(.+)))?$/.exec(rest);
    if (!m) throw new HttpError(404, 'QUEUE_ERR_UPLOAD', `No route ${req.method} ${path.slice(0, 100)}.`);
    const id = m[1]!;
    return track(active, id, async () => {
      if (m[2] === 'commit' && req.method === 'POST') return { status: 200, body: await commit(id, await readJson(req)) };
      if (m[3] !== undefined && req.method === 'PUT') return { status: 201, body: await putFile(req, id, m[3]) };
      if (m[2] === undefined && req.method === 'DELETE') return { status: 204, body: await drop(id) };
      throw new HttpError(405, 'QUEUE_ERR_UPLOAD', `No route ${req.method} ${path.slice(0, 100)}.`);
    });
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const answer = (status: number, body: object | null) => {
      if (res.headersSent || res.destroyed) return;
      const text = body === null ? '' : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (!authorized(req)) {
      req.resume();
      answer(401, { code: 'QUEUE_ERR_UPLOAD', message: "Wrong or missing upload token: give the token of the coordinator's suite manifest." });
      return;
    }
    route(req).then(
      (r) => answer(r.status, r.body),
      (e: unknown) => {
        req.resume();
        if (e instanceof HttpError) answer(e.status, { code: e.code, message: e.message });
        else if (e instanceof VncuaError) answer(400, { code: e.code, message: e.message });
        else if (req.destroyed || (e as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' || (e as NodeJS.ErrnoException).code === 'ECONNRESET') res.destroy();
        else answer(500, { code: 'QUEUE_ERR_UPLOAD', message: `The receiver failed: ${(e as Error).message}` });
      },
    );
  };

  let server: Server;
  try {
    server = o.tls ? createTlsServer({ cert: o.tls.cert, key: o.tls.key }, handle) : createServer(handle);
  } catch (e) {
    throw new VncuaError(
      'QUEUE_ERR_LISTEN',
      `The results receiver could not use its TLS certificate and key (${(e as Error).message}): give a PEM certificate and its own private key.`,
      { cause: e, details: { host, port, cause: (e as NodeJS.ErrnoException).code ?? 'tls' } },
    );
  }
  server.requestTimeout = 0; // a recording of hundreds of MB may take long on a slow link; idle sockets are dropped instead
  server.timeout = o.idleTimeoutMs ?? 120_000;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((ok, fail) => {
    const onError = (e: NodeJS.ErrnoException) =>
      fail(
        new VncuaError('QUEUE_ERR_LISTEN', `The results receiver could not listen on ${host}:${port} (${e.code ?? e.message}).`, {
          cause: e,
          details: { host, port, cause: e.code },
        }),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      ok();
    });
  });
  const addr = server.address() as AddressInfo;
  const url = `${o.tls ? 'https' : 'http'}://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/`;

  const sweep = async (age = maxAge): Promise<number> => {
    let n = 0;
    const now = Date.now();
    for (const name of await readdir(incoming).catch(() => [] as string[])) {
      const id = name.replace(/\.part$/, '');
      if (active.has(id)) continue;
      const p = join(incoming, name);
      const st = await stat(p).catch(() => null);
      if (!st || now - st.mtimeMs < age) continue;
      await rm(p, { recursive: true, force: true }).catch(() => undefined);
      if (!name.endsWith('.part')) n++;
    }
    return n;
  };
  await rm(trash, { recursive: true, force: true }).catch(() => undefined); // leftovers moved aside by a receiver that died mid-commit
  await sweep();
  const timer = setInterval(() => void sweep().catch(() => undefined), Math.max(1000, Math.min(maxAge / 4, 600_000)));
  timer.unref();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((ok) => {
      clearInterval(timer);
      o.signal?.removeEventListener('abort', onAbort);
      server.close(() => ok());
      server.closeAllConnections();
    });
    return closing;
  };
  const onAbort = () => void close();
  if (o.signal?.aborted) await close();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  return { url, sweep, close };
}

/** QUEUE_ERR_RESULTS_UNWRITABLE unless `out` can hold the queue's directories and a file written there. */
async function ensureWritable(out: string, incoming: string): Promise<void> {
  const fail = (cause: unknown): never => {
    const why = cause instanceof VncuaError ? cause.message : `${(cause as NodeJS.ErrnoException).code ?? ''} ${(cause as Error).message}`.trim();
    throw new VncuaError('QUEUE_ERR_RESULTS_UNWRITABLE', `The results receiver cannot write the results root ${out}: ${why}. Give an --out this machine can write.`, {
      cause,
      details: { out, cause: cause instanceof VncuaError ? cause.code : (cause as NodeJS.ErrnoException).code },
    });
  };
  try {
    await checkOutputDir(out, 'results root');
    await mkdir(incoming, { recursive: true });
    const probe = join(incoming, `.probe-${randomBytes(6).toString('hex')}`);
    await writeFile(probe, 'ok');
    await unlink(probe);
  } catch (e) {
    fail(e);
  }
}

/** Every file under `dir` (relative `/` path -> size). */
async function listFiles(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const abs = join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
    out.set(abs.slice(dir.length + 1), (await stat(abs)).size);
  }
  return out;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > MAX_COMMIT_BODY) throw new HttpError(413, 'QUEUE_ERR_UPLOAD', 'The commit body is too large.');
    chunks.push(c);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'QUEUE_ERR_UPLOAD', 'The commit body is not JSON.');
  }
}

function pathOrHttp(path: unknown, kind: 'run' | 'file'): string[] {
  try {
    return checkRelPath(path, kind);
  } catch (e) {
    throw new HttpError(400, 'QUEUE_ERR_BAD_PATH', (e as Error).message);
  }
}

async function resolveOrHttp(root: string, segs: string[]): Promise<string> {
  try {
    return await resolveInside(root, segs);
  } catch (e) {
    if (e instanceof VncuaError) throw new HttpError(400, e.code, e.message);
    throw e;
  }
}

async function withLock<T>(locks: Map<string, Promise<unknown>>, key: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(fn);
  locks.set(key, run);
  try {
    return await run;
  } finally {
    if (locks.get(key) === run) locks.delete(key);
  }
}

async function track<T>(active: Map<string, number>, id: string, fn: () => Promise<T>): Promise<T> {
  active.set(id, (active.get(id) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    const n = (active.get(id) ?? 1) - 1;
    if (n <= 0) active.delete(id);
    else active.set(id, n);
  }
}
