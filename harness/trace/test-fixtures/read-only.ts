/**
 * Write failures into read-only directories, as a function (run in-process when permissions apply)
 * and as a script printing its result as JSON (run under an unprivileged uid when the test runs as
 * root, since root ignores directory permissions): `node --import tsx read-only.ts <baseDir>`.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isVncuaError } from '../../errors.ts';
import { TraceWriter } from '../writer.ts';
import { sampleEntry } from './entries.ts';

/** What each operation raised: error code and `details.path`, or "ok". */
export interface ReadOnlyOutcome {
  openInside: Failure;
  openExisting: Failure;
  append: Failure;
  finalize: Failure;
  writeResult: Failure;
  appendedBefore: number;
}

type Failure = { code: string; path?: string } | 'ok';

async function outcome(p: Promise<unknown>): Promise<Failure> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (isVncuaError(e)) return { code: e.code, path: e.details?.path as string | undefined };
    return { code: `non-vncua: ${String(e)}` };
  }
}

/** Runs the scenario under `base` (must be writable by the current user); restores permissions before returning. */
export async function readOnlyScenario(base: string): Promise<ReadOnlyOutcome> {
  const ro = join(base, 'ro');
  const rw = join(base, 'rw');
  await mkdir(ro);
  await mkdir(rw);
  await chmod(ro, 0o555);
  try {
    const openInside = await outcome(new TraceWriter(join(ro, 'run')).open());
    const openExisting = await outcome(new TraceWriter(ro).open());
    const writer = new TraceWriter(rw);
    await writer.open();
    await writer.append(sampleEntry(0));
    await chmod(rw, 0o555);
    const append = await outcome(writer.append(sampleEntry(1)));
    const finalize = await outcome(writer.finalize());
    const writeResult = await outcome(writer.writeResult({ status: 'error', steps: 2, durationMs: 1 }));
    return { openInside, openExisting, append, finalize, writeResult, appendedBefore: 1 };
  } finally {
    await chmod(ro, 0o755).catch(() => undefined);
    await chmod(rw, 0o755).catch(() => undefined);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const base = process.argv[2];
  if (!base) throw new Error('usage: read-only.ts <baseDir>');
  process.stdout.write(`${JSON.stringify(await readOnlyScenario(base))}\n`);
}
