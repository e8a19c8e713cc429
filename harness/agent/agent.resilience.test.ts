/**
 * The Agent when things go wrong, on the fake RFB desktop (no X server, no browser): bad action
 * arguments (typed errors, nothing sent, the trace keeps every entry), a VNC connection cut between
 * steps (one reconnection), a server gone for good (status error, valid files). kill -9 mid-run and
 * a double click stretched by a busy machine need a real desktop: agent.resilience.desktop.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { parseExecution } from '../trace/parse.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import type { Agent } from './agent.ts';
import { HookAgent, ScriptAgent } from './test-helpers/hook-agent.ts';
import { keyDowns, presses, useFakeRuns } from './test-helpers/fake-run.ts';
import { startTcpProxy, type TcpProxy } from './test-helpers/tcp-proxy.ts';

const t = useFakeRuns();

async function partial(dir: string) {
  return parseExecution(JSON.parse(await readFile(join(dir, 'partial_execution.json'), 'utf8')));
}

describe('bad actions', () => {
  it('each gives its typed error naming the argument and the allowed values; nothing is sent; the trace keeps every entry', async () => {
    const desktop = await t.desktop({ width: 1280, height: 800 });
    const dir = await t.out();
    const p = { x: 20, y: 20 };
    const cases: Array<[string, (a: Agent) => Promise<unknown>, string, Record<string, unknown>]> = [
      [
        'off screen right',
        (a) => a.mouseMove({ x: 1280, y: 10 }),
        'ACTION_ERR_OFF_SCREEN',
        { argument: 'position', value: { x: 1280, y: 10 }, allowed: { x: [0, 1279], y: [0, 799] } },
      ],
      ['off screen negative', (a) => a.mouseClick({ position: { x: -1, y: 5 } }), 'ACTION_ERR_OFF_SCREEN', { argument: 'position', value: { x: -1, y: 5 } }],
      ['drag end off screen', (a) => a.mouseDrag({ start: p, end: { x: 10, y: 800 } }), 'ACTION_ERR_OFF_SCREEN', { argument: 'end' }],
      ['position not a point', (a) => a.mouseMove({ x: Number.NaN, y: 1 }), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'position' }],
      [
        'unknown button',
        (a) => a.mouseClick({ position: p, button: 'top' as never }),
        'ACTION_ERR_BAD_ARGUMENT',
        { argument: 'button', value: 'top', allowed: ['left', 'middle', 'right'] },
      ],
      [
        'unknown click type',
        (a) => a.mouseClick({ position: p, clickType: 'quadruple' as never }),
        'ACTION_ERR_BAD_ARGUMENT',
        { argument: 'clickType', allowed: ['single', 'double', 'triple'] },
      ],
      [
        'unknown option',
        (a) => a.mouseClick({ position: p, modifiers: ['ctrl'] } as never),
        'ACTION_ERR_BAD_ARGUMENT',
        { argument: 'modifiers', allowed: ['position', 'button', 'clickType'] },
      ],
      [
        'unknown direction',
        (a) => a.mouseScroll({ position: p, direction: 'sideways' as never }),
        'ACTION_ERR_BAD_ARGUMENT',
        { argument: 'direction', allowed: ['up', 'down', 'left', 'right'] },
      ],
      ['zero repeat', (a) => a.mouseScroll({ position: p, direction: 'down', repeat: 0 }), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'repeat', value: 0, allowed: [1, 100] }],
      [
        'unknown key',
        (a) => a.pressKeys('ctrl+Retrun'),
        'ACTION_ERR_UNKNOWN_KEY',
        { argument: 'keys', value: 'ctrl+Retrun', suggestions: expect.arrayContaining(['Return']), allowed: expect.arrayContaining(['Return', 'Escape']) },
      ],
      ['empty keys', (a) => a.pressKeys(''), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'keys' }],
      ['control character in text', (a) => a.typeText('a\u0007b'), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'text' }],
      ['negative wait', (a) => a.wait(-1), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'seconds', value: -1, allowed: [0, 3600] }],
      ['unknown navigation', (a) => a.pageNavigation('up' as never), 'ACTION_ERR_BAD_ARGUMENT', { argument: 'direction', value: 'up', allowed: ['back', 'forward'] }],
    ];
    const seen: Array<{ name: string; error: unknown; onDisk: Awaited<ReturnType<typeof partial>> }> = [];
    let sentBeforeTheLastClick = -1;
    const agent = new ScriptAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false }, async (a) => {
      await a.mouseMove({ x: 30, y: 30 });
      for (const [name, call] of cases) {
        const error = await call(a).then(
          () => null,
          (e: unknown) => e,
        );
        seen.push({ name, error, onDisk: await partial(dir) });
      }
      sentBeforeTheLastClick = desktop.events.length;
      await a.mouseClick({ position: { x: 40, y: 50 } });
    });
    const r = await agent.run({ maxSteps: 1 });
    expect(r).toMatchObject({ status: 'finished', steps: 1 });

    cases.forEach(([name, , code, details], i) => {
      const s = seen[i]!;
      expect(isVncuaError(s.error), name).toBe(true);
      expect((s.error as VncuaError).code, name).toBe(code);
      expect((s.error as VncuaError).details, name).toMatchObject(details);
      // On disk right after the failure: the first move, every earlier failure, and this one.
      expect(s.onDisk, name).toHaveLength(i + 2);
      expect(s.onDisk[0], name).toMatchObject({ action: 'mouse_move', params: { position: { x: 30, y: 30 } } });
      expect(s.onDisk.at(-1), name).toMatchObject({ index: i + 1, error: { code } });
      if (i > 0) expect(s.onDisk.slice(0, i + 1), name).toEqual(seen[i - 1]!.onDisk);
    });
    const final = (await readTrace(dir)).entries;
    expect(final).toHaveLength(cases.length + 2);
    expect(final.at(-1)).toMatchObject({ action: 'mouse_click', params: { position: { x: 40, y: 50 } } });
    // A failed attempt keeps the arguments as given (omitted ones stay omitted).
    expect(final[2]).toMatchObject({ action: 'mouse_click', params: { position: { x: -1, y: 5 } } });
    expect(final[2]!.params).toEqual({ position: { x: -1, y: 5 } });
    // Nothing of the bad attempts reached the desktop: before the last click, only the first move's pointer event(s) at 30,30.
    const before = desktop.events.slice(0, sentBeforeTheLastClick);
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((e) => e.kind === 'pointer' && e.x === 30 && e.y === 30 && e.mask === 0)).toBe(true);
    expect(presses(desktop.events)).toEqual([[40, 50, 0]]);
    expect(keyDowns(desktop.events)).toEqual([]);
  });
});

describe('reconnection', () => {
  /** A run through a TCP proxy in front of the fake desktop: a move (step 1), then `between(proxy)` and a click at 70,80 (step 2). */
  async function moveThenClick(between: (proxy: TcpProxy) => Promise<void>) {
    const desktop = await t.desktop();
    const proxy = await startTcpProxy(desktop.tcpUrl);
    t.defer(() => proxy.close());
    const dir = await t.out();
    let call = 0;
    const r = await new HookAgent({ outputDir: dir, vncUrl: proxy.url, record: false }, async (a) => {
      if (++call === 1) {
        await a.mouseMove({ x: 60, y: 60 });
        return false;
      }
      await between(proxy);
      await a.mouseClick({ position: { x: 70, y: 80 } });
      return true;
    }).run({ maxSteps: 3 });
    return { desktop, proxy, dir, r };
  }

  it('a connection cut between steps is re-made once by the next action, which then lands', async () => {
    const { desktop, proxy, dir, r } = await moveThenClick(async (proxy) => {
      proxy.dropAll();
      // Let the close reach the client first: the cut is between steps, not inside the next action.
      await new Promise((r) => setTimeout(r, 50));
    });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    expect(proxy.accepted).toBe(2);
    expect(desktop.connections).toBe(2);
    expect(presses(desktop.events)).toEqual([[70, 80, 0]]);
    expect((await readTrace(dir)).entries.map((e) => [e.action, 'error' in e])).toEqual([
      ['mouse_move', false],
      ['mouse_click', false],
    ]);
  });

  it('a server gone for good ends the run with AGENT_ERR_CONNECTION_LOST; result.json and execution.json stay valid', async () => {
    const { desktop, dir, r } = await moveThenClick((proxy) => proxy.close());
    expect(r).toMatchObject({ status: 'error', steps: 1, error: { code: 'AGENT_ERR_CONNECTION_LOST' } });
    expect(await readResult(dir)).toEqual(r);
    const trace = await readTrace(dir);
    expect(trace.partial).toBe(false);
    expect(trace.entries.map((e) => [e.action, 'error' in e ? e.error.code : null])).toEqual([
      ['mouse_move', null],
      ['mouse_click', 'AGENT_ERR_CONNECTION_LOST'],
    ]);
    expect(await readFile(join(dir, 'error.txt'), 'utf8')).toContain('code: AGENT_ERR_CONNECTION_LOST');
    expect(presses(desktop.events)).toEqual([]);
  });
});
