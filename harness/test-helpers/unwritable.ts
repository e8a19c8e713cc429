/**
 * Test-only: directories this test's processes cannot write into, also when the tests run as root
 * (root ignores permission bits). In order of preference:
 * 1. a read-only tmpfs mounted on a fresh directory (root with CAP_SYS_ADMIN: writes fail with EROFS);
 * 2. a 0555 directory, when permissions apply to this process (not root);
 * 3. a 0555 directory, and the child process under test runs as uid/gid nobody (`runAs`), with
 *    search permission added to the repository's ancestors so that it can load the code.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** uid and gid of nobody. */
export const NOBODY = 65534;

/** True when this process can write into a 0555 directory (root / CAP_DAC_OVERRIDE): permissions are not enforced for it. */
export async function permissionsIgnored(base: string): Promise<boolean> {
  const probe = await mkdtemp(join(base, 'probe-'));
  await chmod(probe, 0o555);
  try {
    await writeFile(join(probe, 'x'), 'x');
    return true;
  } catch {
    return false;
  } finally {
    await chmod(probe, 0o755);
    await rm(probe, { recursive: true, force: true });
  }
}

/**
 * Let uid nobody reach the repository (to load tsx and the code): add search permission (o+x, not read)
 * to each ancestor directory that lacks it, e.g. a 0700 clone directory made by mktemp. Returns an undo.
 */
export async function letNobodyReachRepo(): Promise<() => Promise<void>> {
  const changed: Array<[string, number]> = [];
  for (let d = REPO.replace(/\/$/, ''); d && d !== '/'; d = dirname(d)) {
    const mode = (await stat(d)).mode & 0o7777;
    if ((mode & 0o001) === 0) {
      await chmod(d, mode | 0o001);
      changed.push([d, mode]);
    }
  }
  return async () => {
    for (const [d, mode] of changed) await chmod(d, mode).catch(() => undefined);
  };
}

/** An unwritable directory; run the process under test as `runAs` when given; `close()` undoes everything. */
export interface Unwritable {
  dir: string;
  /** How it was made (for messages). */
  how: 'read-only mount' | 'permissions' | 'permissions as nobody';
  runAs?: { uid: number; gid: number };
  close(): Promise<void>;
}

/** Make an unwritable directory (see the file comment). */
export async function unwritableDir(): Promise<Unwritable> {
  const base = await mkdtemp(join(tmpdir(), 'vncua-unwritable-'));
  await chmod(base, 0o755);
  const dir = join(base, 'ro');
  await mkdir(dir);
  const removeBase = () => rm(base, { recursive: true, force: true });
  if (process.getuid?.() === 0) {
    try {
      await run('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k,mode=0755', 'tmpfs', dir], { timeout: 10_000 });
      return {
        dir,
        how: 'read-only mount',
        close: async () => {
          await run('umount', [dir], { timeout: 10_000 }).catch(() => run('umount', ['-l', dir]).catch(() => undefined));
          await removeBase();
        },
      };
    } catch {
      // no CAP_SYS_ADMIN: fall through to permissions
    }
  }
  await chmod(dir, 0o555);
  const restore = async () => {
    await chmod(dir, 0o755).catch(() => undefined);
    await removeBase();
  };
  if (!(await permissionsIgnored(base))) return { dir, how: 'permissions', close: restore };
  const undo = await letNobodyReachRepo();
  return {
    dir,
    how: 'permissions as nobody',
    runAs: { uid: NOBODY, gid: NOBODY },
    close: async () => {
      await undo();
      await restore();
    },
  };
}
