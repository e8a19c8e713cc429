/**
 * ScriptedAgent: script validation (one issue per bad entry, naming index and field) and a run on
 * a real desktop (Xvnc, the events page) that plays the script, one entry per step.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEventsDesktop, tempOutputDir, type EventsDesktop } from '../harness/agent/test-helpers/desktops.ts';
import { isVncuaError } from '../harness/errors.ts';
import { parseExecution } from '../harness/trace/parse.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskScroll, uitaskType, uitaskWait } from '../harness/trace/test-fixtures/uitask.ts';
import { ScriptedAgent, loadScript, parseScript } from './scripted.ts';

const click = (x: number, y: number) => ({ action: 'mouse_click', params: { position: { x, y }, button: 'left', click_type: 'single' } });

function scriptError(f: () => unknown): { code: string; details: { issues: Array<{ index: number; field: string }> } } {
  try {
    f();
  } catch (e) {
    if (isVncuaError(e, 'SCRIPT_ERR_INVALID')) return e as never;
    throw e;
  }
  throw new Error('expected SCRIPT_ERR_INVALID');
}

describe('ScriptedAgent script validation', () => {
  it('reports one issue per bad entry with its index and field', () => {
    const script = [
      click(10, 10),
      { action: 'mouse_click', params: { button: 'top', click_type: 'single' } },
      'not an entry',
      { action: 'fly', params: {} },
      { action: 'type_text', params: { text: 'a', txet: 'b' } },
      { action: 'mouse_scroll', params: { position: { x: 1, y: -2 }, direction: 'down', repeat: 1 } },
      { action: 'press_keys' },
      { action: 'wait', params: { seconds: 1 } },
    ];
    const err = scriptError(() => new ScriptedAgent({ outputDir: '/tmp/unused', vncUrl: 'ws://127.0.0.1:1', script }));
    expect(err.details.issues.map((i) => [i.index, i.field])).toEqual([
      [1, 'params.button'],
      [2, ''],
      [3, 'action'],
      [4, 'params.txet'],
      [5, 'params.position.y'],
      [6, 'params.keys'],
    ]);
  });

  it('a script that is not an array is SCRIPT_ERR_INVALID; a trace (extra entry fields) is a valid script', async () => {
    expect(scriptError(() => parseScript({ action: 'wait' })).code).toBe('SCRIPT_ERR_INVALID');
    const trace = [{ index: 0, ...click(5, 6), task_marked_complete: false, started_at: 1, ended_at: 2, duration_ms: 1 }];
    expect(parseScript(trace)).toEqual([{ action: 'mouse_click', params: click(5, 6).params }]);
    await expect(loadScript('/nonexistent/script.json')).rejects.toMatchObject({ code: 'SCRIPT_ERR_INVALID' });
  });
});

describe('ScriptedAgent: a uitask execution.json as the script', () => {
  it("plays uitask's entries with the flat params its trace is read as", () => {
    const script = JSON.parse(
      uitaskExecutionJson([uitaskClick({ x: 5, y: 6 }, { clickType: 'double' }), uitaskType('a'), uitaskKeys(['ctrl', 'a']), uitaskWait(0.5), uitaskFinish()]),
    ) as unknown;
    expect(parseScript(script)).toEqual([
      { action: 'mouse_click', params: { position: { x: 5, y: 6 }, button: 'left', click_type: 'double' } },
      { action: 'type_text', params: { text: 'a' } },
      { action: 'press_keys', params: { keys: 'ctrl+a' } },
      { action: 'wait', params: { seconds: 0.5 } },
      { action: 'finish', params: {} },
    ]);
  });

  it("names every entry that is not uitask's shape in a uitask script", () => {
    const script = [uitaskType('a'), click(1, 1), uitaskScroll({ x: 1, y: 1 }, 'down'), { action: 'wait', params: { seconds: 1 } }, uitaskKeys(['enter'])];
    const err = scriptError(() => parseScript(script));
    expect(err.details.issues.map((i) => [i.index, i.field])).toEqual([
      [1, 'params.action'],
      [3, 'params.duration'],
    ]);
  });
});

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

  it('stops at finish: the entries after it are not played', async () => {
    await desktop.reset();
    const script = [click(900, 100), { action: 'finish', params: { why: 'enough' } }, { action: 'type_text', params: { text: 'never' } }];
    const { result, entries } = await play(script, join(out.dir, 'b'));
    expect(result).toMatchObject({ status: 'finished', steps: 2 });
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'finish']);
    expect(entries[1]!.params).toEqual({ why: 'enough' });
    const s = await desktop.settle(() => false, 200, 300);
    expect(s.text).toBe('');
  });
});
