/**
 * Where a queue worker's attempts are written and how a finished one is put in place.
 *
 * An attempt never writes into the run's own directory: it writes into a staging directory, and only
 * a finished attempt is committed to `<out>/<rel>` (rel: `<agent>/<W>_<H>/<task id>[/<n>]`). A worker
 * killed mid-run leaves only its staging directory, which scoring, processing and the viewer never
 * see (they skip `<out>/.vncua-queue/`) and sweepStaging() removes later.
 *
 * sharedSink(out): the worker sees the results root (a shared filesystem): staging under
 * `<out>/.vncua-queue/staging/<jobId>/<token>/`, commit by rename on the same filesystem.
 * The upload sink (eval/queue/upload/) has the same interface and sends the attempt to the coordinator.
 */
import { mkdir, readdir, rename, rm, rmdir } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import { VncuaError } from '../../harness/errors.ts';
import { readDirState } from '../layout.ts';
import { QUEUE_DIR } from './manifest.ts';

/** Where attempts are staged and committed (see the file comment). */
export interface ResultsSink {
  /** A fresh empty directory where one attempt of job `jobId` writes. */
  staging(jobId: string, token: string): Promise<string>;
  /** Put a finished attempt's staged dir at <out>/<rel>, replacing a leftover there but REFUSING (QUEUE_ERR_ALREADY_FINISHED) when <out>/<rel> already holds a finished run; then remove the staging dir. */
  commit(stagingDir: string, rel: string, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Drop an attempt's staging dir. */
  discard(stagingDir: string): Promise<void>;
  /** An upload sink: whether the receiver answers within `timeoutMs` and takes its token (rejects QUEUE_ERR_TLS on a refused certificate). */
  check?(timeoutMs?: number): Promise<boolean>;
}

/** `<out>/.vncua-queue/staging`. */
export function stagingRoot(out: string): string {
  return join(out, QUEUE_DIR, 'staging');
}

/** Names safe as one path component (job ids, tokens). */
const SAFE_NAME = /^[A-Za-z0-9._@#-]+$/;

function checkName(what: string, name: string): void {
  if (!SAFE_NAME.test(name) || name === '.' || name === '..')
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `bad ${what} "${name}" for a staging directory.`, { details: { field: what, value: name } });
}

/** A run's path relative to the results root, checked to stay inside it. */
export function checkRel(rel: string): string {
  const n = normalize(rel);
  if (n.startsWith('..') || n.startsWith(sep) || n === '.' || n.split(sep).some((p) => p.startsWith('.')))
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `bad run path "${rel}": it must be <agent>/<W>_<H>/<task id>[/<n>] inside the results root.`, {
      details: { field: 'rel', value: rel },
    });
  return n;
}

/** The error of a commit refused because the run is already finished there. */
export function alreadyFinished(target: string): VncuaError {
  return new VncuaError('QUEUE_ERR_ALREADY_FINISHED', `${target} already holds a finished run: this attempt was not committed (the finished run is kept).`, {
    details: { dir: target },
  });
}

/** The results sink of a worker that sees the results root `out` (see the file comment). */
export function sharedSink(out: string): ResultsSink {
  const root = stagingRoot(out);
  const trash = join(out, QUEUE_DIR, 'trash');
  return {
    async staging(jobId, token) {
      checkName('job id', jobId);
      checkName('token', token);
      const dir = join(root, jobId, token);
      await rm(dir, { recursive: true, force: true });
      for (let i = 0; ; i++) {
        try {
          await mkdir(dir, { recursive: true });
          return dir;
        } catch (e) {
          // Another attempt of the job removed the job's (empty) directory between our two mkdirs: again.
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || i >= 3) throw e;
        }
      }
    },
    async commit(stagingDir, rel, opts = {}) {
      const target = join(out, checkRel(rel));
      opts.signal?.throwIfAborted();
      const state = await readDirState(target);
      if (state.state === 'finished') throw alreadyFinished(target);
      await mkdir(dirname(target), { recursive: true });
      if (state.state === 'unfinished') {
        // A leftover (an infra_error run being retried, a killed local runner's partial): out of the way first.
        const aside = join(trash, `${Date.now()}-${Math.random().toString(36).slice(2)}`);
        await mkdir(trash, { recursive: true });
        await rename(target, aside).catch((e) => {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        });
        await rm(aside, { recursive: true, force: true }).catch(() => {});
      }
      try {
        // rename(2) of a directory onto a non-empty one fails: two commits of one run cannot both land.
        await rename(stagingDir, target);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST') throw alreadyFinished(target);
        throw e;
      }
      await rmdir(dirname(stagingDir)).catch(() => {}); // the job's directory, once empty
    },
    async discard(stagingDir) {
      await rm(stagingDir, { recursive: true, force: true });
      await rmdir(dirname(stagingDir)).catch(() => {});
    },
  };
}

/**
 * Remove the staging directories under `<out>/.vncua-queue/staging/` of the jobs `dead(jobId)` says no
 * attempt runs for any more (a killed worker's half-written attempt). Resolves to the removed directories.
 */
export async function sweepStaging(out: string, dead: (jobId: string) => boolean): Promise<string[]> {
  const root = stagingRoot(out);
  const removed: string[] = [];
  let jobs: string[];
  try {
    jobs = await readdir(root);
  } catch {
    return removed;
  }
  for (const job of jobs) {
    if (!dead(job)) continue;
    const dir = join(root, job);
    await rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  await rmdir(join(out, QUEUE_DIR, 'trash')).catch(() => {}); // once empty
  return removed;
}
