/**
 * End to end: a task of the basic suite (eval/suites/basic, text-edit-rename) on a real 1920x1080
 * desktop, solved by AnthropicCuaAgent with a scripted model behind the real SDK. Screenshots go
 * out as 1280x720; the model's triple click, typing (non-ASCII) and click come back mapped onto the
 * screen; the CDP success check sees the page's sentinel.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempOutputDir } from '../../harness/agent/test-helpers/desktops.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { AnthropicCuaAgent } from './agent.ts';
import { DisplayMap } from './display.ts';
import { requestImages, startFakeMessages, text, toolUse } from './test-helpers/fake-messages.ts';
import { startPageDesktop, type PageDesktop } from '../../harness/agent/test-helpers/desktops.ts';
import { serveDir } from '../../harness/test-helpers/serve-dir.ts';

const SUITE = fileURLToPath(new URL('../../eval/suites/basic/', import.meta.url));
const TASK_ID = 'text-edit-rename';
const task = (JSON.parse(readFileSync(`${SUITE}tasks.json`, 'utf8')) as Array<{ id: string; goal: string; url: string; success: { sentinel: string } }>).find(
  (t) => t.id === TASK_ID,
)!;

describe('AnthropicCuaAgent end to end on the basic suite (1920x1080)', () => {
  let site: { url: string; close(): Promise<void> } | undefined;
  let d: PageDesktop | undefined;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    site = await serveDir(SUITE);
    // As the eval runner does: start once the task page has loaded.
    d = await startPageDesktop(new URL(task.url, site.url).href, {
      size: '1920x1080',
      ready: (p) => p.waitForFunction(() => document.readyState === 'complete' && 'Suite' in window, undefined, { timeout: 20_000 }),
    });
  }, 90_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await d?.close();
    await site?.close();
  });

  it(`${TASK_ID}: the scripted model replaces the title and presses Rename; the run finishes with the success check true`, async () => {
    const map = new DisplayMap({ width: 1280, height: 720 }, { width: 1920, height: 1080 });
    // The scripted model "sees" where things are: the centres of the title field and the button, in display pixels.
    const centre = async (selector: string): Promise<[number, number]> => {
      const r = await d!.page.locator(selector).boundingBox();
      const p = map.toDisplay({ x: r!.x + r!.width / 2, y: r!.y + r!.height / 2 });
      return [p.x, p.y];
    };
    const title = await centre('#title');
    const rename = await centre('#rename');
    const server = await startFakeMessages([
      { reply: [text('I will replace the title.'), toolUse({ action: 'triple_click', coordinate: title }), toolUse({ action: 'type', text: 'Crème brûlée recipe' })] },
      { reply: [toolUse({ action: 'left_click', coordinate: rename })] },
      { reply: [text('The document is renamed.')] },
    ]);
    cleanups.push(server.close);
    const out = await tempOutputDir('vncua-anthropic-e2e-');
    cleanups.push(out.remove);

    const agent = new AnthropicCuaAgent({
      outputDir: out.dir,
      vncUrl: d!.desktop.vncUrl,
      cdpUrl: d!.desktop.cdpUrl,
      record: false,
      task: task.goal,
      successCheck: task.success,
      apiKey: server.apiKey,
      baseURL: server.baseURL,
    });
    const r = await agent.run({ maxSteps: 13 });
    expect(r).toMatchObject({ status: 'finished', steps: 3 });
    expect(await readResult(out.dir)).toEqual(r);
    expect(server.requests.every((q) => !q.rejected)).toBe(true);
    expect(server.requests[0]!.body.tools).toMatchObject([{ display_width_px: 1280, display_height_px: 720 }]);
    expect(requestImages(server.requests[0]!.body)).toHaveLength(1);

    const { entries, partial } = await readTrace(out.dir);
    expect(partial).toBe(false);
    expect(entries.map((e) => [e.action, e.task_marked_complete])).toEqual([
      ['mouse_click', false],
      ['type_text', false],
      ['mouse_click', true],
      ['finish', true],
    ]);
    expect(entries[0]!.params).toMatchObject({ position: map.toScreen({ x: title[0], y: title[1] }), click_type: 'triple' });
    expect(entries[3]!.params).toEqual({ message: 'The document is renamed.' });
    expect(await d!.page.inputValue('#title')).toBe('Crème brûlée recipe');
  });
});
