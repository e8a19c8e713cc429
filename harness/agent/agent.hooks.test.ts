/**
 * What adapters and the recorder build on: the recording hook (the recorder option, the class's
 * defaultRecorder and the record option), endRun() and attachMeta(). Logic above the RFB client:
 * it runs on the in-process fake desktop (no X server, no browser).
 */
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FakeDesktop } from '../rfb/test-helpers/fake-desktop.ts';
import { useFakeRuns } from './test-helpers/fake-run.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import type { RecorderFactory, RecorderStartOptions } from './recording.ts';
import { HookAgent } from './test-helpers/hook-agent.ts';
import { startTcpProxy } from './test-helpers/tcp-proxy.ts';

describe('Agent extensions on the fake desktop', () => {
  const t = useFakeRuns();
  let desktop: FakeDesktop;
  const out = () => t.out('vncua-agent-');
  beforeEach(async () => {
    desktop = await t.desktop();
  });

  it('record (default on) sends the connection through the recorder option, which gets <outputDir>/recording and is closed after the run', async () => {
    const calls: RecorderStartOptions[] = [];
    let closed = 0;
    let accepted = () => 0;
    const recorder: RecorderFactory = async (o) => {
      calls.push(o);
      const proxy = await startTcpProxy(desktop.tcpUrl);
      accepted = () => proxy.accepted;
      return {
        url: proxy.url,
        close: async () => {
          closed++;
          await proxy.close();
        },
      };
    };
    const dir = await out();
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl, recorder }, async (a) => {
      await a.mouseClick({ position: { x: 200, y: 200 } });
      return true;
    }).run();
    expect(r.status).toBe('finished');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.upstreamUrl).toBe(desktop.vncUrl);
    expect(calls[0]!.dir).toBe(join(dir, 'recording'));
    expect(accepted()).toBe(1);
    expect(closed).toBe(1);
    expect(desktop.events).toContainEqual({ kind: 'pointer', x: 200, y: 200, mask: 1 }); // through the recorder's proxy

    // The recording starts with the run: an agent whose first (here only) action needs no screen is connected before it acts.
    let connectedBeforeActing = -1;
    const r1 = await new HookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl, recorder }, async (a) => {
      connectedBeforeActing = accepted();
      await a.wait(0);
      return true;
    }).run();
    expect(r1.status).toBe('finished');
    expect(calls).toHaveLength(2);
    expect(connectedBeforeActing).toBe(1);

    // record: false leaves the recorder alone and connects directly; so does the bare Agent given no recorder.
    const r2 = await new HookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl, record: false, recorder }, async (a) => {
      await a.mouseMove({ x: 10, y: 10 });
      return true;
    }).run();
    expect(r2.status).toBe('finished');
    const bare = new HookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl }, async (a) => {
      await a.mouseMove({ x: 12, y: 12 });
      return true;
    });
    expect(bare.options.recorder).toBeNull();
    expect((await bare.run()).status).toBe('finished');
    expect(calls).toHaveLength(2);

    // A class's defaultRecorder (what the package root's Agent sets) records runs given no recorder; recorder: null opts out.
    class RecordedHookAgent extends HookAgent {
      static override defaultRecorder: RecorderFactory | null = recorder;
    }
    const r3 = await new RecordedHookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl }, async (a) => {
      await a.mouseMove({ x: 14, y: 14 });
      return true;
    }).run();
    expect(r3.status).toBe('finished');
    expect(calls).toHaveLength(3);
    const optedOut = new RecordedHookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl, recorder: null }, async () => true);
    expect(optedOut.options.recorder).toBeNull();
    expect((await optedOut.run()).status).toBe('finished');
    expect(calls).toHaveLength(3);
  });

  it('a recorder that cannot start ends the run with RECORDER_ERR_NOT_STARTED and a valid trace and result.json', async () => {
    const recorder: RecorderFactory = async () => {
      throw new Error('no space left');
    };
    const dir = await out();
    let acted = false;
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl, recorder }, async () => {
      acted = true;
      return true;
    }).run();
    expect(acted).toBe(false);
    expect(r.status).toBe('error');
    expect(r.error?.code).toBe('RECORDER_ERR_NOT_STARTED');
    expect(await readResult(dir)).toEqual(r);
    expect((await readTrace(dir)).entries).toEqual([]);
  });

  it('endRun() ends the run at once with the status and error given; entries so far are kept', async () => {
    const dir = await out();
    let after = false;
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl }, async (a) => {
      await a.wait(0);
      a.end('stuck', { code: 'AGENT_ERR_STUCK', message: 'same action 5 times' });
      await a.wait(0).catch(() => {});
      after = true;
      return false;
    }).run({ maxSteps: 10 });
    expect(r.status).toBe('stuck');
    expect(r.error?.code).toBe('AGENT_ERR_STUCK');
    expect(r.steps).toBe(0);
    expect(await readResult(dir)).toEqual(r);
    const { entries, partial } = await readTrace(dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => e.action)).toEqual(['wait']);
    expect(after).toBe(true);
  });

  it('attachMeta() lands in the next entry only, merging model_calls lists', async () => {
    const dir = await out();
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl }, async (a) => {
      a.meta({ model_calls: [{ latency_ms: 5 }] });
      a.meta({ model_calls: [{ latency_ms: 7 }], note: 'x' });
      await a.wait(0);
      await a.wait(0);
      return true;
    }).run();
    expect(r.status).toBe('finished');
    const { entries } = await readTrace(dir);
    expect(entries[0]!.meta).toEqual({ model_calls: [{ latency_ms: 5 }, { latency_ms: 7 }], note: 'x' });
    expect(entries[1]!.meta).toBeUndefined();
    // No call carried tokens or a cost: result.json counts the calls only.
    expect(await readResult(dir)).toMatchObject({ model_calls: 2 });
    expect(await readResult(dir)).not.toHaveProperty('cost_usd');
    expect(await readResult(dir)).not.toHaveProperty('input_tokens');
  });

  it("result.json sums the model calls' tokens and cost, a call attached after the last entry included; an agent without calls gets no model fields", async () => {
    const dir = await out();
    const r = await new HookAgent({ outputDir: dir, vncUrl: desktop.vncUrl }, async (a) => {
      a.meta({ model_calls: [{ latency_ms: 5, tokens: { input: 1000, output: 20 }, cost_usd: 0.00324 }] });
      await a.wait(0);
      a.meta({ model_calls: [{ latency_ms: 7, tokens: { input: 1500, output: 30, cached_input: 1000 }, cost_usd: 0.0001 }] });
      a.end('stuck', { code: 'AGENT_ERR_STUCK', message: 'test' });
      return false;
    }).run();
    expect(r).toMatchObject({ status: 'stuck', model_calls: 2, input_tokens: 2500, output_tokens: 50, cost_usd: 0.00334 });
    expect(await readResult(dir)).toEqual(r);
    expect((await readTrace(dir)).entries).toHaveLength(1);

    const unpriced = await out();
    const u = await new HookAgent({ outputDir: unpriced, vncUrl: desktop.vncUrl }, async (a) => {
      a.meta({ model_calls: [{ tokens: { input: 10, output: 2 }, cost_usd: 0.5 }, { tokens: { input: 5, output: 1 } }] });
      await a.wait(0);
      return true;
    }).run();
    expect(u).toMatchObject({ model_calls: 2, input_tokens: 15, output_tokens: 3 });
    expect(u).not.toHaveProperty('cost_usd');

    const none = await new HookAgent({ outputDir: await out(), vncUrl: desktop.vncUrl }, async (a) => {
      await a.wait(0);
      return true;
    }).run();
    expect(none.status).toBe('finished');
    for (const k of ['model_calls', 'input_tokens', 'output_tokens', 'cost_usd']) expect(none).not.toHaveProperty(k);
  });

  it('the password option reaches the VNC server: right one acts, wrong one ends the run with RFB_ERR_AUTH_FAILED', async () => {
    const locked = await t.desktop({ password: 'secret12' });
    const move = async (password: string) =>
      new HookAgent({ outputDir: await out(), vncUrl: locked.vncUrl, password }, async (a) => {
        await a.mouseMove({ x: 5, y: 5 });
        return true;
      }).run({ maxSteps: 1 });
    expect(await move('secret12')).toMatchObject({ status: 'finished', steps: 1 });
    expect(locked.events).toEqual([{ kind: 'pointer', x: 5, y: 5, mask: 0 }]);
    expect(await move('wrong')).toMatchObject({ status: 'error', error: { code: 'RFB_ERR_AUTH_FAILED' } });
    expect(locked.events).toHaveLength(1);
    expect(JSON.stringify(new HookAgent({ outputDir: await out(), vncUrl: locked.vncUrl, password: 'secret12' }, async () => true).options)).not.toContain('secret12');
  });
});
