/**
 * ScriptedAgent: script validation (one issue per bad entry, naming index and field), a uitask
 * execution.json as the script, and a run on the fake RFB desktop that plays the script one entry
 * per step and stops at finish. (The script's effect on a real page: scripted.desktop.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { keyDowns, presses, useFakeRuns } from '../harness/agent/test-helpers/fake-run.ts';
import { isVncuaError } from '../harness/errors.ts';
import { readTrace } from '../harness/trace/reader.ts';
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

describe('ScriptedAgent on the fake desktop', () => {
  const t = useFakeRuns();
  /** Play `script` on a fresh fake desktop: the result, the trace's entries and the desktop. */
  async function play(script: unknown[]) {
    const desktop = await t.desktop();
    const dir = await t.out();
    const result = await new ScriptedAgent({ outputDir: dir, vncUrl: desktop.vncUrl, record: false, script }).run({ maxSteps: 20 });
    return { result, entries: (await readTrace(dir)).entries, desktop };
  }

  it('plays every entry, one per step, and finishes after the last', async () => {
    const script = [click(300, 100), { action: 'type_text', params: { text: 'ab' } }, { action: 'press_keys', params: { keys: 'BackSpace' } }];
    const { result, entries, desktop } = await play(script);
    expect(result).toMatchObject({ status: 'finished', steps: 3 });
    expect(entries.map((e) => ({ action: e.action, params: e.params }))).toEqual(script);
    expect(presses(desktop.events)).toEqual([[300, 100, 0]]);
    expect(keyDowns(desktop.events)).toEqual([0x61, 0x62, 0xff08]); // a, b, BackSpace
  });

  it('stops at finish: the entries after it are not played', async () => {
    const script = [click(300, 100), { action: 'finish', params: { why: 'enough' } }, { action: 'type_text', params: { text: 'never' } }];
    const { result, entries, desktop } = await play(script);
    expect(result).toMatchObject({ status: 'finished', steps: 2 });
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'finish']);
    expect(entries[1]!.params).toEqual({ why: 'enough' });
    // The run is over once run() resolves: no key of 'never' ever reached the desktop.
    expect(presses(desktop.events)).toEqual([[300, 100, 0]]);
    expect(keyDowns(desktop.events)).toEqual([]);
  });
});
