/**
 * Finding the runs under a root: every directory holding execution.json or partial_execution.json
 * together with a recording/ directory. A run directory is not searched further; recording/,
 * action_screenshots/, node_modules and dot-directories are never entered.
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { VncuaError } from '../../harness/errors.ts';

const SKIP = new Set(['recording', 'action_screenshots', 'node_modules']);

/** Run directories under `root` (absolute paths, sorted). Throws RECORDING_ERR_NOT_FOUND when root cannot be read. */
export async function findRuns(root: string): Promise<string[]> {
  const top = resolve(root);
  const out: string[] = [];
  const walk = async (dir: string, isRoot: boolean): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (cause) {
      if (isRoot) {
        throw new VncuaError(
          'RECORDING_ERR_NOT_FOUND',
          `Cannot read ${dir} (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}); give the directory that holds the runs.`,
          {
            cause,
            details: { dir },
          },
        );
      }
      return;
    }
    const names = new Set(entries.map((e) => e.name));
    const hasTrace = names.has('execution.json') || names.has('partial_execution.json');
    const hasRecording = entries.some((e) => e.name === 'recording' && e.isDirectory());
    if (hasTrace && hasRecording) {
      out.push(dir);
      return;
    }
    const subdirs = entries.filter((e) => e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name) && !e.name.includes('.tmp-'));
    await Promise.all(subdirs.map((e) => walk(join(dir, e.name), false)));
  };
  await walk(top, true);
  return out.sort();
}
