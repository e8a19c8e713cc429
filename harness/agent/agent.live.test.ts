/**
 * The Agent as a LiveControl (live-control.ts, takeover.ts): pause() / resume(), askForHelp(), a person's
 * takeover with their input sent through the agent's own connection and recorded (actor "human"), handback,
 * cancellation while paused, the step timeout not running while paused, and run() starting and closing a
 * live endpoint through the class's liveEndpoint. On the in-process fake desktop (real RFB over TCP).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { KEYSYM } from '../keys/keysyms.ts';
import type { LiveEndpointOptions, LiveStatus } from '../live/control.ts';
import type { Framebuffer } from '../rfb/framebuffer.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import { Agent, type LiveEndpointStarter } from './agent.ts';
import type { AgentOptions } from './options.ts';
import { presses, useFakeRuns } from './test-helpers/fake-run.ts';
import { deferred, hasSettled, keyEvent, pointer, statusWhere, until } from './test-helpers/live.ts';

/** An agent whose act() is the given function (`call` counts from 1). */
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

/** The code of what `p` rejects with (fails when it resolves). */
async function codeOf(p: Promise<unknown>): Promise<{ code: string; details: Record<string, unknown> | undefined }> {
  const e = await p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (x: unknown) => x,
  );
  if (!isVncuaError(e)) throw e;
  return { code: e.code, details: e.details };
}

describe('Agent: pause, resume, askForHelp', () => {
  const t = useFakeRuns();

  it('pause() resolves once the current act() has returned; no act() runs while paused; resume() goes on; result.json has paused_ms', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const release = deferred();
    const inStep2 = deferred();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      await a.wait(0);
      if (call === 2) {
        inStep2.resolve();
        await release.promise;
      }
      return call === 4;
    });
    expect(agent.status()).toEqual({ state: 'ended', holder: null, help: null, steps: 0 });
    expect(await codeOf(agent.pause())).toMatchObject({ code: 'AGENT_ERR_ILLEGAL_STATE' });
    const statuses: LiveStatus[] = [];
    agent.onStatus((s) => statuses.push(s));
    const run = agent.run({ maxSteps: 10 });
    await inStep2.promise;
    const paused = agent.pause();
    expect(await hasSettled(paused)).toBe(false);
    expect(agent.liveState).toBe('running');
    release.resolve();
    await paused;
    expect(agent.status()).toEqual({ state: 'paused', holder: null, help: null, steps: 2 });
    expect(agent.calls).toBe(2);
    // Paused: asking again resolves at once, and nothing runs (act() would count a call).
    await agent.pause();
    expect(agent.calls).toBe(2);
    await agent.resume();
    const r = await run;
    expect(r).toMatchObject({ status: 'finished', steps: 4 });
    expect(r.paused_ms).toBeGreaterThan(0);
    expect(r.help_requests).toBeUndefined();
    expect(r.human_steps).toBeUndefined();
    expect(await readResult(outputDir)).toEqual(r);
    expect(statuses.map((s) => s.state)).toEqual(['running', 'running', 'running', 'paused', 'running', 'running', 'running', 'ended']);
    expect(agent.status().state).toBe('ended');
  });

  it('askForHelp() flags the run at once (state help, the reason), pauses after the step; resume() goes on; help_requests counted', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    let seenInStep: LiveStatus | undefined;
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      await a.wait(0);
      if (call === 1) {
        a.askForHelp('a captcha I cannot solve');
        seenInStep = a.status();
      }
      return call === 2;
    });
    const run = agent.run({ maxSteps: 5 });
    await statusWhere(agent, (s) => s.state === 'help', 'the help request');
    // pause() resolves once the loop is paused (here: for help, after step 1).
    await agent.pause();
    expect(seenInStep).toEqual({ state: 'help', holder: null, help: 'a captcha I cannot solve', steps: 1 });
    expect(agent.status()).toEqual({ state: 'help', holder: null, help: 'a captcha I cannot solve', steps: 1 });
    expect(agent.calls).toBe(1);
    await agent.resume();
    const r = await run;
    expect(r).toMatchObject({ status: 'finished', steps: 2, help_requests: 1 });
    expect(r.paused_ms).toBeGreaterThan(0);
    expect(() => agent.askForHelp('after')).toThrow(expect.objectContaining({ code: 'AGENT_ERR_ILLEGAL_STATE' }));
  });

  it('cancelling a paused run ends it cancelled, with the trace intact', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const ac = new AbortController();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      await a.mouseMove({ x: call, y: 1 });
      if (call === 2) a.askForHelp('stuck');
      return false;
    });
    const run = agent.run({ maxSteps: 10, signal: ac.signal });
    await statusWhere(agent, (s) => s.state === 'help', 'the help request');
    await agent.pause();
    expect(agent.status()).toMatchObject({ state: 'help', steps: 2 });
    ac.abort();
    const r = await run;
    expect(r).toMatchObject({ status: 'cancelled', steps: 2, help_requests: 1 });
    const trace = await readTrace(outputDir);
    expect(trace.partial).toBe(false);
    expect(trace.entries.map((e) => [e.action, e.params])).toEqual([
      ['mouse_move', { position: { x: 1, y: 1 } }],
      ['mouse_move', { position: { x: 2, y: 1 } }],
    ]);
  });

  it('stepTimeoutMs does not run while paused', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false, stepTimeoutMs: 150 }, async (a, call) => {
      if (call === 1) a.askForHelp('wait for me');
      return call === 2;
    });
    const run = agent.run({ maxSteps: 5 });
    await statusWhere(agent, (s) => s.state === 'help', 'the help request');
    await agent.pause();
    await until(() => agent.pausedMs > 400, 'the pause to outlast stepTimeoutMs');
    await agent.resume();
    const r = await run;
    expect(r.status).toBe('finished');
    expect(r.paused_ms).toBeGreaterThan(400);
  });
});

describe('Agent: a person takes over', () => {
  const t = useFakeRuns();

  it('takeover pauses after the step; the holder\'s input reaches the desktop through the agent\'s connection and is recorded as actor "human"; another person is refused; handback resumes', async () => {
    const desktop = await t.desktop({ width: 320, height: 240 });
    const outputDir = await t.out();
    const acted = deferred();
    const goOn = deferred();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      if (call === 1) {
        await a.mouseClick({ position: { x: 10, y: 10 } });
        acted.resolve();
        await goOn.promise;
        return false;
      }
      // Where the person left the pointer.
      await a.mouseClick();
      await a.finish();
      return true;
    });
    expect(agent.framebuffer()).toBeNull();
    const fbs: Array<Framebuffer | null> = [];
    agent.onFramebuffer((fb) => fbs.push(fb));
    const run = agent.run({ maxSteps: 5 });
    await acted.promise;
    expect(agent.framebuffer()?.width).toBe(320);
    const granted = agent.takeover('ana');
    expect(await hasSettled(granted)).toBe(false);
    // Someone else while ana's takeover waits for the step: refused, naming her.
    expect(await codeOf(agent.takeover('bob'))).toEqual({ code: 'LIVE_ERR_TAKEN', details: { holder: 'ana' } });
    goOn.resolve();
    expect(await granted).toEqual({ state: 'paused', holder: 'ana', help: null, steps: 1 });
    expect(agent.calls).toBe(1);
    expect(await agent.takeover('ana')).toMatchObject({ holder: 'ana' });
    expect(await codeOf(agent.takeover('bob'))).toEqual({ code: 'LIVE_ERR_TAKEN', details: { holder: 'ana' } });
    expect(await codeOf(agent.handback('bob'))).toEqual({ code: 'LIVE_ERR_NOT_HOLDER', details: { holder: 'ana' } });
    expect(await codeOf(agent.takeover(''))).toMatchObject({ code: 'LIVE_ERR_BAD_REQUEST' });

    const before = desktop.events.length;
    agent.input('bob', pointer(200, 200, 1)); // not the holder: dropped
    agent.input('ana', { type: 'wheel' } as never); // not an event: dropped
    for (const e of [
      pointer(60, 50),
      pointer(100, 80),
      pointer(100, 80, 1),
      pointer(100, 80, 0),
      keyEvent('h', true),
      keyEvent('h', false),
      keyEvent('i', true),
      keyEvent('i', false),
    ]) {
      agent.input('ana', e);
    }
    agent.input('ana', keyEvent(KEYSYM.Return, true));
    agent.input('ana', keyEvent(KEYSYM.Return, false));
    await until(() => desktop.events.length >= before + 10, "the person's events at the desktop");
    expect(desktop.events.slice(before)).toEqual([
      { kind: 'pointer', x: 60, y: 50, mask: 0 },
      { kind: 'pointer', x: 100, y: 80, mask: 0 },
      { kind: 'pointer', x: 100, y: 80, mask: 1 },
      { kind: 'pointer', x: 100, y: 80, mask: 0 },
      { kind: 'key', keysym: 0x68, down: true },
      { kind: 'key', keysym: 0x68, down: false },
      { kind: 'key', keysym: 0x69, down: true },
      { kind: 'key', keysym: 0x69, down: false },
      { kind: 'key', keysym: KEYSYM.Return, down: true },
      { kind: 'key', keysym: KEYSYM.Return, down: false },
    ]);
    // The click and the text are recorded as they become final, while ana still holds the run.
    await until(async () => {
      const p = JSON.parse(await readFile(join(outputDir, 'partial_execution.json'), 'utf8')) as unknown[];
      return p.length >= 4;
    }, "the person's entries in partial_execution.json");
    const back = await agent.handback('ana');
    expect(back.holder).toBeNull();
    const r = await run;
    expect(r).toMatchObject({ status: 'finished', steps: 2, human_steps: 3 });
    const { entries } = await readTrace(outputDir);
    expect(entries.map((e) => [e.index, e.action, e.actor ?? 'agent', e.params])).toEqual([
      [0, 'mouse_click', 'agent', { position: { x: 10, y: 10 }, button: 'left', click_type: 'single' }],
      [1, 'mouse_click', 'human', { position: { x: 100, y: 80 }, button: 'left', click_type: 'single' }],
      [2, 'type_text', 'human', { text: 'hi' }],
      [3, 'press_keys', 'human', { keys: 'Return' }],
      [4, 'mouse_click', 'agent', { button: 'left', click_type: 'single' }],
      [5, 'finish', 'agent', {}],
    ]);
    for (const e of entries.slice(1, 4)) {
      expect(e.started_at!).toBeLessThanOrEqual(e.ended_at!);
      expect(e.task_marked_complete).toBeNull(); // no CDP: no success check
    }
    // started_at / ended_at are the first and last event of each: the click's press and release.
    expect(entries[1]!.ended_at! - entries[1]!.started_at!).toBeGreaterThanOrEqual(0);
    expect(entries[2]!.started_at!).toBeGreaterThanOrEqual(entries[1]!.ended_at!);
    // After the handback the agent's click (no position) lands where ana left the pointer; bob's press never arrived.
    expect(presses(desktop.events)).toEqual([
      [10, 10, 0],
      [100, 80, 0],
      [100, 80, 0],
    ]);
    expect(fbs.length).toBeGreaterThanOrEqual(2);
    expect(fbs[0]?.width).toBe(320);
    expect(fbs.at(-1)).toBeNull();
    expect(agent.framebuffer()).toBeNull();
  });

  it('at handback, what the person still holds is released through the connection, and the entries it completes say so (a takeover before the agent connected: the events wait for the connection)', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      await a.mouseMove({ x: 5, y: 5 });
      return call === 2;
    });
    const run = agent.run({ maxSteps: 5 });
    // Granted before the first act(): no connection yet (record: false connects at the first action).
    expect(await agent.takeover('ana')).toMatchObject({ state: 'paused', holder: 'ana', steps: 0 });
    const before = desktop.events.length;
    for (const e of [keyEvent(KEYSYM.Control_L, true), pointer(30, 30, 1), pointer(90, 40, 1)]) agent.input('ana', e);
    await agent.handback('ana');
    expect(desktop.events.slice(before)).toEqual([
      { kind: 'key', keysym: KEYSYM.Control_L, down: true },
      { kind: 'pointer', x: 30, y: 30, mask: 1 },
      { kind: 'pointer', x: 90, y: 40, mask: 1 },
      { kind: 'key', keysym: KEYSYM.Control_L, down: false },
      { kind: 'pointer', x: 90, y: 40, mask: 0 },
    ]);
    const r = await run;
    expect(r.status).toBe('finished');
    const { entries } = await readTrace(outputDir);
    const human = entries.filter((e) => e.actor === 'human');
    expect(human.map((e) => [e.action, e.params, e.meta])).toEqual([
      ['mouse_drag', { start: { x: 30, y: 30 }, end: { x: 90, y: 40 }, button: 'left' }, { modifiers: ['ctrl'], released_at_handback: true }],
    ]);
    // The agent's next move came with no button held.
    const last = desktop.events.at(-1);
    expect(last).toMatchObject({ kind: 'pointer', x: 5, y: 5, mask: 0 });
  });

  it('cancelled while a person holds the run: their pending actions are recorded, the run ends cancelled; a waiting takeover is refused when the run ends', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const ac = new AbortController();
    const acted = deferred();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a) => {
      await a.mouseMove({ x: 1, y: 1 });
      acted.resolve();
      return false;
    });
    const run = agent.run({ maxSteps: 10, signal: ac.signal });
    await acted.promise;
    await agent.takeover('ana');
    agent.input('ana', keyEvent('x', true));
    agent.input('ana', keyEvent('x', false));
    await until(() => desktop.events.some((e) => e.kind === 'key' && e.keysym === 0x78 && !e.down), 'the key at the desktop');
    ac.abort();
    const r = await run;
    expect(r).toMatchObject({ status: 'cancelled', human_steps: 1 });
    const { entries } = await readTrace(outputDir);
    expect(entries.map((e) => [e.action, e.actor])).toEqual([
      ['mouse_move', undefined],
      ['type_text', 'human'],
    ]);
    expect(agent.status()).toEqual({ state: 'ended', holder: null, help: null, steps: 1 });
    expect(await codeOf(agent.takeover('ana'))).toMatchObject({ code: 'AGENT_ERR_ILLEGAL_STATE' });
    expect(await codeOf(agent.handback('ana'))).toMatchObject({ code: 'AGENT_ERR_ILLEGAL_STATE' });

    // A takeover still waiting for a step that never ends (the run is cancelled first) is refused.
    const stuck = deferred();
    const slow = new FnAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false }, async (a) => {
      await a.wait(0);
      stuck.resolve();
      await new Promise((res) => a.signal.addEventListener('abort', res));
      return false;
    });
    const ac2 = new AbortController();
    const run2 = slow.run({ maxSteps: 3, signal: ac2.signal });
    await stuck.promise;
    const waiting = slow.takeover('ana');
    ac2.abort();
    expect(await codeOf(waiting)).toMatchObject({ code: 'AGENT_ERR_ILLEGAL_STATE' });
    expect((await run2).status).toBe('cancelled');
  });

  it("resume() ends a takeover as the holder's handback would; a handback before the takeover was granted withdraws it", async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const acted = deferred();
    const goOn = deferred();
    const agent = new FnAgent({ outputDir, vncUrl: desktop.vncUrl, record: false }, async (a, call) => {
      await a.wait(0);
      if (call === 1) {
        acted.resolve();
        await goOn.promise;
      }
      return call === 3;
    });
    const run = agent.run({ maxSteps: 5 });
    await acted.promise;
    const withdrawn = agent.takeover('bob');
    expect(await agent.handback('bob')).toMatchObject({ holder: null, state: 'running' });
    expect(await withdrawn).toMatchObject({ holder: null });
    const granted = agent.takeover('ana');
    goOn.resolve();
    await granted;
    agent.input('ana', pointer(20, 20, 4));
    agent.input('ana', pointer(20, 20, 0));
    await agent.resume();
    const r = await run;
    expect(r).toMatchObject({ status: 'finished', steps: 3, human_steps: 1 });
    const { entries } = await readTrace(outputDir);
    expect(entries.filter((e) => e.actor === 'human').map((e) => e.params)).toEqual([{ position: { x: 20, y: 20 }, button: 'right', click_type: 'single' }]);
  });
});

describe('Agent.run: the live endpoint', () => {
  const t = useFakeRuns();

  /** An Agent class whose liveEndpoint is `starter`. */
  function withEndpoint(starter: LiveEndpointStarter | null) {
    return class extends FnAgent {
      static override liveEndpoint = starter;
    };
  }

  it('is started on outputDir with the task as title and this agent as control, and closed after result.json is written', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    const started: LiveEndpointOptions[] = [];
    let closedWithResult: boolean | undefined;
    const Live = withEndpoint(async (o) => {
      started.push(o);
      return {
        url: 'http://127.0.0.1:1',
        token: 't',
        async close() {
          closedWithResult = existsSync(join(outputDir, 'result.json'));
        },
      };
    });
    const agent = new Live({ outputDir, vncUrl: desktop.vncUrl, record: false, task: 'find the code' }, async (a) => {
      expect(started[0]?.control.status().state).toBe('running');
      await a.wait(0);
      return true;
    });
    const r = await agent.run();
    expect(r.status).toBe('finished');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ dir: outputDir, title: 'find the code' });
    expect(started[0]!.control).toBe(agent);
    expect(closedWithResult).toBe(true);
    expect(r.live_error).toBeUndefined();
  });

  it('a failure to start it is noted in live_error and the run goes on; live: false starts none', async () => {
    const desktop = await t.desktop();
    const outputDir = await t.out();
    let calls = 0;
    const Failing = withEndpoint(async () => {
      calls++;
      throw Object.assign(new Error('no port'), { code: 'EACCES' });
    });
    const ok = async (a: FnAgent) => {
      await a.wait(0);
      return true;
    };
    const r = await new Failing({ outputDir, vncUrl: desktop.vncUrl, record: false }, ok).run();
    expect(r).toMatchObject({ status: 'finished', live_error: { code: 'LIVE_ERR_LISTEN', message: 'no port' } });
    expect((await readResult(outputDir)).live_error).toEqual(r.live_error);
    const off = await new Failing({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false, live: false }, ok).run();
    expect(off.status).toBe('finished');
    expect(calls).toBe(1);
  });
});
