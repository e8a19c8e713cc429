import { execFile } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NOBODY, letNobodyReachRepo, permissionsIgnored } from '../test-helpers/unwritable.ts';
import { readOnlyScenario, type ReadOnlyOutcome } from './test-fixtures/read-only.ts';

const SCRIPT = fileURLToPath(new URL('./test-fixtures/read-only.ts', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-ro-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the scenario in-process, or (as root) in a child process under uid/gid nobody so permissions apply. */
async function runScenario(base: string): Promise<ReadOnlyOutcome> {
  if (!(await permissionsIgnored(dir))) return readOnlyScenario(base);
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
