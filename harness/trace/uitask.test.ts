/**
 * uitask's execution.json both ways: every shape its record_action writes (built with the named
 * helpers of test-fixtures/uitask.ts) normalized to vncua's flat params, press_keys parsed as
 * uitask parses it, and vncua traces exported in uitask's exact shape and JSON text, round trip included.
 */
import { describe, expect, it } from 'vitest';
import { isVncuaError, type VncuaError } from '../errors.ts';
import { parseKeys } from '../keys/index.ts';
import { parseUitaskExecution } from './parse.ts';
import type { TraceEntry } from './schema.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import {
  uitaskClick,
  uitaskDrag,
  uitaskExecutionJson,
  uitaskFinish,
  uitaskKeys,
  uitaskMove,
  uitaskNavigate,
  uitaskScroll,
  uitaskType,
  uitaskWait,
  type UitaskJsonEntry,
} from './test-fixtures/uitask.ts';
import { exportUitaskTrace, hasUitaskShape, pythonJson, toUitaskEntry, uitaskKeyNames, uitaskKeysToChord } from './uitask.ts';

/** A vncua entry as readTrace gives it (index, action, params, task_marked_complete; timing irrelevant here). */
function ours(index: number, action: TraceEntry['action'], params: Record<string, unknown>, extra: Record<string, unknown> = {}): TraceEntry {
  return { index, action, params, task_marked_complete: false, ...extra } as TraceEntry;
}

/** Each uitask entry and the vncua entry it reads as. */
const PAIRS: [UitaskJsonEntry, TraceEntry][] = [
  [uitaskMove({ x: 10, y: 20 }), ours(0, 'mouse_move', { position: { x: 10, y: 20 } })],
  [uitaskClick({ x: 640, y: 400 }), ours(1, 'mouse_click', { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' })],
  [uitaskClick({ x: 5.5, y: 6 }, { button: 'right', clickType: 'double' }), ours(2, 'mouse_click', { position: { x: 5.5, y: 6 }, button: 'right', click_type: 'double' })],
  [uitaskClick(null, { clickType: 'triple' }), ours(3, 'mouse_click', { button: 'left', click_type: 'triple' })],
  [uitaskDrag({ x: 1, y: 2 }, { x: 300, y: 400 }), ours(4, 'mouse_drag', { start: { x: 1, y: 2 }, end: { x: 300, y: 400 }, button: 'left' })],
  [uitaskScroll({ x: 7, y: 8 }, 'left'), ours(5, 'mouse_scroll', { position: { x: 7, y: 8 }, direction: 'left', repeat: 1 })],
  [uitaskScroll({ x: 7, y: 8 }, 'down', 4), ours(6, 'mouse_scroll', { position: { x: 7, y: 8 }, direction: 'down', repeat: 4 })],
  [uitaskKeys(['ctrl+a']), ours(7, 'press_keys', { keys: 'ctrl+a' })],
  [uitaskType('héllo "x"\n'), ours(8, 'type_text', { text: 'héllo "x"\n' })],
  [uitaskNavigate('back'), ours(9, 'page_navigation', { direction: 'back' })],
  [uitaskWait(1.5), ours(10, 'wait', { seconds: 1.5 })],
  [uitaskFinish({ answer: 42, note: 'done' }, { done: true }), { ...ours(11, 'finish', { answer: 42, note: 'done' }), task_marked_complete: true }],
  [uitaskFinish(null, { done: null }), { ...ours(12, 'finish', {}), task_marked_complete: null }],
];

function thrown(f: () => unknown): VncuaError {
  try {
    f();
  } catch (e) {
    if (isVncuaError(e)) return e;
    throw e;
  }
  throw new Error('expected a VncuaError');
}

describe('uitask execution.json: reading', () => {
  it("normalizes every shape record_action writes to vncua's flat params", () => {
    const data = JSON.parse(uitaskExecutionJson(PAIRS.map(([u]) => u))) as unknown;
    expect(parseUitaskExecution(data, 'execution.json')).toEqual(PAIRS.map(([, o]) => o));
  });

  it("parses press_keys' keys the way uitask's press_keys does, into one held chord", () => {
    const cases: [string[], string[], string][] = [
      [['ctrl+a'], ['ctrl', 'a'], 'ctrl+a'],
      [['ctrl', 'a'], ['ctrl', 'a'], 'ctrl+a'],
      [['Ctrl + Shift + P'], ['ctrl', 'shift', 'p'], 'ctrl+shift+p'],
      [['alt f'], ['alt', 'f'], 'alt+f'],
      [['Return'], ['return'], 'return'],
      [['A'], ['a'], 'a'],
      [['123'], ['1', '2', '3'], '1+2+3'],
      [['-12'], ['-', '1', '2'], '-+1+2'],
      [['-'], ['-'], '-'],
      [['+'], ['+'], 'plus'],
      [['ctrl', '+'], ['ctrl', '+'], 'ctrl+plus'],
      [[' '], [' '], 'space'],
      [['none', '', 'Tab'], ['tab'], 'tab'],
      [['NONE'], [], ''],
      [[], [], ''],
    ];
    for (const [keys, names, chord] of cases) {
      expect(uitaskKeyNames(keys), JSON.stringify(keys)).toEqual(names);
      expect(uitaskKeysToChord(keys), JSON.stringify(keys)).toBe(chord);
    }
    // The chord vncua presses holds the keys uitask holds.
    const held = (keys: string[]) => parseKeys(uitaskKeysToChord(keys)).chords.map((c) => c.names);
    expect(held(['ctrl', 'a'])).toEqual([['Control_L', 'a']]);
    expect(held(['Ctrl + Shift + P'])).toEqual([['Control_L', 'Shift_L', 'P']]);
    expect(held(['123'])).toEqual([['1', '2', '3']]);
    expect(held(['ctrl', '+'])).toEqual([['Control_L', 'Shift_L', '+']]);
  });

  it("tells uitask's shapes from vncua's flat ones", () => {
    for (const [u] of PAIRS) {
      const marked = ['mouse_click', 'mouse_drag', 'mouse_scroll', 'press_keys', 'wait', 'finish'].includes(u.action);
      expect(hasUitaskShape(u), u.action).toBe(marked);
    }
    for (const [, o] of PAIRS) expect(hasUitaskShape(o), o.action).toBe(false);
  });
});

describe('uitask execution.json: writing (vncua export-trace --format uitask)', () => {
  it("writes each vncua entry in uitask's exact shape", () => {
    for (const [u, o] of PAIRS) {
      const r = toUitaskEntry({ ...o, started_at: 1, ended_at: 2, duration_ms: 1, meta: { model: 'x' } } as TraceEntry);
      expect(r, o.action).toEqual({ entry: u });
      // Field order as uitask writes it (dict order of record_action, dataclass field order).
      expect(pythonJson((r as { entry: unknown }).entry)).toBe(pythonJson(u));
    }
  });

  it("writes the file as Python's json.dump does", () => {
    // Expected text printed by python3: json.dumps([{"action": "type_text", "params": {"text": "né\x7f😀\n\""}, "task_marked_complete": None}, {"a": [], "b": {}, "c": 2.5}])
    const py = '[{"action": "type_text", "params": {"text": "n\\u00e9\\u007f\\ud83d\\ude00\\n\\""}, "task_marked_complete": null}, {"a": [], "b": {}, "c": 2.5}]';
    expect(
      pythonJson([
        { action: 'type_text', params: { text: 'né\x7f😀\n"' }, task_marked_complete: null },
        { a: [], b: {}, c: 2.5 },
      ]),
    ).toBe(py);
    expect(JSON.parse(py)).toEqual([
      { action: 'type_text', params: { text: 'né\x7f😀\n"' }, task_marked_complete: null },
      { a: [], b: {}, c: 2.5 },
    ]);
  });

  it("round trip: a vncua trace exported and read back as uitask's has the same actions, params and task_marked_complete", () => {
    const entries = Array.from({ length: 60 }, (_, i) => ({ ...sampleEntry(i), index: i, duration_ms: 1 }) as TraceEntry);
    const ex = exportUitaskTrace(entries);
    // sampleEntry's failed attempts are waits with a negative duration: uitask records those too (time.sleep raises).
    expect(ex.leftOut).toEqual([]);
    expect(ex.failedWritten).toBe(entries.filter((e) => 'error' in e).length);
    const back = parseUitaskExecution(JSON.parse(ex.text), 'uitask_execution.json');
    const strip = (e: TraceEntry) => [e.action, e.params, e.task_marked_complete];
    expect(back.map(strip)).toEqual(entries.map(strip));
    expect(back.map((e) => e.index)).toEqual(entries.map((e) => e.index));
  });

  it("writes keys as the one-element list uitask's press_keys receives; read back they press the same keys", () => {
    for (const keys of ['Return', 'ctrl + a', 'alt f', 'ctrl+shift+p', 'F5', 'ctrl+plus']) {
      const r = toUitaskEntry(ours(0, 'press_keys', { keys }));
      expect(r).toEqual({ entry: { action: 'press_keys', params: { keys: [keys] }, task_marked_complete: false } });
      const back = parseUitaskExecution([(r as { entry: unknown }).entry])[0]!.params as { keys: string };
      expect(parseKeys(back.keys), keys).toEqual(parseKeys(keys));
    }
  });

  it('writes failed attempts without their error and leaves out those uitask could not have recorded', () => {
    const failed = { error: { code: 'ACTION_ERR_BAD_ARGUMENT', message: 'bad' } };
    const entries = [
      ours(0, 'mouse_click', { position: { x: 1, y: 1 }, button: 'left', click_type: 'single' }),
      ours(1, 'mouse_click', { position: { x: -5, y: 10 } }, failed),
      ours(2, 'press_keys', { keys: 'Retrun' }, failed),
      ours(3, 'type_text', { text: 'x', speed: 3 }, failed),
      ours(4, 'mouse_drag', { start: { x: 1, y: 1 }, end: { x: 2, y: 2 }, button: 'middle' }, failed),
    ];
    const ex = exportUitaskTrace(entries);
    expect(ex.entries).toEqual([uitaskClick({ x: 1, y: 1 }), uitaskKeys(['Retrun'])]);
    expect(ex.failedWritten).toBe(1);
    expect(ex.leftOut.map((l) => [l.index, l.field, l.failed])).toEqual([
      [1, 'params.button', true], // no button: MouseClickAction needs one
      [3, 'params.speed', true],
      [4, 'params.button', true],
    ]);
    expect(ex.text).toBe(uitaskExecutionJson(ex.entries));
  });

  it('refuses a successful entry uitask cannot express (a middle click) with TRACE_ERR_EXPORT, unless told to skip it', () => {
    const entries = [ours(0, 'type_text', { text: 'a' }), ours(1, 'mouse_click', { position: { x: 1, y: 1 }, button: 'middle', click_type: 'single' }), ours(2, 'finish', {})];
    const err = thrown(() => exportUitaskTrace(entries, { file: 'run/execution.json' }));
    expect(err.code).toBe('TRACE_ERR_EXPORT');
    expect(err.details).toMatchObject({ path: 'run/execution.json', index: 1, field: 'params.button' });
    const ex = exportUitaskTrace(entries, { skipUnsupported: true });
    expect(ex.entries).toEqual([uitaskType('a'), uitaskFinish()]);
    expect(ex.leftOut).toEqual([{ index: 1, action: 'mouse_click', failed: false, human: false, field: 'params.button', problem: "uitask's MouseButton has only left and right" }]);
  });

  it('leaves out a person\'s entries (actor "human") unless includeHuman, which writes them like any entry (uitask has no actor)', () => {
    const human = { actor: 'human' };
    const entries = [
      ours(0, 'mouse_click', { position: { x: 1, y: 1 }, button: 'left', click_type: 'single' }),
      ours(1, 'mouse_click', { position: { x: 9, y: 9 }, button: 'left', click_type: 'double' }, human),
      ours(2, 'type_text', { text: 'hi' }, human),
      ours(3, 'finish', {}),
    ];
    const ex = exportUitaskTrace(entries);
    expect(ex.entries).toEqual([uitaskClick({ x: 1, y: 1 }), uitaskFinish()]);
    expect(ex.leftOut.map((l) => [l.index, l.human, l.field])).toEqual([
      [1, true, 'actor'],
      [2, true, 'actor'],
    ]);
    const kept = exportUitaskTrace(entries, { includeHuman: true });
    expect(kept.entries).toEqual([uitaskClick({ x: 1, y: 1 }), uitaskClick({ x: 9, y: 9 }, { clickType: 'double' }), uitaskType('hi'), uitaskFinish()]);
    expect(kept.leftOut).toEqual([]);
    expect(kept.text).not.toContain('actor');
    // Read back as uitask's: the same actions, without the actor.
    expect(parseUitaskExecution(JSON.parse(kept.text)).map((e) => [e.action, e.params, 'actor' in e])).toEqual(entries.map((e) => [e.action, e.params, false]));
  });
});
