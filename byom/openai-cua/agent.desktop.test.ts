/**
 * OpenAICuaAgent against a local Responses API server (test-helpers/fake-responses.ts) through the
 * real `openai` SDK, on a real Xvnc desktop showing the events page: what only a real page shows
 * (current_url over CDP, the click landing on the text box, the typed text, a double click, a context
 * menu, a drop, the scroll, Ctrl shortcuts). The requests on the wire, the mapping, safety checks and
 * API errors run on the fake desktop: agent.test.ts.
 */
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, describe, expect, it } from 'vitest';
import { useEventsDesktop } from '../../harness/agent/test-helpers/desktops.ts';
import { OpenAICuaAgent, type OpenAICuaOptions } from './agent.ts';
import { EVENTS_PAGE_ACTIONS, computerCall, message, startFakeResponses, type FakeResponsesServer, type Script } from './test-helpers/fake-responses.ts';

const TASK = 'Type hi into the text box.';

describe('OpenAICuaAgent on Xvnc with a scripted Responses API', () => {
  const env = useEventsDesktop('xvnc');
  const servers: FakeResponsesServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close().catch(() => {});
  });
  const serve = async (script: Script) => {
    const s = await startFakeResponses(script);
    servers.push(s);
    return s;
  };
  const agent = async (server: Pick<FakeResponsesServer, 'baseURL'>, extra: Partial<OpenAICuaOptions> = {}) =>
    new OpenAICuaAgent({
      outputDir: await env.out('vncua-openai-'),
      vncUrl: env.desktop.vncUrl,
      cdpUrl: env.desktop.cdpUrl,
      record: false,
      task: TASK,
      apiKey: 'sk-test',
      baseURL: server.baseURL,
      ...extra,
    });

  it('preview tool with screenshotSize: current_url is the page; the click lands on the text box at the mapped pixel and hi is typed', async () => {
    const click = computerCall({ action: { type: 'click', button: 'left', x: 800, y: 100 } });
    const type = computerCall({ action: { type: 'type', text: 'hi' } });
    const server = await serve([{ reply: [click] }, { reply: [type] }, { reply: [message('I typed hi.')] }]);
    const r = await (await agent(server, { screenshotSize: { width: 1024, height: 640 } })).run({ maxSteps: 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 3 });
    const out1 = (server.requests[1]!.body.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput & { output: { current_url?: string } };
    expect(out1).toMatchObject({ type: 'computer_call_output', call_id: click.call_id, output: { type: 'computer_screenshot', current_url: env.desktop.pageUrl } });
    // 800,100 in the 1024x640 image is 1000,125 on the 1280x800 screen (x·1279/1023, y·799/639, rounded).
    const s = await env.desktop.settle((s) => s.text === 'hi');
    expect(s.text).toBe('hi');
    expect(s.events.filter((e) => e.type === 'click')).toEqual([expect.objectContaining({ x: 1000, y: 125, target: 'text' })]);
  });

  it("batched computer tool: one call's actions reach the page in order", async () => {
    const server = await serve([{ reply: [computerCall({ actions: [...EVENTS_PAGE_ACTIONS] })] }, { reply: [message('Done.')] }]);
    const r = await (await agent(server, { model: 'gpt-5.4' })).run({ maxSteps: 5 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    // The events page cancels Ctrl shortcuts (Ctrl+A selects nothing), so BackSpace removes only the b.
    const s = await env.desktop.settle((s) => s.text === 'acd' && s.scroll.top === 240 && s.events.some((e) => e.type === 'drop'));
    expect(s.text).toBe('acd');
    expect(s.events.filter((e) => e.type === 'keydown' && e.ctrl).map((e) => e.key)).toEqual(['Control', 'a']);
    expect(s.scroll.top).toBe(2 * 120);
    expect(s.events.filter((e) => e.type === 'dblclick')).toEqual([expect.objectContaining({ x: 300, y: 150 })]);
    expect(s.events.filter((e) => e.type === 'contextmenu')).toEqual([expect.objectContaining({ x: 310, y: 160, button: 2 })]);
    expect(s.events.filter((e) => e.type === 'drop')).toEqual([expect.objectContaining({ target: 'dst', data: 'src' })]);
  });
});
