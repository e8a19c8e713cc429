/**
 * The worker image (docker/worker/Dockerfile, built by scripts/build-worker-image.sh) as docs/kubernetes.md's
 * Indexed Job runs it, without a cluster: two containers at once, each given JOB_COMPLETION_INDEX and
 * JOB_COMPLETIONS as Kubernetes would, each running its shard of the basic suite with
 * `vncua worker --shard-from-env` on desktops inside itself, into one mounted results volume. Together
 * they write exactly shards 1 and 2 of the suite's runs, disjoint, every one a success, and `vncua score`
 * on the host reads the volume. A pod without JOB_COMPLETIONS fails at once with its code.
 *
 * Skipped, with the reason printed, only where no engine or image can be had (scripts/test.sh builds
 * the image first where it can).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { expandJobs, jobLabel, shardJobs } from '../eval/jobs.ts';
import { loadTaskFile } from '../eval/tasks.ts';
import { DEFAULT_SCREEN_SIZE } from '../harness/desktop/size.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const IMAGE = 'vncua-worker';
const SHARDS = 12;

/** Why the worker image cannot be used here, or undefined (scripts/build-worker-image.sh --check). */
function skipReason(): string | undefined {
  const r = spawnSync('bash', [join(ROOT, 'scripts/build-worker-image.sh'), '--check'], { encoding: 'utf8', timeout: 120_000 });
  if (r.status === 0) return undefined;
  return (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop();
}

const reason = skipReason();
if (reason) console.warn(`[worker image tests skipped] ${reason}`);

/** `docker run --rm` of the worker image as one Job pod: index, completions (undefined: not set), the results volume. */
function pod(results: string, env: Record<string, string>, name: string): Promise<{ code: number | null; text: string }> {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const args = ['run', '--rm', '--name', name, '--label', 'vncua.test=worker-image', ...envArgs, '-v', `${results}:/results`, IMAGE];
  args.push('worker', '--shard-from-env', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--out', '/results', '--workers', '1');
  const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  return new Promise((res) => child.on('close', (code) => res({ code, text })));
}

/** Every run directory under a results root: `agent/WxH/task` (single runs). */
async function runDirs(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const agent of await readdir(root, { withFileTypes: true })) {
    if (!agent.isDirectory() || agent.name.startsWith('.')) continue;
    for (const size of await readdir(join(root, agent.name))) for (const task of await readdir(join(root, agent.name, size))) out.push(`${agent.name}/${size}/${task}`);
  }
  return out.sort();
}

describe.skipIf(reason !== undefined)('the worker image, run as an Indexed Job pod', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    try {
      const left = execFileSync('docker', ['ps', '-aq', '--filter', 'label=vncua.test=worker-image'], { encoding: 'utf8' }).trim();
      if (left) execFileSync('docker', ['rm', '-f', ...left.split('\n')]);
    } finally {
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  });

  it('two pods run shards 1 and 2 of the basic suite into one results volume, disjoint, all successes, scored on the host', { timeout: 600_000 }, async () => {
    const results = await mkdtemp(join(tmpdir(), 'vncua-k8s-'));
    dirs.push(results);
    await chmod(results, 0o777); // the image's user (uid 1000) writes there
    const tag = `${process.pid}-${Date.now()}`;
    const [a, b] = await Promise.all([
      pod(results, { JOB_COMPLETION_INDEX: '0', JOB_COMPLETIONS: String(SHARDS) }, `vncua-test-pod0-${tag}`),
      pod(results, { JOB_COMPLETION_INDEX: '1', JOB_COMPLETIONS: String(SHARDS) }, `vncua-test-pod1-${tag}`),
    ]);
    expect(a.code, a.text).toBe(0);
    expect(b.code, b.text).toBe(0);
    // Exactly the runs of shards 1/12 and 2/12, as the host's own job list has them.
    const tasks = (await loadTaskFile(join(ROOT, 'eval/suites/basic/tasks.json'))).tasks;
    const jobs = expandJobs(tasks, [DEFAULT_SCREEN_SIZE]);
    const want = [...shardJobs(jobs, { i: 1, n: SHARDS }), ...shardJobs(jobs, { i: 2, n: SHARDS })].map((j) => `replay/1280_800/${j.task.id}`).sort();
    expect(want.length).toBeGreaterThan(2);
    expect(await runDirs(results)).toEqual(want);
    for (const dir of want) {
      const result = JSON.parse(await readFile(join(results, dir, 'result.json'), 'utf8'));
      expect(result.status, `${dir}: ${JSON.stringify(result)}`).toBe('finished');
    }
    // The host's vncua scores the volume as it would a local run's results.
    const score = spawnSync(process.execPath, [join(ROOT, 'bin/vncua.js'), 'score', results], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(score.status, score.stderr).toBe(0);
    const scores = JSON.parse(await readFile(join(results, 'scores.json'), 'utf8'));
    expect(JSON.stringify(scores)).toContain('replay');
    expect(a.text + b.text).toContain(jobLabel(shardJobs(jobs, { i: 1, n: SHARDS })[0]!));
  });

  it('a pod without JOB_COMPLETIONS fails at once with its code, writing nothing', { timeout: 120_000 }, async () => {
    const results = await mkdtemp(join(tmpdir(), 'vncua-k8s-'));
    dirs.push(results);
    await chmod(results, 0o777);
    const r = await pod(results, { JOB_COMPLETION_INDEX: '0' }, `vncua-test-bad-${process.pid}-${Date.now()}`);
    expect(r.code).not.toBe(0);
    expect(r.text).toMatch(/EVAL_ERR_BAD_OPTIONS|QUEUE_ERR_|WORKER_ERR_/);
    expect(r.text).toContain('JOB_COMPLETIONS');
    expect(await readdir(results)).toEqual([]);
  });
});
