/**
 * OpenAICuaAgent against a local Responses API server (test-helpers/fake-responses.ts) through the
 * real `openai` SDK, on a real Xvnc desktop showing the events page: what only a real page shows
 * (current_url over CDP, the click landing on the text box, the typed text, a double click, a context
 * menu, a drop, the scroll, Ctrl shortcuts). The requests on the wire, the mapping, safety checks and
 * API errors run on the fake desktop: agent.test.ts.
 */
import type { ComputerAction, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEventsDesktop, tempOutputDir, type EventsDesktop } from '../../harness/agent/test-helpers/desktops.ts';
import { OpenAICuaAgent, type OpenAICuaOptions } from './agent.ts';
import { computerCall, message, startFakeResponses, type FakeResponsesServer, type Script } from './test-helpers/fake-responses.ts';

const TASK = 'Type hi into the text box.';

describe('OpenAICuaAgent on Xvnc with a scripted Responses API', () => {
  let desktop: EventsDesktop;
  const cleanups: Array<() => Promise<void>> = [];
  const out = async () => {
    const d = await tempOutputDir('vncua-openai-');
    cleanups.push(d.remove);
    return d.dir;
  };
  const serve = async (script: Script) => {
    const s = await startFakeResponses(script);
    cleanups.push(s.close);
    return s;
  };
  const agent = (server: Pick<FakeResponsesServer, 'baseURL'>, dir: string, extra: Partial<OpenAICuaOptions> = {}) =>
    new OpenAICuaAgent({ outputDir: dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, record: false, task: TASK, apiKey: 'sk-test', baseURL: server.baseURL, ...extra });

  beforeAll(async () => {
    desktop = await startEventsDesktop('xvnc');
  }, 90_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await desktop?.close();
  });

  it('preview tool with screenshotSize: current_url is the page; the click lands on the text box at the mapped pixel and hi is typed', async () => {
    await desktop.reset();
    const click = computerCall({ action: { type: 'click', button: 'left', x: 800, y: 100 } });
    const type = computerCall({ action: { type: 'type', text: 'hi' } });
    const server = await serve([{ reply: [click] }, { reply: [type] }, { reply: [message('I typed hi.')] }]);
    const r = await agent(server, await out(), { screenshotSize: { width: 1024, height: 640 } }).run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 3 });
    const out1 = (server.requests[1]!.body.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput & { output: { current_url?: string } };
    expect(out1).toMatchObject({ type: 'computer_call_output', call_id: click.call_id, output: { type: 'computer_screenshot', current_url: desktop.pageUrl } });
    // 800,100 in the 1024x640 image is 1000,125 on the 1280x800 screen (x·1279/1023, y·799/639, rounded).
    const s = await desktop.settle((s) => s.text === 'hi');
    expect(s.text).toBe('hi');
    expect(s.events.filter((e) => e.type === 'click')).toEqual([expect.objectContaining({ x: 1000, y: 125, target: 'text' })]);
  });

  it("batched computer tool: one call's actions reach the page in order", async () => {
    await desktop.reset();
    const actions: ComputerAction[] = [
      { type: 'move', x: 100, y: 100 },
      { type: 'click', button: 'left', x: 700, y: 100 },
      { type: 'type', text: 'ab' },
      { type: 'keypress', keys: ['CTRL', 'A'] },
      { type: 'keypress', keys: ['BACKSPACE'] },
      { type: 'type', text: 'cd' },
      { type: 'double_click', x: 300, y: 150, keys: null },
      { type: 'click', button: 'right', x: 310, y: 160 },
      { type: 'scroll', x: 150, y: 420, scroll_x: 0, scroll_y: 240 },
      {
        type: 'drag',
        path: [
          { x: 380, y: 380 },
          { x: 630, y: 410 },
        ],
      },
    ];
    const server = await serve([{ reply: [computerCall({ actions })] }, { reply: [message('Done.')] }]);
    const r = await agent(server, await out(), { model: 'gpt-5.4' }).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    // The events page cancels Ctrl shortcuts (Ctrl+A selects nothing), so BackSpace removes only the b.
    const s = await desktop.settle((s) => s.text === 'acd' && s.scroll.top === 240 && s.events.some((e) => e.type === 'drop'));
    expect(s.text).toBe('acd');
    expect(s.events.filter((e) => e.type === 'keydown' && e.ctrl).map((e) => e.key)).toEqual(['Control', 'a']);
    expect(s.scroll.top).toBe(2 * 120);
    expect(s.events.filter((e) => e.type === 'dblclick')).toEqual([expect.objectContaining({ x: 300, y: 150 })]);
    expect(s.events.filter((e) => e.type === 'contextmenu')).toEqual([expect.objectContaining({ x: 310, y: 160, button: 2 })]);
    expect(s.events.filter((e) => e.type === 'drop')).toEqual([expect.objectContaining({ target: 'dst', data: 'src' })]);
  });
});
