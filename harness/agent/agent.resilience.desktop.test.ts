/**
 * The Agent when things go wrong, on one real Xvnc desktop: kill -9 in the middle of a run
 * (partial_execution.json holds every finished action) and a double click made again when a busy
 * machine stretched its presses apart (the page's own click count, over CDP). Bad action arguments
 * and reconnection need no X server: agent.resilience.test.ts runs them on the fake desktop.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseExecution } from '../trace/parse.ts';
import { readTrace } from '../trace/reader.ts';
import { ScriptAgent, useEventsDesktop } from './test-helpers/desktops.ts';
import { startCrashChild } from '../test-helpers/crash-child.ts';
import { startTcpProxy } from './test-helpers/tcp-proxy.ts';

const CRASH_CHILD = fileURLToPath(new URL('./test-fixtures/crash-agent.ts', import.meta.url));

// One desktop for the file; the page reset and a fresh output directory per test (run() never writes over a finished run).
const env = useEventsDesktop('xvnc');

async function partial(dir: string) {
  return parseExecution(JSON.parse(await readFile(join(dir, 'partial_execution.json'), 'utf8')));
}

describe('crash', () => {
  it('kill -9 in the middle of a run: partial_execution.json parses and holds every finished action', async () => {
    const dir = join(await env.out(), 'crash');
    let signal: NodeJS.Signals | null = null;
    const c = startCrashChild(CRASH_CHILD, [dir, env.desktop.vncUrl, env.desktop.cdpUrl]);
    try {
      await c.until((stdout) => /^done 7$/m.test(stdout));
    } finally {
      signal = await c.kill9();
    }
    expect(signal).toBe('SIGKILL');
    const stdout = c.stdout();
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
    const dir = await env.out();
    const proxy = await startTcpProxy(env.desktop.rfbUnixUrl);
    try {
      const agent = new ScriptAgent({ outputDir: dir, vncUrl: proxy.url, cdpUrl: env.desktop.cdpUrl }, async (a) => {
        await a.mouseMove({ x: 5, y: 5 }); // connect first: the delay is for the click's round trips
        // From the first press on, every answer of the server comes 300 ms late for 700 ms: the first attempt's
        // presses are ~600 ms apart (the calm moment before it was still calm).
        proxy.delayServerAfterPress(300, 700);
        await a.mouseClick({ position: { x: 90, y: 60 }, clickType: 'double' });
      });
      const r = await agent.run({ maxSteps: 1 });
      expect(r.status).toBe('finished');
      const s = await env.desktop.settle((st) => st.events.some((e) => e.type === 'dblclick'));
      expect(s.events.filter((e) => e.type === 'dblclick').map((e) => [e.x, e.y])).toContainEqual([90, 60]);
      const click = (await readTrace(dir)).entries.at(-1)!;
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
