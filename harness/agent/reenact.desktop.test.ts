/**
 * reenact() on a real desktop (Xvnc, the events page): a trace we recorded replays into the same
 * DOM events; a uitask trace as uitask writes it (no index, no timing) and a partial_execution.json replay
 * too; failed entries are replayed and their new outcome recorded; an unknown action ends the
 * replay with ACTION_ERR_UNKNOWN_ACTION and a valid reenact trace of what was replayed.
 */
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { parseExecution } from '../trace/parse.ts';
import { ACTION_NAMES } from '../trace/schema.ts';
import { uitaskClick, uitaskExecutionJson, uitaskFinish, uitaskKeys, uitaskScroll, uitaskType, uitaskWait } from '../trace/test-fixtures/uitask.ts';
import { applyAction } from './apply-action.ts';
import { reenact, REENACT_FILES } from './reenact.ts';
import { ScriptAgent, startEventsDesktop, tempOutputDir, type EventsDesktop, type PageState } from './test-helpers/desktops.ts';

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
  let desktop: EventsDesktop;
  let out: { dir: string; remove(): Promise<void> };

  beforeAll(async () => {
    desktop = await startEventsDesktop('xvnc');
  }, 90_000);

  afterAll(async () => {
    await out?.remove();
    await desktop?.close();
  });

  beforeEach(async () => {
    await desktop.reset();
    await out?.remove();
    out = await tempOutputDir('vncua-reenact-');
  });

  const endpoints = () => ({ vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl });
  const isDone = (s: PageState) => s.scroll.top > 0 && s.events.some((e) => e.type === 'dblclick');

  it('replays one of our traces into the same DOM events, beside the trace, leaving the original files alone', async () => {
    const agent = new ScriptAgent({ outputDir: out.dir, ...endpoints() }, async (a) => {
      await a.mouseClick({ position: { x: 100, y: 100 } });
      await a.mouseClick({ position: { x: 900, y: 100 }, button: 'left', clickType: 'single' });
      await a.typeText('Hé ✓ ok');
      await a.pressKeys('BackSpace');
      await a.mouseScroll({ position: { x: 150, y: 420 }, direction: 'down', repeat: 2 });
      await a.mouseClick({ position: { x: 200, y: 150 }, clickType: 'double' });
    });
    expect((await agent.run({ maxSteps: 1 })).status).toBe('finished');
    const recorded = summary(await desktop.settle(isDone));
    expect(recorded.text).toBe('Hé ✓ o');

    const tracePath = join(out.dir, 'execution.json');
    const original = await readFile(tracePath, 'utf8');
    await desktop.reset();
    const result = await reenact(tracePath, { stepWaitSeconds: 0.05, ...endpoints() });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe('finished');
    expect(result.steps).toBe(6);
    expect(result.reenactPath).toBe(join(out.dir, REENACT_FILES.execution));
    const replayed = summary(await desktop.settle(isDone));
    expect(replayed).toEqual(recorded);

    expect(await readFile(tracePath, 'utf8')).toBe(original);
    const before = await readEntries(tracePath);
    const after = await readEntries(result.reenactPath);
    expect(after.map((e) => [e.action, e.params])).toEqual(before.map((e) => [e.action, e.params]));
    expect(after.every((e) => e.started_at > before.at(-1)!.ended_at)).toBe(true);
    expect(JSON.parse(await readFile(join(out.dir, REENACT_FILES.result), 'utf8')).status).toBe('finished');
    // No work directory is left behind.
    expect((await readdir(out.dir)).filter((n) => n.startsWith('.reenact-'))).toEqual([]);
  });

  it('replays a uitask trace as uitask writes it (nested params, keys list, duration; no index, no timing) and records its own timings', async () => {
    const trace = join(out.dir, 'uitask.json');
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
    const outputDir = join(out.dir, 'replay');
    const result = await reenact(trace, { stepWaitSeconds: 0, outputDir, ...endpoints() });
    expect(result.status).toBe('finished');
    const state = summary(await desktop.settle((s) => s.text === 'uitask' && s.scroll.top > 0));
    expect(state.text).toBe('uitask');
    expect(state.buttons.filter((b) => b[0] === 'dblclick').map((b) => [b[2], b[3]])).toEqual([[900, 100]]);
    expect(state.keys.slice(-2)).toEqual(['Control', 'a']);
    expect(state.wheels.length).toBeGreaterThan(0);
    expect(state.scroll.top).toBeGreaterThan(0);
    expect(state.wheels.every((w) => w[2] === 1)).toBe(true);
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
    const t = 1_700_000_000_000;
    const entry = (index: number, action: string, params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      index,
      action,
      params,
      task_marked_complete: false,
      started_at: t + index * 10,
      ended_at: t + index * 10 + 5,
      duration_ms: 5,
      ...extra,
    });
    const partial = [
      entry(0, 'mouse_click', { position: { x: 900, y: 100 }, button: 'left', click_type: 'single' }),
      entry(1, 'mouse_click', { position: { x: 99999, y: 5 }, button: 'left', click_type: 'single' }, { error: { code: 'ACTION_ERR_OFF_SCREEN', message: 'off screen' } }),
      entry(2, 'type_text', { text: 'partial' }),
    ];
    const file = join(out.dir, 'partial_execution.json');
    await writeFile(file, JSON.stringify(partial));
    const result = await reenact(out.dir, { stepWaitSeconds: 0, ...endpoints() });
    expect(result.tracePath).toBe(file);
    expect(result.status).toBe('finished');
    expect(result.steps).toBe(3);
    expect((await desktop.settle((s) => s.text === 'partial')).text).toBe('partial');
    const entries = await readEntries(join(out.dir, REENACT_FILES.execution));
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'mouse_click', 'type_text']);
    expect('error' in entries[0]!).toBe(false);
    expect(entries[1]).toMatchObject({ params: { position: { x: 99999, y: 5 } }, error: { code: 'ACTION_ERR_OFF_SCREEN' } });
    expect('error' in entries[2]!).toBe(false);
    // The partial trace itself is untouched.
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(partial);
  });

  it('an unknown action ends the replay with ACTION_ERR_UNKNOWN_ACTION; the entries before it are replayed and the reenact trace is valid', async () => {
    const trace = join(out.dir, 'execution.json');
    await writeFile(
      trace,
      JSON.stringify([uitaskClick({ x: 900, y: 100 }), uitaskType('ab'), { action: 'teleport', params: { to: 'mars' }, task_marked_complete: false }, uitaskType('never')]),
    );
    const result = await reenact(trace, { stepWaitSeconds: 0, ...endpoints() });
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('ACTION_ERR_UNKNOWN_ACTION');
    expect(result.steps).toBe(2);
    const entries = await readEntries(join(out.dir, REENACT_FILES.execution));
    expect(entries.map((e) => e.action)).toEqual(['mouse_click', 'type_text']);
    expect(await readFile(join(out.dir, REENACT_FILES.error), 'utf8')).toContain('ACTION_ERR_UNKNOWN_ACTION');
    const s = await desktop.settle((s) => s.text === 'ab');
    expect(s.text).toBe('ab');
  });

  it('applyAction: an unknown action is ACTION_ERR_UNKNOWN_ACTION naming the index and listing the known actions', async () => {
    let caught: unknown;
    const agent = new ScriptAgent({ outputDir: out.dir, ...endpoints() }, async (a) => {
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
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vncua-reenact-in-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an invalid entry before any unknown action is TRACE_ERR_INVALID, thrown before anything runs', async () => {
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
    const err = await reenact(dir, { stepWaitSeconds: 0, vncUrl: 'ws://127.0.0.1:1' }).catch((e: unknown) => e);
    expect(isVncuaError(err, 'TRACE_ERR_NOT_FOUND')).toBe(true);
  });
});
