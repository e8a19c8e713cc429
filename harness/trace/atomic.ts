/**
 * Atomic file replacement: write `<path>.tmp-<pid>-<n>`, then `rename` it over `<path>`.
 * rename(2) within one directory is atomic, so a reader (or a `kill -9` at any instant) sees either
 * the previous complete file or the new complete file, never a torn one.
 *
 * Durability trade-off: by default nothing is fsynced. A process crash (kill -9, OOM, uncaught
 * exception) does not lose data already handed to the kernel: it stays in the page cache and
 * reaches disk. Only a power loss or kernel crash could lose the last writes (and, on some file
 * systems, leave a zero-length file after the rename). `{ durable: true }` fsyncs the temp file
 * before the rename and the directory after it, which survives power loss at a cost of a few ms
 * per write on a real disk.
 */
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { VncuaError } from '../errors.ts';
import { redactSecrets } from '../secrets/registry.ts';

/** Options of `writeFileAtomic`. */
export interface AtomicWriteOptions {
  /** fsync the file and its directory (survives power loss; slower). Default false. */
  durable?: boolean;
  /** File mode of the new file (e.g. 0o600 for one holding a secret), set as it is created, before any byte is written. Default 0o666 less the umask. */
  mode?: number;
}

let tmpCounter = 0;

/**
 * Replaces `path` with `data` atomically (temp file + rename); failures throw `TRACE_ERR_WRITE` with the path.
 * Every secret value of the process (harness/secrets/registry.ts) is written as its `{{secret:NAME}}` placeholder.
 */
export async function writeFileAtomic(path: string, text: string, options: AtomicWriteOptions = {}): Promise<void> {
  const data = redactSecrets(text);
  const tmp = `${path}.tmp-${process.pid}-${++tmpCounter}`;
  try {
    if (options.durable) await writeAndSync(tmp, data, options.mode);
    else await writeFile(tmp, data, options.mode === undefined ? undefined : { mode: options.mode });
    await rename(tmp, path);
    if (options.durable) await syncDir(dirname(path));
  } catch (cause) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw writeError(path, cause, { tmp });
  }
}

/** Removes `path` if it exists (fsyncing the directory when durable); failures throw `TRACE_ERR_WRITE`. */
export async function removeFile(path: string, options: AtomicWriteOptions = {}): Promise<void> {
  try {
    await rm(path, { force: true });
    if (options.durable) await syncDir(dirname(path));
  } catch (cause) {
    throw writeError(path, cause);
  }
}

/** A `TRACE_ERR_WRITE` for `path`. */
export function writeError(path: string, cause: unknown, details: Record<string, unknown> = {}): VncuaError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new VncuaError('TRACE_ERR_WRITE', `Could not write trace file ${path}: ${reason}. Check that the output directory exists, is writable and the disk is not full.`, {
    cause,
    details: { path, ...details },
  });
}

async function writeAndSync(path: string, data: string, mode: number | undefined): Promise<void> {
  const fh = await open(path, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
