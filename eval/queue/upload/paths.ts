/**
 * Checks of the relative paths a worker sends the results receiver: pure ones (`checkRelPath`) on the
 * text, and `resolveInside` on the disk (no symlink leads out of the results root).
 */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { VncuaError } from '../../../harness/errors.ts';

/** The results root's directory of the queue's own files (incoming uploads, staging); scoring and the viewer skip dot directories. */
export const QUEUE_DIR = '.vncua-queue';

/** What a path names: a run directory (`<agent>/<W>_<H>/<task>[/<n>]`) or a file inside a run. */
export type PathKind = 'run' | 'file';

function bad(path: string, why: string): VncuaError {
  return new VncuaError('QUEUE_ERR_BAD_PATH', `The path ${JSON.stringify(path.slice(0, 200))} is refused: ${why}.`, { details: { path: path.slice(0, 1000), why } });
}

/**
 * The segments of a relative `/`-separated path, or QUEUE_ERR_BAD_PATH: absolute, empty, an empty, `.` or `..`
 * segment, a NUL, control character or backslash, a segment over 255 bytes; a run directory (`kind` 'run')
 * also has no segment starting with `.` (scoring would never see it, and `.vncua-queue` is the queue's own).
 */
export function checkRelPath(path: unknown, kind: PathKind): string[] {
  if (typeof path !== 'string' || path.length === 0) throw bad(String(path), 'it is empty or not a string');
  if (path.length > 4096) throw bad(path, 'it is longer than 4096 characters');
  if (path.startsWith('/')) throw bad(path, 'it is absolute; give it relative to the results root');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f\\]/.test(path)) throw bad(path, 'it holds a control character or a backslash');
  const segs = path.split('/');
  for (const s of segs) {
    if (s === '' || s === '.' || s === '..') throw bad(path, `it has ${s === '' ? 'an empty' : `a "${s}"`} segment`);
    if (Buffer.byteLength(s) > 255) throw bad(path, 'a segment is longer than 255 bytes');
    if (kind === 'run' && s.startsWith('.')) throw bad(path, `the segment "${s}" starts with "." (scoring skips such directories)`);
  }
  return segs;
}

/**
 * `root`/`segs` after checking on disk that no existing part of it is a symlink that leads out of `root`
 * (the nearest existing ancestor's real path stays under `root`'s), and that the path itself is not a symlink.
 */
export async function resolveInside(root: string, segs: readonly string[]): Promise<string> {
  const target = join(root, ...segs);
  const realRoot = await realpath(root);
  let p = target;
  for (;;) {
    const st = await lstat(p).catch(() => null);
    if (st) {
      if (p === target && st.isSymbolicLink()) throw bad(segs.join('/'), 'it is a symlink in the results root');
      const real = await realpath(p).catch(() => null);
      if (real === null || (real !== realRoot && !real.startsWith(realRoot + sep))) throw bad(segs.join('/'), 'a symlink on it leads out of the results root');
      return target;
    }
    if (p === root) return target;
    p = dirname(p);
  }
}
