/**
 * Test-only: temporary directories and what they hold. Light (no browser, no desktop), for unit and
 * desktop tests alike.
 */
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh temporary output directory; remove it with the returned function. */
export async function tempOutputDir(prefix = 'vncua-agent-'): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Every file under `dir` (relative path -> bytes as hex): compare two to see that nothing was touched. */
export async function snapshotDir(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const p = join(dir, name);
    if ((await stat(p)).isFile()) out[name] = (await readFile(p)).toString('hex');
  }
  return out;
}
