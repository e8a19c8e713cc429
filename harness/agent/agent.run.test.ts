/**
 * run(): how a run ends and what it leaves on disk. These agents only use wait() and finish(),
 * which need no desktop, so no VNC connection is ever made (the vncUrl points at a closed port).
 * Every case checks result.json (the same shape run() resolved to), a valid execution.json and
 * no partial_execution.json left behind.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import { Agent } from './agent.ts';
import type { AgentOptions } from './options.ts';
import { snapshotDir, tempOutputDir } from '../test-helpers/files.ts';

let closedPort = 0;
const dirs: Array<{ remove(): Promise<void> }> = [];

beforeAll(async () => {
  // A port nothing listens on: the OS gives one, the server closes it.
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  closedPort = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
});

afterEach(async () => {
  for (const d of dirs.splice(0)) await d.remove();
});

async function options(extra: Partial<AgentOptions> = {}): Promise<AgentOptions> {
  const out = await tempOutputDir();
  dirs.push(out);
  return { outputDir: out.dir, vncUrl: `tcp://127.0.0.1:${closedPort}`, ...extra };
}

/** result.json's success fields when no success check can run (no cdpUrl). */
const NO_CHECK = { success: null, success_at: null, evidence: null };

/** An agent whose act() is the given function. */
class FnAgent extends Agent {
  calls = 0;
  constructor(
    opts: AgentOptions,
    private readonly fn: (a: FnAgent, call: number) => Promise<boolean>,
  ) {
    super(opts);
  }
  override act(): Promise<boolean> {
    return this.fn(this, ++this.calls);
  }
}

/** result.json equals what run() returned, execution.json is valid, no partial file is left. */
async function expectFiles(dir: string, result: unknown) {
  expect(await readResult(dir)).toEqual(result);
  const trace = await readTrace(dir);
  expect(trace.partial).toBe(false);
  expect(existsSync(join(dir, 'partial_execution.json'))).toBe(false);
  return trace.entries;
}

describe('Agent.run', () => {
  it('finished: act() returned true on the third call; one wait entry per call, success null without CDP', async () => {
    const o = await options();
    const agent = new FnAgent(o, async (a, call) => {
      await a.wait(0);
      return call === 3;
    });
    const r = await agent.run({ maxSteps: 10 });
    expect(r).toEqual({ status: 'finished', steps: 3, durationMs: expect.any(Number), ...NO_CHECK });
    const entries = await expectFiles(o.outputDir, r);
    expect(entries.map((e) => [e.index, e.action, e.params, e.task_marked_complete])).toEqual([
      [0, 'wait', { seconds: 0 }, null],
      [1, 'wait', { seconds: 0 }, null],
      [2, 'wait', { seconds: 0 }, null],
    ]);
    for (const e of entries) expect(e.ended_at! - e.started_at!).toBeCloseTo(e.duration_ms!, 2);
    expect(existsSync(join(o.outputDir, 'error.txt'))).toBe(false);
  });

  it('max_steps: act() never returned true', async () => {
    const o = await options();
    const agent = new FnAgent(o, async () => false);
    const r = await agent.run({ maxSteps: 4 });
    expect(r).toMatchObject({ status: 'max_steps', steps: 4 });
    expect(agent.calls).toBe(4);
    expect(await expectFiles(o.outputDir, r)).toEqual([]);
  });

  it('finish() ends the run as finished even when act() returns false; its params are recorded', async () => {
    const o = await options();
    const agent = new FnAgent(o, async (a) => {
      await a.finish({ answer: 42, note: 'done' });
      return false;
    });
    const r = await agent.run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'finished', steps: 1 });
    const entries = await expectFiles(o.outputDir, r);
    expect(entries).toEqual([expect.objectContaining({ action: 'finish', params: { answer: 42, note: 'done' } })]);
  });

  it('cancelled mid-act: this.signal fires for the model call and the run ends at once', async () => {
    const o = await options();
    const ac = new AbortController();
    let modelSawAbort = false;
    const agent = new FnAgent(o, async (a, call) => {
      if (call === 1) return false;
      setTimeout(() => ac.abort(), 20);
      // A model call that honours the signal.
      await new Promise<void>((_, reject) => a.signal.addEventListener('abort', () => ((modelSawAbort = true), reject(a.signal.reason)), { once: true }));
      return true;
    });
    const r = await agent.run({ maxSteps: 10, signal: ac.signal });
    expect(r).toEqual({ status: 'cancelled', steps: 1, durationMs: expect.any(Number), ...NO_CHECK });
    expect(modelSawAbort).toBe(true);
    expect(agent.signal.aborted).toBe(true);
    await expectFiles(o.outputDir, r);
  });

  it('cancelled while act() ignores the signal: run() does not wait for act()', async () => {
    const o = await options();
    const ac = new AbortController();
    let actReturned = false;
    const agent = new FnAgent(o, async () => {
      setTimeout(() => ac.abort(), 20);
      await new Promise(() => {}); // a model call that never returns
      actReturned = true;
      return true;
    });
    const r = await agent.run({ maxSteps: 10, signal: ac.signal });
    expect(r).toMatchObject({ status: 'cancelled', steps: 0 });
    expect(actReturned).toBe(false);
    await expectFiles(o.outputDir, r);
  });

  it('cancelled during an action: the interrupted wait is recorded with AGENT_ERR_CANCELLED; later actions are refused', async () => {
    const o = await options();
    const ac = new AbortController();
    let late: unknown;
    const agent = new FnAgent(o, async (a) => {
      await a.wait(0);
      setTimeout(() => ac.abort(), 20);
      try {
        await a.wait(30);
      } finally {
        late = await a.wait(0).catch((e: unknown) => e);
      }
      return true;
    });
    const r = await agent.run({ maxSteps: 3, signal: ac.signal });
    expect(r).toMatchObject({ status: 'cancelled', steps: 0 });
    const entries = await expectFiles(o.outputDir, r);
    expect(entries.map((e) => [e.action, e.params, 'error' in e ? e.error.code : null])).toEqual([
      ['wait', { seconds: 0 }, null],
      ['wait', { seconds: 30 }, 'AGENT_ERR_CANCELLED'],
    ]);
    await new Promise((res) => setTimeout(res, 10));
    expect(late).toMatchObject({ code: expect.stringMatching(/^AGENT_ERR_(CANCELLED|ILLEGAL_STATE)$/) });
  });

  it('a signal aborted before run(): cancelled without calling act()', async () => {
    const o = await options();
    const agent = new FnAgent(o, async () => true);
    const r = await agent.run({ signal: AbortSignal.abort() });
    expect(r).toMatchObject({ status: 'cancelled', steps: 0 });
    expect(agent.calls).toBe(0);
    await expectFiles(o.outputDir, r);
  });

  it('error: act() throws; result.json has AGENT_ERR_ACT_FAILED, error.txt the message, the trace keeps earlier entries', async () => {
    const o = await options();
    const agent = new FnAgent(o, async (a, call) => {
      await a.wait(0);
      if (call === 2) throw new Error('model exploded');
      return false;
    });
    const r = await agent.run({ maxSteps: 5 });
    expect(r).toEqual({ status: 'error', steps: 1, durationMs: expect.any(Number), error: { code: 'AGENT_ERR_ACT_FAILED', message: 'model exploded' }, ...NO_CHECK });
    expect(await expectFiles(o.outputDir, r)).toHaveLength(2);
    expect(await readFile(join(o.outputDir, 'error.txt'), 'utf8')).toMatch(/^model exploded\n/);
  });

  it('error: an action error act() does not catch ends the run with that code; the failed attempt is in the trace', async () => {
    const o = await options();
    const agent = new FnAgent(o, async (a) => {
      await a.wait(0);
      await a.wait(-1);
      return true;
    });
    const r = await agent.run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'error', steps: 0, error: { code: 'ACTION_ERR_BAD_ARGUMENT' } });
    const entries = await expectFiles(o.outputDir, r);
    expect(entries[1]).toMatchObject({ index: 1, action: 'wait', params: { seconds: -1 }, error: { code: 'ACTION_ERR_BAD_ARGUMENT' } });
    expect(await readFile(join(o.outputDir, 'error.txt'), 'utf8')).toContain('code: ACTION_ERR_BAD_ARGUMENT');
  });

  it('error: act() longer than stepTimeoutMs ends the run with AGENT_ERR_STEP_TIMEOUT and aborts this.signal', async () => {
    const o = await options({ stepTimeoutMs: 50 });
    let signal: AbortSignal | undefined;
    const agent = new FnAgent(o, async (a) => {
      signal = a.signal;
      await new Promise(() => {});
      return true;
    });
    const r = await agent.run();
    expect(r).toMatchObject({ status: 'error', steps: 0, error: { code: 'AGENT_ERR_STEP_TIMEOUT' } });
    expect(signal?.aborted).toBe(true);
    await expectFiles(o.outputDir, r);
  });

  it('bad run() options end the run with AGENT_ERR_BAD_OPTIONS naming the field, files still written', async () => {
    const o = await options();
    const agent = new FnAgent(o, async () => true);
    const r = await agent.run({ maxSteps: 0 });
    expect(r).toMatchObject({ status: 'error', steps: 0, error: { code: 'AGENT_ERR_BAD_OPTIONS' } });
    expect(r.error!.message).toContain('maxSteps');
    expect(agent.calls).toBe(0);
    expect(await expectFiles(o.outputDir, r)).toEqual([]);
  });

  it('a second run() during a run is refused without touching the files; actions outside run() are refused', async () => {
    const o = await options();
    let inner: unknown;
    const agent = new FnAgent(o, async (a) => {
      inner = await a.run();
      await a.wait(0);
      return true;
    });
    await expect(agent.wait(0)).rejects.toMatchObject({ code: 'AGENT_ERR_ILLEGAL_STATE' });
    const r = await agent.run();
    expect(inner).toMatchObject({ status: 'error', steps: 0, error: { code: 'AGENT_ERR_ILLEGAL_STATE' } });
    expect(r).toMatchObject({ status: 'finished', steps: 1 });
    expect(await expectFiles(o.outputDir, r)).toHaveLength(1);
  });

  it('ready: the first act() waits for it; a rejection ends the run with its error and no step; a cancel while waiting ends it cancelled', async () => {
    const a = await options();
    let readyDone = false;
    let resolveReady: () => void = () => {};
    const ready = new Promise<void>((r) => (resolveReady = r)).then(() => void (readyDone = true));
    const seen: boolean[] = [];
    const waiting = new FnAgent(a, async () => (seen.push(readyDone), true));
    const run = waiting.run({ ready });
    await new Promise((r) => setTimeout(r, 100));
    expect(waiting.calls).toBe(0);
    resolveReady();
    expect(await run).toMatchObject({ status: 'finished', steps: 1 });
    expect(seen).toEqual([true]);

    const b = await options();
    const failing = new FnAgent(b, async () => true);
    const err = new VncuaError('PAGE_ERR_HTTP_STATUS', 'the task page http://127.0.0.1:1/x answered HTTP 404', { details: { url: 'http://127.0.0.1:1/x', status: 404 } });
    const r = await failing.run({ ready: Promise.reject(err) });
    expect(r).toEqual({
      status: 'error',
      steps: 0,
      durationMs: r.durationMs,
      error: { code: 'PAGE_ERR_HTTP_STATUS', message: err.message },
      success: null,
      success_at: null,
      evidence: null,
    });
    expect(failing.calls).toBe(0);
    expect(await expectFiles(b.outputDir, r)).toEqual([]);

    const c = await options();
    const ac = new AbortController();
    const cancelled = new FnAgent(c, async () => true);
    setTimeout(() => ac.abort(), 100);
    const rc = await cancelled.run({ signal: ac.signal, ready: new Promise(() => {}) });
    expect(rc).toMatchObject({ status: 'cancelled', steps: 0 });
    expect(cancelled.calls).toBe(0);
  });

  it('a run that cannot write its output directory still resolves, with TRACE_ERR_WRITE', async () => {
    const o = await options();
    const blocker = join(o.outputDir, 'file');
    await writeFile(blocker, 'not a directory');
    const agent = new FnAgent({ ...o, outputDir: join(blocker, 'out') }, async () => true);
    const r = await agent.run();
    expect(r).toMatchObject({ status: 'error', steps: 0, error: { code: 'TRACE_ERR_WRITE' } });
    expect(agent.calls).toBe(0);
  });

  it('never writes over a finished run: OUTPUT_ERR_RUN_EXISTS touching nothing; overwrite moves the old run to outputDir.1', async () => {
    const o = await options();
    const first = await new FnAgent(o, async (a) => {
      await a.wait(0);
      return true;
    }).run();
    expect(first.status).toBe('finished');
    // What a recorded run leaves beside its trace.
    await mkdir(join(o.outputDir, 'recording'));
    await writeFile(join(o.outputDir, 'recording', 'server-0.rfb.bin'), Buffer.from([1, 2, 3, 4]));
    const before = await snapshotDir(o.outputDir);

    const again = new FnAgent(o, async () => true);
    const refused = await again.run();
    expect(refused).toMatchObject({ status: 'error', steps: 0, error: { code: 'OUTPUT_ERR_RUN_EXISTS' } });
    expect(again.calls).toBe(0);
    expect(await snapshotDir(o.outputDir)).toEqual(before);

    const over = new FnAgent({ ...o, overwrite: true }, async (a) => {
      await a.wait(0);
      await a.wait(0);
      return true;
    });
    const r = await over.run();
    expect(r).toMatchObject({ status: 'finished', steps: 1 });
    expect(await snapshotDir(`${o.outputDir}.1`)).toEqual(before);
    expect(await expectFiles(o.outputDir, r)).toHaveLength(2);
    await rm(`${o.outputDir}.1`, { recursive: true, force: true });
  });
});
