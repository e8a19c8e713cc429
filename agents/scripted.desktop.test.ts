/**
 * ScriptedAgent on a real desktop (Xvnc, the events page): the script's text reaches the page.
 * (Script validation and playing order run on the fake desktop: scripted.test.ts.)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEventsDesktop, tempOutputDir, type EventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { parseExecution } from '../harness/trace/parse.ts';
import { ScriptedAgent } from './scripted.ts';

const click = (x: number, y: number) => ({ action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' } });

describe('ScriptedAgent on Xvnc', () => {
  let desktop: EventsDesktop;
  let out: { dir: string; remove(): Promise<void> };

  beforeAll(async () => {
    desktop = await startEventsDesktop('xvnc');
    out = await tempOutputDir('vncua-scripted-');
  }, 90_000);

  afterAll(async () => {
    await desktop?.close();
    await out?.remove();
  });

  async function play(script: unknown[], dir: string) {
    const agent = new ScriptedAgent({ outputDir: dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, script });
    const result = await agent.run({ maxSteps: 20 });
    const entries = parseExecution(JSON.parse(await readFile(join(dir, 'execution.json'), 'utf8')));
    return { result, entries };
  }

  it('plays every entry, one per step, and finishes after the last', async () => {
    await desktop.reset();
    const script = [click(900, 100), { action: 'type_text', params: { text: 'scripté' } }, { action: 'press_keys', params: { keys: 'BackSpace' } }];
    const { result, entries } = await play(script, join(out.dir, 'a'));
    expect(result).toMatchObject({ status: 'finished', steps: 3 });
    expect(entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(script);
    expect((await desktop.settle((s) => s.text === 'script')).text).toBe('script');
  });
});
