/**
 * The Agent when things go wrong, on one real Xvnc desktop: bad action arguments (typed errors,
 * nothing sent, the trace keeps every entry), a VNC connection cut between steps (one
 * reconnection), a server gone for good (status error, valid files), and kill -9 in the middle
 * of a run (partial_execution.json holds every finished action).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { parseExecution } from '../trace/parse.ts';
import { readResult, readTrace } from '../trace/reader.ts';
import { Agent } from './agent.ts';
import type { AgentOptions } from './options.ts';
import { ScriptAgent, startEventsDesktop, tempOutputDir, type EventsDesktop } from './test-helpers/desktops.ts';
import { startTcpProxy, type TcpProxy } from './test-helpers/tcp-proxy.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CRASH_CHILD = fileURLToPath(new URL('./test-fixtures/crash-agent.ts', import.meta.url));

let desktop: EventsDesktop;
let out: { dir: string; remove(): Promise<void> };

beforeAll(async () => {
  desktop = await startEventsDesktop('xvnc');
  out = await tempOutputDir();
}, 90_000);

afterAll(async () => {
  await desktop?.close();
  await out?.remove();
});

beforeEach(async () => {
  await desktop.reset();
  // A fresh output directory per test: run() never writes over a finished run.
  await out?.remove();
  out = await tempOutputDir();
});

async function partial(dir: string) {
  return parseExecution(JSON.parse(await readFile(join(dir, 'partial_execution.json'), 'utf8')));
}

/** An agent whose act() is `fn(agent, call)`. */
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

describe('bad actions', () => {
  it('each gives its typed error naming the argument and the allowed values; nothing is sent; the trace keeps every entry', async () => {
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
    const agent = new ScriptAgent({ outputDir: out.dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl }, async (a) => {
      await a.mouseMove({ x: 30, y: 30 });
      for (const [name, call] of cases) {
        const error = await call(a).then(
          () => null,
          (e: unknown) => e,
        );
        seen.push({ name, error, onDisk: await partial(out.dir) });
      }
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
    const final = (await readTrace(out.dir)).entries;
    expect(final).toHaveLength(cases.length + 2);
    expect(final.at(-1)).toMatchObject({ action: 'mouse_click', params: { position: { x: 40, y: 50 } } });
    // A failed attempt keeps the arguments as given (omitted ones stay omitted).
    expect(final[2]).toMatchObject({ action: 'mouse_click', params: { position: { x: -1, y: 5 } } });
    expect(final[2]!.params).toEqual({ position: { x: -1, y: 5 } });
    // Nothing of the bad attempts reached the page: the only button events are the final click.
    const s = await desktop.settle((st) => st.events.some((e) => e.type === 'click'));
    expect(s.events.filter((e) => /^(mouse(down|up)|click|wheel|key)/.test(e.type)).map((e) => [e.type, e.x, e.y])).toEqual([
      ['mousedown', 40, 50],
      ['mouseup', 40, 50],
      ['click', 40, 50],
    ]);
  });
});

describe('reconnection', () => {
  let proxy: TcpProxy;
  beforeEach(async () => {
    proxy = await startTcpProxy(desktop.rfbUnixUrl);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a connection cut between steps is re-made once by the next action, which then lands', async () => {
    const agent = new FnAgent({ outputDir: out.dir, vncUrl: proxy.url, cdpUrl: desktop.cdpUrl }, async (a, call) => {
      if (call === 1) {
        await a.mouseMove({ x: 60, y: 60 });
        return false;
      }
      proxy.dropAll();
      await new Promise((r) => setTimeout(r, 50));
      await a.mouseClick({ position: { x: 70, y: 80 } });
      return true;
    });
    const r = await agent.run({ maxSteps: 3 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    expect(proxy.accepted).toBe(2);
    const s = await desktop.settle((st) => st.events.some((e) => e.type === 'click'));
    expect(s.events.filter((e) => e.type === 'click').map((e) => [e.x, e.y, e.detail])).toEqual([[70, 80, 1]]);
    expect((await readTrace(out.dir)).entries.map((e) => [e.action, 'error' in e])).toEqual([
      ['mouse_move', false],
      ['mouse_click', false],
    ]);
  });

  it('a server gone for good ends the run with AGENT_ERR_CONNECTION_LOST; result.json and execution.json stay valid', async () => {
    const agent = new FnAgent({ outputDir: out.dir, vncUrl: proxy.url, cdpUrl: desktop.cdpUrl }, async (a, call) => {
      if (call === 1) {
        await a.mouseMove({ x: 60, y: 60 });
        return false;
      }
      await proxy.close();
      await a.mouseClick({ position: { x: 70, y: 80 } });
      return true;
    });
    const r = await agent.run({ maxSteps: 3 });
    expect(r).toMatchObject({ status: 'error', steps: 1, error: { code: 'AGENT_ERR_CONNECTION_LOST' } });
    expect(await readResult(out.dir)).toEqual(r);
    const t = await readTrace(out.dir);
    expect(t.partial).toBe(false);
    expect(t.entries.map((e) => [e.action, 'error' in e ? e.error.code : null])).toEqual([
      ['mouse_move', null],
      ['mouse_click', 'AGENT_ERR_CONNECTION_LOST'],
    ]);
    expect(await readFile(join(out.dir, 'error.txt'), 'utf8')).toContain('code: AGENT_ERR_CONNECTION_LOST');
  });
});

describe('crash', () => {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('kill -9 in the middle of a run: partial_execution.json parses and holds every finished action', async () => {
    const dir = join(out.dir, 'crash');
    const child = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD, dir, desktop.vncUrl, desktop.cdpUrl], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const onData = () => {
        if (/^done 7$/m.test(stdout)) {
          child.stdout.off('data', onData);
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.once('close', (code) => reject(new Error(`the agent exited (${code}) early: ${stderr}`)));
    });
    child.kill('SIGKILL');
    await closed;
    expect(child.signalCode).toBe('SIGKILL');
    const printed = [...stdout.matchAll(/^done (\d+)$/gm)].map((m) => Number(m[1]));
    expect(printed).toEqual(printed.map((_, i) => i));
    const entries = await partial(dir);
    expect(entries.length).toBeGreaterThanOrEqual(printed.length);
    for (const i of printed) {
      expect(entries[i]).toMatchObject({ index: i, action: 'mouse_move', params: { position: { x: 10 + i, y: 10 + i } } });
    }
  });
});

describe('slow round trips (a busy machine)', () => {
  it('a double click whose presses came too far apart is made again past the double-click time, and the trace says so', async () => {
    const proxy = await startTcpProxy(desktop.rfbUnixUrl);
    try {
      const agent = new ScriptAgent({ outputDir: out.dir, vncUrl: proxy.url, cdpUrl: desktop.cdpUrl }, async (a) => {
        await a.mouseMove({ x: 5, y: 5 }); // connect first: the delay is for the click's round trips
        // From the first press on, every answer of the server comes 300 ms late for 700 ms: the first attempt's
        // presses are ~600 ms apart (the calm moment before it was still calm).
        proxy.delayServerAfterPress(300, 700);
        await a.mouseClick({ position: { x: 90, y: 60 }, clickType: 'double' });
      });
      const r = await agent.run({ maxSteps: 1 });
      expect(r.status).toBe('finished');
      const s = await desktop.settle((st) => st.events.some((e) => e.type === 'dblclick'));
      expect(s.events.filter((e) => e.type === 'dblclick').map((e) => [e.x, e.y])).toContainEqual([90, 60]);
      const click = (await readTrace(out.dir)).entries.at(-1)!;
      expect(click.action).toBe('mouse_click');
      expect((click.meta as { click_attempts?: number }).click_attempts).toBeGreaterThanOrEqual(2);
      expect((click.meta as { click_widest_gap_ms?: number }).click_widest_gap_ms).toBeGreaterThanOrEqual(0);
      // The page's own click count (over CDP) of the attempt that counted.
      expect((click.meta as { click_count_seen?: number }).click_count_seen).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});
