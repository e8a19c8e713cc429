/**
 * End to end: the basic suite's click-button task (goal, page and success sentinel from
 * eval/suites/basic/tasks.json) on a real desktop, solved by OpenAICuaAgent with a scripted model
 * behind the real `openai` SDK. The screenshots go out downscaled to 1024x640 and the model's click
 * comes back mapped onto the 1280x800 screen; the CDP success check sees the task's sentinel.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../../harness/agent/test-helpers/desktops.ts';
import type { Sentinel } from '../../harness/cdp/sentinel.ts';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { OpenAICuaAgent } from './agent.ts';
import { computerCall, imageSize, message, startFakeResponses } from './test-helpers/fake-responses.ts';
import { serveDir } from '../../harness/test-helpers/serve-dir.ts';

const SUITE = fileURLToPath(new URL('../../eval/suites/basic/', import.meta.url));
const TASK_ID = 'click-button';

/** The suite's task, as eval/suites/basic/tasks.json defines it. */
function suiteTask(): { goal: string; url: string; success: Sentinel; maxSteps?: number } {
  const tasks = JSON.parse(readFileSync(`${SUITE}tasks.json`, 'utf8')) as Array<{ id: string; goal: string; url: string; success: Sentinel; maxSteps?: number }>;
  const t = tasks.find((x) => x.id === TASK_ID);
  if (!t) throw new Error(`the basic suite has no task ${TASK_ID}`);
  return t;
}

describe('OpenAICuaAgent end to end on the basic suite', () => {
  let desktop: Desktop | undefined;
  let site: { url: string; close(): Promise<void> } | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  const task = suiteTask();

  beforeAll(async () => {
    site = await serveDir(SUITE);
    desktop = await launchDesktop({ url: new URL(task.url, site.url).href, size: '1280x800', timeoutMs: 45_000 });
    // As the eval runner does: start once the task page has loaded.
    const browser = await chromium.connectOverCDP(desktop.cdpUrl);
    try {
      const page = browser.contexts().flatMap((c) => c.pages())[0]!;
      await page.waitForFunction(() => document.readyState === 'complete' && 'Suite' in window, undefined, { timeout: 20_000 });
    } finally {
      await browser.close();
    }
  }, 90_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await desktop?.close();
    await site?.close();
  });

  it(`${TASK_ID}: the scripted model clicks Subscribe in a 1024x640 screenshot; the run finishes with the success check true`, async () => {
    // Subscribe is the button at 200..340 x 160..204 on the 1280x800 screen; its centre (270, 182) is (216, 146) in 1024x640.
    const click = computerCall({ action: { type: 'click', button: 'left', x: 216, y: 146 } });
    const server = await startFakeResponses([{ reply: [click] }, { reply: [message('I clicked Subscribe.')] }]);
    cleanups.push(server.close);
    const out = await tempOutputDir('vncua-openai-e2e-');
    cleanups.push(out.remove);

    const agent = new OpenAICuaAgent({
      outputDir: out.dir,
      vncUrl: desktop!.vncUrl,
      cdpUrl: desktop!.cdpUrl,
      record: false,
      task: task.goal,
      successCheck: task.success,
      apiKey: 'sk-test',
      baseURL: server.baseURL,
      screenshotSize: { width: 1024, height: 640 },
    });
    const r = await agent.run({ maxSteps: task.maxSteps ?? 10 });
    expect(r).toMatchObject({ status: 'finished', steps: 2 });
    expect(await readResult(out.dir)).toEqual(r);

    const { entries, partial } = await readTrace(out.dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => [e.action, e.task_marked_complete])).toEqual([
      ['mouse_click', true],
      ['finish', true],
    ]);
    expect(entries[0]!.params).toEqual({ position: { x: 270, y: 183 }, button: 'left', click_type: 'single' });

    const [q0, q1] = server.requests.map((q) => q.body);
    const first = (q0!.input as Array<{ content: Array<{ type: string; text?: string; image_url?: string }> }>)[0]!.content;
    expect(first[0]).toEqual({ type: 'input_text', text: task.goal });
    expect(imageSize(first[1]!.image_url!)).toMatchObject({ width: 1024, height: 640 });
    const output = (q1!.input as ResponseInputItem[])[0] as ResponseInputItem.ComputerCallOutput & { output: { current_url?: string } };
    expect(output.call_id).toBe(click.call_id);
    expect(output.output.current_url).toBe(new URL(task.url, site!.url).href);
  });
});
