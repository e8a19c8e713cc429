/**
 * Output directories, checked before anything is written, and finished runs kept safe:
 *
 * - `checkOutputDir(path)`: the path (or the nearest existing directory it would be created in) is a
 *   writable directory on a real filesystem; otherwise OUTPUT_ERR_NOT_A_DIRECTORY (a file is in the
 *   way), OUTPUT_ERR_PSEUDO_FS (/proc, /sys, cgroup, devpts, …: Node 20's recursive mkdir spins there
 *   forever) or OUTPUT_ERR_NOT_WRITABLE (permissions, read-only filesystem). It never creates anything.
 * - `finishedRunFiles(dir)` / `runFiles(dir)`: what of a run a directory holds.
 * - `moveAside(dir)`: rename a run's directory to the first free `DIR.1`, `DIR.2`, … (never deleted).
 */
import { constants } from 'node:fs';
import { access, mkdir, rename, rmdir, stat, statfs } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { VncuaError } from '../errors.ts';

/** Filesystem magic numbers (statfs f_type) of kernel pseudo-filesystems, where run files cannot live. */
const PSEUDO_FS_TYPES: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x73636673, 'securityfs'],
  [0x74726163, 'tracefs'],
  [0xcafe4a11, 'bpf'],
  [0x6165676c, 'pstore'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0xde5e81e4, 'efivarfs'],
  [0xf97cff8c, 'selinuxfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x19800202, 'mqueue'],
  [0x6e736673, 'nsfs'],
]);

/** Path prefixes that are pseudo-filesystems on Linux whatever statfs says (checked before any syscall). */
const PSEUDO_PREFIXES = ['/proc', '/sys'];

/** The files that make a directory hold a finished run (TraceWriter and the Agent refuse to write over them). */
export const FINISHED_RUN_FILES = ['execution.json', 'result.json'] as const;
/** Everything that makes a directory hold a run, finished or not (`vncua run` refuses any of them). */
export const RUN_ENTRIES = ['execution.json', 'partial_execution.json', 'result.json', 'recording'] as const;

/** True when `path` (made absolute) is under /proc or /sys. */
export function isPseudoFsPath(path: string): boolean {
  const abs = resolve(path);
  return PSEUDO_PREFIXES.some((p) => abs === p || abs.startsWith(`${p}/`));
}

function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** The nearest existing ancestor of `abs` (itself included), and whether it is a directory. */
async function nearestExisting(abs: string): Promise<{ path: string; isDirectory: boolean }> {
  for (let p = abs; ; p = dirname(p)) {
    try {
      const s = await stat(p);
      return { path: p, isDirectory: s.isDirectory() };
    } catch (e) {
      const code = errnoOf(e);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        throw new VncuaError(
          'OUTPUT_ERR_NOT_WRITABLE',
          `Cannot use ${abs} as an output directory: ${p} cannot be looked at (${code ?? (e as Error).message}); choose a directory you can write to.`,
          {
            cause: e,
            details: { path: abs, at: p, errno: code },
          },
        );
      }
      if (p === dirname(p)) throw e;
    }
  }
}

function pseudoFsError(abs: string, fs: string, at: string): VncuaError {
  return new VncuaError(
    'OUTPUT_ERR_PSEUDO_FS',
    `Cannot use ${abs} as an output directory: ${at} is on the ${fs} pseudo-filesystem; choose a directory on a real disk (e.g. under runs/ or /tmp).`,
    {
      details: { path: abs, at, fs },
    },
  );
}

/** OUTPUT_ERR_PSEUDO_FS when `path` is (or would be created) on a pseudo-filesystem; touches nothing. */
export async function assertNotPseudoFs(path: string): Promise<void> {
  const abs = resolve(path);
  if (isPseudoFsPath(abs)) throw pseudoFsError(abs, abs.split('/')[1]!, abs);
  const near = await nearestExisting(abs).catch(() => null);
  if (!near) return;
  const type = await statfs(near.path).then(
    (s) => PSEUDO_FS_TYPES.get(Number(s.type)),
    () => undefined,
  );
  if (type) throw pseudoFsError(abs, type, near.path);
}

/**
 * Check that `path` can be an output directory without creating anything: it is a directory, or can be
 * created inside its nearest existing ancestor, on a real filesystem, writable. Resolves to the absolute
 * path. `label` names the option in the messages (e.g. `--out`).
 */
export async function checkOutputDir(path: string, label = 'output directory'): Promise<string> {
  const abs = resolve(path);
  if (isPseudoFsPath(abs)) throw pseudoFsError(abs, abs.split('/')[1]!, abs);
  const near = await nearestExisting(abs);
  if (!near.isDirectory) {
    const what = near.path === abs ? `${abs} is a file` : `${near.path} is a file, so ${abs} cannot be created`;
    throw new VncuaError('OUTPUT_ERR_NOT_A_DIRECTORY', `${label} ${path}: ${what}; give a directory.`, { details: { path: abs, file: near.path } });
  }
  await assertNotPseudoFs(abs);
  try {
    await access(near.path, constants.W_OK | constants.X_OK);
  } catch (e) {
    const code = errnoOf(e);
    const why = code === 'EROFS' ? 'is on a read-only filesystem' : 'is not writable';
    throw new VncuaError('OUTPUT_ERR_NOT_WRITABLE', `${label} ${path}: ${near.path} ${why} (${code ?? 'access denied'}); choose a directory you can write to.`, {
      cause: e,
      details: { path: abs, at: near.path, errno: code },
    });
  }
  return abs;
}

async function existing(dir: string, names: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const n of names)
    if (
      await stat(join(dir, n)).then(
        () => true,
        () => false,
      )
    )
      found.push(n);
  return found;
}

/** Which of execution.json / result.json `dir` holds (a finished run holds at least one). */
export function finishedRunFiles(dir: string): Promise<string[]> {
  return existing(dir, FINISHED_RUN_FILES);
}

/** Which of execution.json / partial_execution.json / result.json / recording `dir` holds. */
export function runFiles(dir: string): Promise<string[]> {
  return existing(dir, RUN_ENTRIES);
}

/** OUTPUT_ERR_RUN_EXISTS for `dir` holding `files`; `how` says what to do instead. */
export function runExistsError(dir: string, files: readonly string[], how: string): VncuaError {
  return new VncuaError('OUTPUT_ERR_RUN_EXISTS', `${dir} already holds a run (${files.join(', ')}); it was left untouched. ${how}`, { details: { path: dir, files: [...files] } });
}

/**
 * Rename `dir` to the first free `${dir}${sep}1`, `${dir}${sep}2`, …, claimed with an exclusive mkdir
 * so that two processes never pick the same name; resolves to the new path. Nothing is deleted.
 */
export async function moveAside(dir: string, sep = '.'): Promise<string> {
  const abs = resolve(dir);
  for (let n = 1; ; n++) {
    const target = `${abs}${sep}${n}`;
    try {
      await mkdir(target);
    } catch (e) {
      if (errnoOf(e) === 'EEXIST') continue;
      throw new VncuaError('OUTPUT_ERR_NOT_WRITABLE', `Could not move ${abs} aside to ${target}: ${(e as Error).message}.`, { cause: e, details: { path: abs, target } });
    }
    try {
      await rename(abs, target); // replaces the empty directory just claimed
      return target;
    } catch (e) {
      await rmdir(target).catch(() => undefined);
      throw new VncuaError('OUTPUT_ERR_NOT_WRITABLE', `Could not move ${abs} aside to ${target}: ${(e as Error).message}.`, { cause: e, details: { path: abs, target } });
    }
  }
}
