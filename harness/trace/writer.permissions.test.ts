import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readOnlyScenario, type ReadOnlyOutcome } from './test-fixtures/read-only.ts';

const SCRIPT = fileURLToPath(new URL('./test-fixtures/read-only.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NOBODY = 65534;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-ro-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** True when this process can write into a 0555 directory (root / CAP_DAC_OVERRIDE): permissions are not enforced for it. */
async function permissionsIgnored(): Promise<boolean> {
  const probe = join(dir, 'probe');
  await mkdir(probe);
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
async function letNobodyReachRepo(): Promise<() => Promise<void>> {
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

/** Runs the scenario in-process, or (as root) in a child process under uid/gid nobody so permissions apply. */
async function runScenario(base: string): Promise<ReadOnlyOutcome> {
  if (!(await permissionsIgnored())) return readOnlyScenario(base);
  await chmod(dir, 0o755);
  await chown(base, NOBODY, NOBODY);
  const undo = await letNobodyReachRepo();
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPT, base], {
      uid: NOBODY,
      gid: NOBODY,
      cwd: REPO,
      env: { ...process.env, HOME: base, TMPDIR: base },
      timeout: 30_000,
      killSignal: 'SIGKILL',
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as ReadOnlyOutcome;
  } finally {
    await undo();
  }
}

it('a write into a read-only directory gives TRACE_ERR_WRITE with the path', async () => {
  const base = join(dir, 'base');
  await mkdir(base);
  const r = await runScenario(base);
  expect(r.openInside).toEqual({ code: 'TRACE_ERR_WRITE', path: join(base, 'ro', 'run') });
  expect(r.openExisting).toEqual({ code: 'TRACE_ERR_WRITE', path: join(base, 'ro', 'partial_execution.json') });
  expect(r.append).toEqual({ code: 'TRACE_ERR_WRITE', path: join(base, 'rw', 'partial_execution.json') });
  expect(r.finalize).toEqual({ code: 'TRACE_ERR_WRITE', path: join(base, 'rw', 'execution.json') });
  expect(r.writeResult).toEqual({ code: 'TRACE_ERR_WRITE', path: join(base, 'rw', 'result.json') });
});
