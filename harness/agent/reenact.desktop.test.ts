/**
 * reenact() on a real desktop (Xvnc, the events page): a trace we recorded replays into the same
 * DOM events (clicks, a double click, wheel, keys, text, scroll). The replay logic (uitask traces,
 * partial_execution.json, failed entries, unknown actions, input checks) runs on the fake desktop:
 * reenact.test.ts.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExecution } from '../trace/parse.ts';
import { reenact, REENACT_FILES } from './reenact.ts';
import { ScriptAgent, useEventsDesktop, type PageState } from './test-helpers/desktops.ts';

const BUTTON_TYPES = new Set(['mousedown', 'mouseup', 'click', 'dblclick']);

/** What a replay must reproduce: button events (type, position, button, click count), wheel events, keys, text, scroll. */
function summary(s: PageState) {
  return {
    buttons: s.events.filter((e) => BUTTON_TYPES.has(e.type)).map((e) => [e.type, e.target, e.x, e.y, e.button, e.detail]),
    wheels: s.events.filter((e) => e.type === 'wheel').map((e) => [e.x, e.y, Math.sign(e.deltaY ?? 0)]),
    keys: s.events.filter((e) => e.type === 'keydown').map((e) => e.key),
    text: s.text,
    scroll: s.scroll,
  };
}

async function readEntries(file: string) {
  return parseExecution(JSON.parse(await readFile(file, 'utf8')), file);
}

describe('reenact on Xvnc', () => {
  const env = useEventsDesktop('xvnc');

  const endpoints = () => ({ vncUrl: env.desktop.vncUrl, cdpUrl: env.desktop.cdpUrl });
  const isDone = (s: PageState) => s.scroll.top > 0 && s.events.some((e) => e.type === 'dblclick');

  it('replays one of our traces into the same DOM events, beside the trace, leaving the original files alone', async () => {
    const dir = await env.out('vncua-reenact-');
    const agent = new ScriptAgent({ outputDir: dir, ...endpoints() }, async (a) => {
      await a.mouseClick({ position: { x: 100, y: 100 } });
      await a.mouseClick({ position: { x: 900, y: 100 }, button: 'left', clickType: 'single' });
      await a.typeText('Hé ✓ ok');
      await a.pressKeys('BackSpace');
      await a.mouseScroll({ position: { x: 150, y: 420 }, direction: 'down', repeat: 2 });
      await a.mouseClick({ position: { x: 200, y: 150 }, clickType: 'double' });
    });
    expect((await agent.run({ maxSteps: 1 })).status).toBe('finished');
    const recorded = summary(await env.desktop.settle(isDone));
    expect(recorded.text).toBe('Hé ✓ o');

    const tracePath = join(dir, 'execution.json');
    const original = await readFile(tracePath, 'utf8');
    await env.desktop.reset();
    const result = await reenact(tracePath, { stepWaitSeconds: 0.05, ...endpoints() });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('finished');
    expect(result.steps).toBe(6);
    expect(result.reenactPath).toBe(join(dir, REENACT_FILES.execution));
    const replayed = summary(await env.desktop.settle(isDone));
    expect(replayed).toEqual(recorded);

    expect(await readFile(tracePath, 'utf8')).toBe(original);
    const before = await readEntries(tracePath);
    const after = await readEntries(result.reenactPath);
    expect(after.map((e) => [e.action, e.params])).toEqual(before.map((e) => [e.action, e.params]));
    expect(after.every((e) => e.started_at > before.at(-1)!.ended_at)).toBe(true);
    expect(JSON.parse(await readFile(join(dir, REENACT_FILES.result), 'utf8')).status).toBe('finished');
    // No work directory is left behind.
    expect((await readdir(dir)).filter((n) => n.startsWith('.reenact-'))).toEqual([]);
  });
});
