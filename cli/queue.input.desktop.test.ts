/**
 * Bad input to the queue, with a real redis-server and real `vncua eval --queue` / `vncua worker`
 * processes: a Redis that does not answer (QUEUE_ERR_UNREACHABLE within seconds, not a hang), a wrong
 * or missing password (QUEUE_ERR_AUTH), a malformed URL (QUEUE_ERR_BAD_URL), a queue of another
 * format (QUEUE_ERR_VERSION), a worker whose task file or agent module differs from the coordinator's
 * (QUEUE_ERR_MISMATCH) or that does not see the results root (QUEUE_ERR_RESULTS_UNWRITABLE). Each is
 * one coded line, exit 2; a refusing worker gives the job back without counting an attempt; the
 * suite's finished runs stay byte for byte as they were (no desktop starts: workers refuse before).
 * And Ctrl-C on a coordinator detaches: the suite stays queued, the same command reattaches;
 * --max-suite-cost is refused with a queue (QUEUE_ERR_SUITE_COST, nothing queued). With
 * desktops: a configuration error met by a worker stops the suite as locally (MODEL_ERR_AUTH, exit 2),
 * and infra failures go back through the queue (--retries), then end infra_error as locally.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer } from '../byom/chat/test-helpers/chat-server.ts';
import { serveTestPages } from '../eval/test-fixtures/pages.ts';
import { codeLine, type Ran, runVncua } from './test-helpers/child.ts';
import { closedPort } from '../harness/cdp/test-helpers.ts';
import { FORMAT_KEY, QUEUE_NAME } from '../eval/queue/manifest.ts';
import { markerPath } from '../eval/queue/worker.ts';
import { parseQueueUrl } from '../eval/queue/url.ts';
import { redisOptions } from '../eval/queue/connection.ts';
import { type TestRedis, type VncuaChild, spawnVncua, startRedis, waitFor } from '../eval/queue/test-helpers.ts';

let dir: string;
let out: string;
let tasks: string;
let agent: string;
/** A finished run in the results root, and its files' text: nothing may touch it. */
const finishedRun = { rel: 'click-agent/1280_800/done-1', files: {} as Record<string, string> };
const children: VncuaChild[] = [];
let redis: TestRedis | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-queue-bad-'));
  out = join(dir, 'out');
  tasks = join(dir, 'tasks.json');
  await writeFile(
    tasks,
    JSON.stringify(['done-1', 'a', 'b'].map((id) => ({ id, goal: 'Click the button', url: `http://127.0.0.1:9/${id}.html`, success: { sentinel: '>code#1<' } }))),
  );
  agent = join(dir, 'click-agent.ts');
  await copyFile(new URL('../eval/test-fixtures/click-agent.ts', import.meta.url), agent);
  // The agent module imports ../../harness/...: keep it resolvable from its copy.
  await writeFile(agent, readFileSync(agent, 'utf8').replaceAll("'../../harness/", `'${new URL('../harness/', import.meta.url).pathname}`));
  const run = join(out, finishedRun.rel);
  await mkdir(run, { recursive: true });
  finishedRun.files = {
    'result.json': JSON.stringify({ status: 'finished', steps: 1, durationMs: 5 }),
    'task.json': JSON.stringify({ id: 'done-1', agent: 'click-agent', resolution: '1280x800', attempt: 1, status: 'finished' }),
    'execution.json': JSON.stringify([]),
  };
  for (const [f, text] of Object.entries(finishedRun.files)) await writeFile(join(run, f), text);
});
afterEach(async () => {
  for (const c of children.splice(0)) await c.kill('SIGKILL');
  await redis?.close();
  redis = undefined;
  // The finished run is as it was.
  for (const [f, text] of Object.entries(finishedRun.files)) expect(readFileSync(join(out, finishedRun.rel, f), 'utf8'), f).toBe(text);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const evalArgs = (url: string) => ['--queue', url, '--tasks', tasks, '--agent', agent, '--out', out];
const expectCode = (r: Ran, command: string, code: string) => {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(codeLine(r, command)).toBe(code);
};

describe('the queue URL', () => {
  it('QUEUE_ERR_BAD_URL: malformed, for the coordinator and the worker', async () => {
    expectCode(await runVncua('eval', evalArgs('redis://127.0.0.1/zero')), 'eval', 'QUEUE_ERR_BAD_URL');
    expectCode(await runVncua('worker', ['--queue', 'localhost:6379']), 'worker', 'QUEUE_ERR_BAD_URL');
  }, 300_000);

  it('QUEUE_ERR_UNREACHABLE within seconds when nothing answers', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}/0`;
    for (const [command, args] of [
      ['eval', evalArgs(url)],
      ['worker', ['--queue', url]],
    ] as const) {
      const t0 = Date.now();
      const r = await runVncua(command, [...args], { deadlineMs: 60_000 });
      expectCode(r, command, 'QUEUE_ERR_UNREACHABLE');
      // The process starts (tsx, imports) and the probe gives up within its 5 s: well under the deadline.
      expect(Date.now() - t0).toBeLessThan(30_000);
    }
  }, 300_000);

  it('QUEUE_ERR_AUTH: a wrong password, or none where one is required; the password is never printed', async () => {
    redis = await startRedis({ password: 'right-pw' });
    const wrong = `redis://:wrong-pw@127.0.0.1:${redis.port}/0`;
    const none = `redis://127.0.0.1:${redis.port}/0`;
    const r1 = await runVncua('eval', evalArgs(wrong));
    expectCode(r1, 'eval', 'QUEUE_ERR_AUTH');
    expect(r1.stderr).not.toContain('wrong-pw');
    expectCode(await runVncua('worker', ['--queue', none]), 'worker', 'QUEUE_ERR_AUTH');
  }, 300_000);

  it('QUEUE_ERR_VERSION: a queue of another queue format', async () => {
    redis = await startRedis();
    const client = new Redis(redisOptions(parseQueueUrl(redis.url)));
    try {
      await client.set(FORMAT_KEY, '999');
    } finally {
      client.disconnect();
    }
    expectCode(await runVncua('eval', evalArgs(redis.url)), 'eval', 'QUEUE_ERR_VERSION');
    expectCode(await runVncua('worker', ['--queue', redis.url]), 'worker', 'QUEUE_ERR_VERSION');
  }, 300_000);
});

describe('options a queue cannot honour', () => {
  it('QUEUE_ERR_SUITE_COST: --max-suite-cost with --queue is refused before anything is queued (the cap is not shared across workers)', async () => {
    redis = await startRedis();
    const r = await runVncua('eval', [...evalArgs(redis.url), '--max-suite-cost', '1']);
    expectCode(r, 'eval', 'QUEUE_ERR_SUITE_COST');
    expect(r.stderr).toContain('--max-cost');
    const client = new Redis(redisOptions(parseQueueUrl(redis.url)));
    try {
      expect(await client.keys('*')).toEqual([]);
    } finally {
      client.disconnect();
    }
  }, 300_000);
});

describe('a worker that cannot run the suite gives its job back and stops', () => {
  /** Start a coordinator for the suite and wait until its jobs are queued. */
  async function queued(extra: string[] = []): Promise<{ coordinator: VncuaChild; suiteId: string }> {
    redis = await startRedis();
    const coordinator = spawnVncua('eval', [...evalArgs(redis.url), ...extra]);
    children.push(coordinator);
    const m = await waitFor(
      () => /suite ([0-9a-f]{16}) on .*: 2 runs queued/.exec(coordinator.output()),
      60_000,
      'the coordinator did not queue the suite',
      () => coordinator.output(),
    );
    return { coordinator, suiteId: m[1]! };
  }

  /** The suite's jobs: none attempted, all waiting. */
  async function expectUntouchedJobs(suiteId: string): Promise<void> {
    const queue = new Queue(QUEUE_NAME, { connection: redisOptions(parseQueueUrl(redis!.url)) });
    try {
      for (const id of ['a', 'b']) {
        const job = await queue.getJob(`${suiteId}.${id}@1280x800#1`);
        expect(job, id).toBeDefined();
        expect(job!.attemptsMade, id).toBe(0);
        expect(await job!.getState(), id).toBe('waiting');
      }
    } finally {
      await queue.close();
    }
  }

  it('QUEUE_ERR_MISMATCH: its task file differs (another --tasks)', async () => {
    const { suiteId } = await queued();
    const other = join(dir, 'other-tasks.json');
    await writeFile(other, `${readFileSync(tasks, 'utf8')}\n`);
    const r = await runVncua('worker', ['--queue', redis!.url, '--tasks', other], { deadlineMs: 60_000 });
    expectCode(r, 'worker', 'QUEUE_ERR_MISMATCH');
    await expectUntouchedJobs(suiteId);
  }, 300_000);

  it('QUEUE_ERR_MISMATCH: its agent module differs', async () => {
    const { suiteId } = await queued();
    const before = readFileSync(agent, 'utf8');
    await writeFile(agent, `${before}\n// changed after the coordinator hashed it\n`);
    try {
      const r = await runVncua('worker', ['--queue', redis!.url], { deadlineMs: 60_000 });
      expectCode(r, 'worker', 'QUEUE_ERR_MISMATCH');
      expect(r.stderr).toContain('agent module');
    } finally {
      await writeFile(agent, before);
    }
    await expectUntouchedJobs(suiteId);
  }, 300_000);

  it('SECRET_ERR_FILE: its own copy of --secrets-file cannot be read; the manifest holds the path, never a value', async () => {
    const secretsFile = join(dir, 'run-secrets.env');
    const value = 'queue-secret-value-7f3a9c';
    await writeFile(secretsFile, `VNCUA_QUEUE_TEST_PW=${value}\n`);
    const { suiteId } = await queued(['--secrets-file', secretsFile]);
    const client = new Redis(redisOptions(parseQueueUrl(redis!.url)));
    try {
      const manifest = JSON.parse((await client.get(`vncua:suite:${suiteId}`))!) as { options: { secretsFile?: string } };
      expect(manifest.options.secretsFile).toBe(secretsFile);
      // No value anywhere in Redis: every string key's content.
      for (const key of await client.keys('*')) if ((await client.type(key)) === 'string') expect(await client.get(key), key).not.toContain(value);
    } finally {
      client.disconnect();
    }
    // As on a machine without that file.
    await rm(secretsFile);
    const r = await runVncua('worker', ['--queue', redis!.url], { deadlineMs: 60_000 });
    expectCode(r, 'worker', 'SECRET_ERR_FILE');
    expect(r.stdout + r.stderr).not.toContain(value);
    await expectUntouchedJobs(suiteId);
  }, 300_000);

  it('QUEUE_ERR_RESULTS_UNWRITABLE: it does not see the results root (no marker file) and no upload is offered', async () => {
    const { suiteId } = await queued();
    // As on a machine without the shared filesystem: the coordinator's marker is not there.
    await rm(markerPath(out, suiteId));
    const r = await runVncua('worker', ['--queue', redis!.url], { deadlineMs: 60_000 });
    expectCode(r, 'worker', 'QUEUE_ERR_RESULTS_UNWRITABLE');
    await expectUntouchedJobs(suiteId);
  }, 300_000);

  it('Ctrl-C on the coordinator detaches: the suite stays queued, and the same command reattaches to it', async () => {
    const { coordinator, suiteId } = await queued();
    coordinator.child.kill('SIGINT');
    expect(await coordinator.exited, coordinator.output()).toBe(1);
    expect(coordinator.output()).toContain(`detached from suite ${suiteId}: it keeps running on the workers; run the same command again to reattach`);
    await expectUntouchedJobs(suiteId);
    const again = spawnVncua('eval', evalArgs(redis!.url));
    children.push(again);
    await waitFor(
      () => again.output().includes(`suite ${suiteId} on ${redis!.url} (resumed): 2 runs queued`),
      60_000,
      'the same command did not resume the suite',
      () => again.output(),
    );
    await expectUntouchedJobs(suiteId);
  }, 300_000);
});

describe('a configuration error met by a worker', () => {
  it('stops the suite as locally: exit 2, one line naming MODEL_ERR_AUTH, the waiting runs dropped, no run written', async () => {
    const pages = await serveTestPages();
    const api = await startChatServer(() => ({ status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    try {
      redis = await startRedis();
      const file = join(dir, 'auth-tasks.json');
      await writeFile(file, JSON.stringify(['a', 'b', 'c'].map((id) => ({ id, goal: 'Click the button', url: `${pages.url}ok/${id}.html`, success: { sentinel: '>code#1<' } }))));
      const authOut = join(dir, 'auth-out');
      const worker = spawnVncua('worker', ['--queue', redis.url], { VNCUA_CHAT_API_KEY: 'sk-wrong' });
      children.push(worker);
      await waitFor(
        () => worker.output().includes('takes jobs'),
        60_000,
        'the worker did not start',
        () => worker.output(),
      );
      const r = await runVncua('eval', ['--queue', redis.url, '--tasks', file, '--agent', 'chat', '--out', authOut, '--', '--base-url', api.baseURL, '--model', 'test-vlm'], {
        deadlineMs: 180_000,
      });
      expect(r.code, r.stdout + r.stderr + worker.output()).toBe(2);
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^vncua eval: MODEL_ERR_AUTH: .*HTTP 401.* \(met by [abc]@1280x800; the suite stopped/);
      expect(api.bodies.length).toBeLessThanOrEqual(2); // the first run's first step, and at most the one the worker took meanwhile
      const runs = join(authOut, 'chat', '1280_800');
      expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
      expect(existsSync(join(authOut, 'scores.json'))).toBe(false);
    } finally {
      await api.close();
      await pages.close();
    }
  }, 300_000);
});

describe('infra failures on the queue', () => {
  it('are retried through the queue (--retries), then infra_error as locally: said in the progress lines, task.json and the scores; exit 1', async () => {
    redis = await startRedis();
    const dead = `http://127.0.0.1:${await closedPort()}/`;
    const file = join(dir, 'dead-tasks.json');
    await writeFile(file, JSON.stringify(['a', 'b'].map((id) => ({ id, goal: 'Click the button', url: `${dead}${id}.html`, success: { sentinel: '>code#1<' } }))));
    const deadOut = join(dir, 'dead-out');
    for (const name of ['w1', 'w2']) {
      const w = spawnVncua('worker', ['--queue', redis.url, '--name', name]);
      children.push(w);
      await waitFor(
        () => w.output().includes('takes jobs'),
        60_000,
        'a worker did not start',
        () => w.output(),
      );
    }
    const r = await runVncua('eval', ['--queue', redis.url, '--tasks', file, '--agent', agent, '--retries', '1', '--out', deadOut], { deadlineMs: 240_000 });
    const text = r.stdout + r.stderr;
    expect(r.code, text + children.map((c) => c.output()).join('\n')).toBe(1);
    for (const id of ['a', 'b']) {
      expect(text).toContain(`${id}@1280x800: infra failure on attempt 1 (PAGE_ERR_UNREACHABLE: the task page ${dead}${id}.html could not be loaded`);
      expect(text).toContain(
        `${id}@1280x800: infra_error (PAGE_ERR_UNREACHABLE: the task page ${dead}${id}.html could not be loaded: net::ERR_CONNECTION_REFUSED), success unknown`,
      );
      const run = join(deadOut, 'click-agent', '1280_800', id);
      expect(JSON.parse(readFileSync(join(run, 'result.json'), 'utf8'))).toMatchObject({
        status: 'infra_error',
        error: { code: 'PAGE_ERR_UNREACHABLE', message: expect.stringMatching(/^2 attempts failed on infrastructure; the last: /) },
      });
      const task = JSON.parse(readFileSync(join(run, 'task.json'), 'utf8'));
      expect(task).toMatchObject({ attempt: 2, status: 'infra_error' });
      expect(task.infra_errors.map((e: { attempt: number; code: string }) => [e.attempt, e.code])).toEqual([
        [1, 'PAGE_ERR_UNREACHABLE'],
        [2, 'PAGE_ERR_UNREACHABLE'],
      ]);
    }
    expect(text).toContain('0 succeeded, 2 infra errors (PAGE_ERR_UNREACHABLE ×2)');
    expect(JSON.parse(readFileSync(join(deadOut, 'scores.json'), 'utf8')).by_agent).toMatchObject([{ agent: 'click-agent', runs: 0, infra_errors: 2 }]);
  }, 300_000);
});
