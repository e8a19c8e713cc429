import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VncuaError } from '../errors.ts';
import { readResult, readTrace } from './reader.ts';
import { sampleEntry } from './test-fixtures/entries.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskScroll, uitaskType, uitaskWait } from './test-fixtures/uitask.ts';
import { TraceWriter } from './writer.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-trace-read-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The VncuaError a promise rejects with (fails the test if it resolves or throws something else). */
async function failure(p: Promise<unknown>): Promise<VncuaError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(VncuaError);
  return e as VncuaError;
}

async function writeTrace(n: number, finalize: boolean): Promise<TraceWriter> {
  const w = new TraceWriter(join(dir, 'run'));
  await w.open();
  for (let i = 0; i < n; i++) await w.append(sampleEntry(i));
  if (finalize) await w.finalize();
  return w;
}

/** A uitask execution.json as uitask's record_action writes it (no index, no timing, params bound by name). */
const UITASK_ENTRIES = [
  uitaskClick({ x: 640, y: 400 }),
  { ...uitaskType('hello world'), screenshot: 'step_1.png' },
  uitaskKeys(['enter'], { done: null }),
  uitaskScroll({ x: 10, y: 20 }, 'down', 3),
  uitaskWait(2),
  uitaskFinish(null, { done: true }),
];
const UITASK_TRACE = uitaskExecutionJson(UITASK_ENTRIES);

describe('readTrace: vncua traces', () => {
  it("reads back a person's entries with their actor; an agent's have none", async () => {
    const w = new TraceWriter(join(dir, 'run'));
    await w.open();
    await w.append(sampleEntry(0));
    await w.append({
      action: 'mouse_drag',
      actor: 'human',
      params: { start: { x: 1, y: 2 }, end: { x: 30, y: 40 }, button: 'left' },
      task_marked_complete: null,
      started_at: 5,
      ended_at: 9,
    });
    await w.finalize();
    const t = await readTrace(join(dir, 'run'));
    expect(t.entries.map((e) => e.actor)).toEqual([undefined, 'human']);
    expect(t.entries[1]).toMatchObject({ index: 1, action: 'mouse_drag', duration_ms: 4 });
  });

  it('reads a finalized trace from the directory or the file', async () => {
    const w = await writeTrace(25, true);
    const expected = JSON.parse(await readFile(w.paths.execution, 'utf8')) as unknown[];
    for (const path of [w.outputDir, w.paths.execution]) {
      const t = await readTrace(path);
      expect(t).toMatchObject({ source: 'vncua', partial: false, path: w.paths.execution });
      expect(t.entries).toEqual(expected);
    }
  });

  it('reads a partial trace left by a run that did not finalize', async () => {
    const w = await writeTrace(7, false);
    const t = await readTrace(w.outputDir);
    expect(t).toMatchObject({ source: 'vncua', partial: true, path: w.paths.partial });
    expect(t.entries.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(t.entries[6]).toMatchObject({ action: 'wait', error: { code: 'ACTION_ERR_BAD_ARGUMENT' } });
    const empty = await writeTrace(0, false);
    expect((await readTrace(empty.paths.partial)).entries).toEqual([]);
  });

  it('names the file, first bad entry index and field of a corrupt trace', async () => {
    const w = await writeTrace(5, true);
    const entries = JSON.parse(await readFile(w.paths.execution, 'utf8')) as Record<string, any>[];
    const cases: [string, (e: Record<string, any>[]) => unknown, number | undefined, string][] = [
      ['bad param type', (e) => ((e[2]!.params.start.y = 'top'), e), 2, 'params.start.y'],
      ['unknown top-level key', (e) => ((e[1]!.extra = 1), (e[3]!.extra = 1), e), 1, 'extra'],
      ['index gap', (e) => (e.splice(1, 1), e), 1, 'index'],
      ['failed entry without code', (e) => ((e[4]!.error = { message: 'x' }), e), 4, 'error.code'],
      ['failed entry without params', (e) => (delete e[4]!.params, (e[4]!.error = { code: 'E', message: 'x' }), e), 4, 'params'],
      ['unknown action', (e) => ((e[0]!.action = 'teleport'), e), 0, 'action'],
      ['not an object', (e) => (((e[3] as unknown) = 'x'), e), 3, ''],
      ['not an array', () => ({ entries }), undefined, ''],
    ];
    for (const [name, corrupt, index, field] of cases) {
      await writeFile(w.paths.execution, JSON.stringify(corrupt(structuredClone(entries))));
      const err = await failure(readTrace(w.outputDir));
      expect(err.code, name).toBe('TRACE_ERR_INVALID');
      expect(err.details, name).toMatchObject({ path: w.paths.execution, index, field });
    }
  });

  it('rejects a truncated file with TRACE_ERR_INVALID naming it', async () => {
    const w = await writeTrace(3, true);
    const text = await readFile(w.paths.execution, 'utf8');
    await writeFile(w.paths.execution, text.slice(0, text.length - 20));
    const err = await failure(readTrace(w.paths.execution));
    expect(err.code).toBe('TRACE_ERR_INVALID');
    expect(err.details?.path).toBe(w.paths.execution);
  });

  it('gives TRACE_ERR_NOT_FOUND for a missing file or a directory without a trace', async () => {
    expect((await failure(readTrace(join(dir, 'nope.json')))).code).toBe('TRACE_ERR_NOT_FOUND');
    await mkdir(join(dir, 'empty'));
    expect((await failure(readTrace(join(dir, 'empty')))).code).toBe('TRACE_ERR_NOT_FOUND');
    expect((await failure(readResult(join(dir, 'empty')))).code).toBe('TRACE_ERR_NOT_FOUND');
  });
});

describe('readTrace: uitask traces', () => {
  it("normalizes uitask's execution.json to flat params", async () => {
    await writeFile(join(dir, 'execution.json'), UITASK_TRACE);
    const t = await readTrace(dir);
    expect(t).toMatchObject({ source: 'uitask', partial: false });
    expect(t.entries).toEqual([
      { index: 0, action: 'mouse_click', params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' }, task_marked_complete: false },
      { index: 1, action: 'type_text', params: { text: 'hello world' }, task_marked_complete: false, meta: { uitask: { screenshot: 'step_1.png' } } },
      { index: 2, action: 'press_keys', params: { keys: 'enter' }, task_marked_complete: null },
      { index: 3, action: 'mouse_scroll', params: { position: { x: 10, y: 20 }, direction: 'down', repeat: 3 }, task_marked_complete: false },
      { index: 4, action: 'wait', params: { seconds: 2 }, task_marked_complete: false },
      { index: 5, action: 'finish', params: {}, task_marked_complete: true },
    ]);
    for (const e of t.entries) {
      expect(e.started_at).toBeUndefined();
      expect(e.ended_at).toBeUndefined();
      expect(e.duration_ms).toBeUndefined();
    }
  });

  it('reads a partial uitask trace', async () => {
    await writeFile(join(dir, 'partial_execution.json'), uitaskExecutionJson(UITASK_ENTRIES.slice(0, 2)));
    const t = await readTrace(dir);
    expect(t).toMatchObject({ source: 'uitask', partial: true, path: join(dir, 'partial_execution.json') });
    expect(t.entries.map((e) => [e.index, e.action])).toEqual([
      [0, 'mouse_click'],
      [1, 'type_text'],
    ]);
  });

  it("names the bad entry and field of a trace that is neither vncua's nor uitask's", async () => {
    const cases: [string, (e: Record<string, any>[]) => void, number, string][] = [
      ['unknown action', (e) => (e[2]!.action = 'teleport'), 2, 'action'],
      ['bad coordinate', (e) => (e[0]!.params.action.position.x = 'left'), 0, 'params.action.position.x'],
      ['bad direction', (e) => (e[3]!.params.action.direction = 'sideways'), 3, 'params.action.direction'],
      ['bad task_marked_complete', (e) => (e[1]!.task_marked_complete = 'yes'), 1, 'task_marked_complete'],
      ["vncua's flat click", (e) => (e[0]!.params = { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' }), 0, 'params.action'],
      ["vncua's keys string", (e) => (e[2]!.params = { keys: 'enter' }), 2, 'params.keys'],
      ["vncua's wait seconds", (e) => (e[4]!.params = { seconds: 2 }), 4, 'params.duration'],
      ["vncua's finish params", (e) => (e[5]!.params = {}), 5, 'params.params'],
      ['a middle click', (e) => (e[0]!.params.action.button = 'middle'), 0, 'params.action.button'],
      ['an argument uitask does not take', (e) => (e[3]!.params.action.smooth = true), 3, 'params.action.smooth'],
      ['no params', (e) => delete e[1]!.params, 1, 'params'],
      ['not an object', (e) => ((e[4] as unknown) = 'wait'), 4, ''],
    ];
    for (const [name, corrupt, index, field] of cases) {
      const data = structuredClone(UITASK_ENTRIES) as Record<string, any>[];
      corrupt(data);
      await writeFile(join(dir, 'execution.json'), JSON.stringify(data));
      const err = await failure(readTrace(dir));
      expect(err.code, name).toBe('TRACE_ERR_INVALID');
      expect(err.details, name).toMatchObject({ path: join(dir, 'execution.json'), index, field });
    }
  });
});

describe('readResult', () => {
  it('round-trips result.json and rejects a bad one naming the field', async () => {
    const w = new TraceWriter(dir);
    await w.writeResult({ status: 'cancelled', steps: 4, durationMs: 812.25 });
    expect(await readResult(dir)).toEqual({ status: 'cancelled', steps: 4, durationMs: 812.25 });
    await writeFile(w.paths.result, JSON.stringify({ status: 'cancelled', steps: '4', durationMs: 1 }));
    const err = await failure(readResult(w.paths.result));
    expect(err.code).toBe('TRACE_ERR_INVALID');
    expect(err.details).toMatchObject({ path: w.paths.result, field: 'steps' });
  });
});
