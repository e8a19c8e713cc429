/**
 * ScriptedAgent on a real desktop (Xvnc, the events page): the script's text reaches the page.
 * (Script validation and playing order run on the fake desktop: scripted.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { useEventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { readTrace } from '../harness/trace/reader.ts';
import { ScriptedAgent } from './scripted.ts';

const click = (x: number, y: number) => ({ action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' } });

describe('ScriptedAgent on Xvnc', () => {
  const env = useEventsDesktop('xvnc');

  it('plays every entry, one per step, and finishes after the last', async () => {
    const { desktop } = env;
    const dir = await env.out('vncua-scripted-');
    const script = [click(900, 100), { action: 'type_text', params: { text: 'scripté' } }, { action: 'press_keys', params: { keys: 'BackSpace' } }];
    const result = await new ScriptedAgent({ outputDir: dir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, script }).run({ maxSteps: 20 });
    expect(result).toMatchObject({ status: 'finished', steps: 3 });
    expect((await readTrace(dir)).entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(script);
    expect((await desktop.settle((s) => s.text === 'script')).text).toBe('script');
  });
});
