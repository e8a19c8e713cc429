/**
 * reenact() on the fake RFB desktop (no X server, no browser): a uitask trace as uitask writes it (no
 * index, no timing) and a partial_execution.json replay; failed entries are replayed and their new
 * outcome recorded; an unknown action ends the replay with ACTION_ERR_UNKNOWN_ACTION and a valid
 * reenact trace of what was replayed; bad input is refused before anything runs. (That a replay
 * reproduces the same DOM events on a real page: reenact.desktop.test.ts.)
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { parseExecution } from '../trace/parse.ts';
import { ACTION_NAMES } from '../trace/schema.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskScroll, uitaskType, uitaskWait } from '../trace/test-fixtures/uitask.ts';
import { applyAction } from './apply-action.ts';
import { reenact, REENACT_FILES } from './reenact.ts';
import { keyDowns, presses, useFakeRuns } from './test-helpers/fake-run.ts';
import { ScriptAgent } from './test-helpers/hook-agent.ts';

const t = useFakeRuns();
const keysyms = (text: string) => [...text].map((c) => c.codePointAt(0)!);
const CONTROL_L = 0xffe3;

async function readEntries(file: string) {
  return parseExecution(JSON.parse(await readFile(file, 'utf8')), file);
}

describe('reenact on the fake desktop', () => {
  it('replays a uitask trace as uitask writes it (nested params, keys list, duration; no index, no timing) and records its own timings', async () => {
    const desktop = await t.desktop({ width: 1280, height: 800 });
    const dir = await t.out('vncua-reenact-');
    const trace = join(dir, 'uitask.json');
    await writeFile(
      trace,
      uitaskExecutionJson([
        uitaskClick({ x: 900, y: 100 }, { clickType: 'double' }),
        uitaskType('uitask'),
        uitaskKeys(['ctrl', 'a']),
        uitaskScroll({ x: 150, y: 420 }, 'down', 2),
        uitaskWait(0.05),
        uitaskFinish({ reason: 'typed' }),
      ]),
    );
    const outputDir = join(dir, 'replay');
    const result = await reenact(trace, { stepWaitSeconds: 0, outputDir, vncUrl: desktop.vncUrl });
    expect(result.status).toBe('finished');
    // A double click (two left presses), the text, Ctrl+A, two wheel-down notches.
    expect(presses(desktop.events)).toEqual([
      [900, 100, 0],
      [900, 100, 0],
      [150, 420, 4],
      [150, 420, 4],
    ]);
    expect(keyDowns(desktop.events)).toEqual([...keysyms('uitask'), CONTROL_L, 0x61]);
    const entries = await readEntries(join(outputDir, REENACT_FILES.execution));
    expect(entries.map((e) => [e.index, e.action, e.params, 'error' in e])).toEqual([
      [0, 'mouse_click', { position: { x: 900, y: 100 }, button: 'left', click_type: 'double' }, false],
      [1, 'type_text', { text: 'uitask' }, false],
      [2, 'press_keys', { keys: 'ctrl+a' }, false],
      [3, 'mouse_scroll', { position: { x: 150, y: 420 }, direction: 'down', repeat: 2 }, false],
      [4, 'wait', { seconds: 0.05 }, false],
      [5, 'finish', { reason: 'typed' }, false],
    ]);
    expect(entries.every((e) => e.ended_at >= e.started_at)).toBe(true);
  });

  it('replays a partial_execution.json (a run directory without execution.json); a failed entry is replayed and fails again, the replay goes on', async () => {
    const desktop = await t.desktop({ width: 1280, height: 800 });
    const dir = await t.out('vncua-reenact-');
    const t0 = 1_700_000_000_000;
    const entry = (index: number, action: string, params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      index,
      action,
      params,
      task_marked_complete: false,
      started_at: t0 + index * 10,
      ended_at: t0 + index * 10 + 5,
      duration_ms: 5,
      ...extra,
    });
    const partial = [
      entry(0, 'mouse_click', { position: { x: 900, y: 100 }, button: 'left', click_type: 'single' }),
      entry(1, 'mouse_click', { position: { x: 99999, y: 5 }, button: 'left', click_type: 'single' }, { error: { code: 'ACTION_ERR_OFF_SCREEN', message: 'off screen' } }),
      entry(2, 'type_text', { text: 'partial' }),
    ];
    const file = join(dir, 'partial_execution.json');
    await writeFile(file, JSON.stringify(partial));
    const result = await reenact(dir, { stepWaitSeconds: 0, vncUrl: desktop.vncUrl });
    expect(result.tracePath).toBe(file);
    expect(result.status).toBe('finished');
    expect(result.steps).toBe(3);
    expect(presses(desktop.events)).toEqual([[900, 100, 0]]);
    expect(keyDowns(desktop.events)).toEqual(keysyms('partial'));
    const entries = await readEntries(join(dir, REENACT_FILES.execution));
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'mouse_click', 'type_text']);
    expect('error' in entries[0]!).toBe(false);
    expect(entries[1]).toMatchObject({ params: { position: { x: 99999, y: 5 } }, error: { code: 'ACTION_ERR_OFF_SCREEN' } });
    expect('error' in entries[2]!).toBe(false);
    // The partial trace itself is untouched.
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(partial);
  });

  it('an unknown action ends the replay with ACTION_ERR_UNKNOWN_ACTION; the entries before it are replayed and the reenact trace is valid', async () => {
    const desktop = await t.desktop({ width: 1280, height: 800 });
    const dir = await t.out('vncua-reenact-');
    const trace = join(dir, 'execution.json');
    await writeFile(
      trace,
      JSON.stringify([uitaskClick({ x: 900, y: 100 }), uitaskType('ab'), { action: 'teleport', params: { to: 'mars' }, task_marked_complete: false }, uitaskType('never')]),
    );
    const result = await reenact(trace, { stepWaitSeconds: 0, vncUrl: desktop.vncUrl });
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('ACTION_ERR_UNKNOWN_ACTION');
    expect(result.steps).toBe(2);
    const entries = await readEntries(join(dir, REENACT_FILES.execution));
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text']);
    expect(await readFile(join(dir, REENACT_FILES.error), 'utf8')).toContain('ACTION_ERR_UNKNOWN_ACTION');
    expect(presses(desktop.events)).toEqual([[900, 100, 0]]);
    expect(keyDowns(desktop.events)).toEqual(keysyms('ab'));
  });

  it('applyAction: an unknown action is ACTION_ERR_UNKNOWN_ACTION naming the index and listing the known actions', async () => {
    const desktop = await t.desktop();
    let caught: unknown;
    const agent = new ScriptAgent({ outputDir: await t.out(), vncUrl: desktop.vncUrl, record: false }, async (a) => {
      try {
        await applyAction(a, { action: 'teleport', params: {} }, 7);
      } catch (e) {
        caught = e;
      }
    });
    expect((await agent.run({ maxSteps: 1 })).status).toBe('finished');
    expect(isVncuaError(caught, 'ACTION_ERR_UNKNOWN_ACTION')).toBe(true);
    expect((caught as { details: unknown }).details).toEqual({ index: 7, action: 'teleport', known: [...ACTION_NAMES] });
  });
});

describe('reenact input checks (no desktop)', () => {
  it('an invalid entry before any unknown action is TRACE_ERR_INVALID, thrown before anything runs', async () => {
    const dir = await t.out('vncua-reenact-in-');
    const trace = join(dir, 'bad.json');
    const badButton = { action: 'mouse_click', params: { action: { button: 'top', click_type: 'single', position: null } }, task_marked_complete: false };
    // vncua's flat params without vncua's index and timing: neither format.
    const flat = { action: 'mouse_click', params: { button: 'left', click_type: 'single' }, task_marked_complete: false };
    for (const [entries, field] of [
      [[badButton], 'params.action.button'],
      [[uitaskType('a'), flat], 'params.action'],
    ] as const) {
      await writeFile(trace, JSON.stringify(entries));
      const err = await reenact(trace, { stepWaitSeconds: 0, vncUrl: 'ws://127.0.0.1:1' }).catch((e: unknown) => e);
      expect(isVncuaError(err, 'TRACE_ERR_INVALID'), field).toBe(true);
      expect((err as { details: { index: number; field: string } }).details).toMatchObject({ index: entries.length - 1, field });
      await expect(stat(join(dir, REENACT_FILES.execution))).rejects.toThrow();
    }
  });

  it('a directory without a trace is TRACE_ERR_NOT_FOUND', async () => {
    const dir = await t.out('vncua-reenact-in-');
    const err = await reenact(dir, { stepWaitSeconds: 0, vncUrl: 'ws://127.0.0.1:1' }).catch((e: unknown) => e);
    expect(isVncuaError(err, 'TRACE_ERR_NOT_FOUND')).toBe(true);
  });
});
