/**
 * Every computer tool action → vncua steps, on a 1920x1080 screen seen as a 1280x720 display:
 * coordinates mapped exactly, held keys, scroll amounts, hold_key, down/up pairing, and the error
 * results for what cannot be done.
 */
import { describe, expect, it } from 'vitest';
import { ComputerActionMapper, MAX_DURATION_SECONDS, type Mapped, type ToolVersion } from './actions.ts';
import { DisplayMap } from './display.ts';

const MAP = new DisplayMap({ width: 1280, height: 720 }, { width: 1920, height: 1080 });
const mapper = (toolVersion: ToolVersion = 'computer_20251124', zoom = true) => new ComputerActionMapper({ map: MAP, toolVersion, zoom });
const stepsOf = (m: Mapped) => {
  if (m.kind !== 'steps') throw new Error(`expected steps, got ${JSON.stringify(m)}`);
  return m.steps;
};
const errorOf = (m: Mapped) => {
  if (m.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(m)}`);
  return m.message;
};

describe('ComputerActionMapper', () => {
  it('clicks: button and click count per action, at the mapped coordinate (edge pixels exact) or at the pointer', () => {
    const m = mapper();
    const table: Array<[string, string, string]> = [
      ['left_click', 'left', 'single'],
      ['right_click', 'right', 'single'],
      ['middle_click', 'middle', 'single'],
      ['double_click', 'left', 'double'],
      ['triple_click', 'left', 'triple'],
    ];
    for (const [action, button, clickType] of table) {
      expect(stepsOf(m.map({ action, coordinate: [1279, 719] }))).toEqual([{ action: 'mouse_click', params: { position: { x: 1919, y: 1079 }, button, click_type: clickType } }]);
      expect(stepsOf(m.map({ action, coordinate: [0, 0] }))).toEqual([{ action: 'mouse_click', params: { position: { x: 0, y: 0 }, button, click_type: clickType } }]);
    }
    expect(stepsOf(m.map({ action: 'left_click', coordinate: [640, 360] }))[0]!.params).toMatchObject({ position: { x: 960, y: 540 } });
    // No coordinate: where the pointer is (the last position used).
    expect(stepsOf(m.map({ action: 'right_click' }))).toEqual([{ action: 'mouse_click', params: { position: { x: 960, y: 540 }, button: 'right', click_type: 'single' } }]);
    // The pointer starts in the middle of the screen, as the Agent believes.
    expect(stepsOf(mapper().map({ action: 'left_click' }))[0]!.params).toMatchObject({ position: { x: 960, y: 540 } });
  });

  it('held keys on a click are an error result and nothing is done; shift on a scroll scrolls sideways', () => {
    const m = mapper('computer_20250124');
    expect(errorOf(m.map({ action: 'left_click', coordinate: [10, 10], text: 'ctrl' }))).toMatch(/held keys/);
    expect(m.pointer).toEqual({ x: 960, y: 540 });
    expect(errorOf(m.map({ action: 'left_click_drag', start_coordinate: [1, 1], coordinate: [2, 2], text: 'shift' }))).toMatch(/held keys/);
    expect(stepsOf(m.map({ action: 'scroll', coordinate: [100, 100], scroll_direction: 'down', scroll_amount: 2, text: 'shift' }))).toEqual([
      { action: 'mouse_scroll', params: { position: { x: 150, y: 150 }, direction: 'right', repeat: 2 } },
    ]);
    expect(stepsOf(m.map({ action: 'scroll', scroll_direction: 'up', scroll_amount: 1, text: 'Shift_L' }))[0]!.params).toMatchObject({ direction: 'left' });
    expect(stepsOf(m.map({ action: 'scroll', scroll_direction: 'left', scroll_amount: 1, text: 'shift' }))[0]!.params).toMatchObject({ direction: 'left' });
    expect(errorOf(m.map({ action: 'scroll', scroll_direction: 'down', scroll_amount: 1, text: 'ctrl' }))).toMatch(/held keys/);
  });

  it('scroll: scroll_amount wheel notches at the coordinate or the pointer, split into steps of at most 100; 0 does nothing', () => {
    const m = mapper();
    expect(stepsOf(m.map({ action: 'scroll', coordinate: [1279, 0], scroll_direction: 'down', scroll_amount: 3 }))).toEqual([
      { action: 'mouse_scroll', params: { position: { x: 1919, y: 0 }, direction: 'down', repeat: 3 } },
    ]);
    expect(stepsOf(m.map({ action: 'scroll', scroll_direction: 'up', scroll_amount: 250 })).map((s) => s.params)).toEqual([
      { position: { x: 1919, y: 0 }, direction: 'up', repeat: 100 },
      { position: { x: 1919, y: 0 }, direction: 'up', repeat: 100 },
      { position: { x: 1919, y: 0 }, direction: 'up', repeat: 50 },
    ]);
    expect(m.map({ action: 'scroll', scroll_direction: 'up', scroll_amount: 0 })).toEqual({ kind: 'text', text: 'scroll_amount 0: nothing was scrolled.' });
    expect(errorOf(m.map({ action: 'scroll', scroll_direction: 'sideways', scroll_amount: 1 }))).toMatch(/scroll_direction/);
    expect(errorOf(m.map({ action: 'scroll', scroll_direction: 'down', scroll_amount: 1.5 }))).toMatch(/scroll_amount/);
    expect(errorOf(m.map({ action: 'scroll', scroll_direction: 'down' }))).toMatch(/scroll_amount/);
  });

  it('left_click_drag, mouse_move, key, type, wait', () => {
    const m = mapper();
    expect(stepsOf(m.map({ action: 'left_click_drag', start_coordinate: [0, 0], coordinate: [1279, 719] }))).toEqual([
      { action: 'mouse_drag', params: { start: { x: 0, y: 0 }, end: { x: 1919, y: 1079 }, button: 'left' } },
    ]);
    // Without start_coordinate the drag starts at the pointer (where the last drag ended).
    expect(stepsOf(m.map({ action: 'left_click_drag', coordinate: [0, 0] }))[0]!.params).toEqual({ start: { x: 1919, y: 1079 }, end: { x: 0, y: 0 }, button: 'left' });
    expect(errorOf(m.map({ action: 'left_click_drag', start_coordinate: [0, 0] }))).toMatch(/needs coordinate/);
    expect(stepsOf(m.map({ action: 'mouse_move', coordinate: [3, 7] }))).toEqual([{ action: 'mouse_move', params: { position: { x: 5, y: 11 } } }]);
    expect(errorOf(m.map({ action: 'mouse_move' }))).toMatch(/needs coordinate/);
    expect(stepsOf(m.map({ action: 'key', text: 'ctrl+a BackSpace' }))).toEqual([
      { action: 'press_keys', params: { keys: 'ctrl+a' } },
      { action: 'press_keys', params: { keys: 'BackSpace' } },
    ]);
    expect(stepsOf(m.map({ action: 'key', text: 'meta' }))).toEqual([{ action: 'press_keys', params: { keys: 'Meta_L' } }]);
    expect(errorOf(m.map({ action: 'key', text: 'Retrun' }))).toMatch(/Unknown key "Retrun"/);
    expect(errorOf(m.map({ action: 'key' }))).toMatch(/needs text/);
    expect(stepsOf(m.map({ action: 'type', text: 'Zoë\nnext line' }))).toEqual([{ action: 'type_text', params: { text: 'Zoë\nnext line' } }]);
    expect(stepsOf(m.map({ action: 'wait', duration: 2.5 }))).toEqual([{ action: 'wait', params: { seconds: 2.5 } }]);
    expect(stepsOf(m.map({ action: 'wait' }))).toEqual([{ action: 'wait', params: { seconds: 1 } }]);
    expect(errorOf(m.map({ action: 'wait', duration: MAX_DURATION_SECONDS + 1 }))).toMatch(/duration/);
  });

  it('hold_key: the keys are pressed and released, then it waits the duration (no key-hold primitive), and says so', () => {
    const m = mapper();
    const r = m.map({ action: 'hold_key', text: 'shift', duration: 0.5 });
    expect(stepsOf(r)).toEqual([
      { action: 'press_keys', params: { keys: 'shift' } },
      { action: 'wait', params: { seconds: 0.5 } },
    ]);
    expect(r.kind === 'steps' && r.note).toMatch(/cannot hold keys/);
    expect(errorOf(m.map({ action: 'hold_key', text: 'shift' }))).toMatch(/needs duration/);
  });

  it('left_mouse_down + left_mouse_up: a click where they meet, a drag when the pointer moved in between', () => {
    const m = mapper();
    expect(m.map({ action: 'left_mouse_down', coordinate: [100, 100] }).kind).toBe('text');
    expect(m.pendingDown).toEqual({ x: 150, y: 150 });
    expect(stepsOf(m.map({ action: 'left_mouse_up' }))).toEqual([{ action: 'mouse_click', params: { position: { x: 150, y: 150 }, button: 'left', click_type: 'single' } }]);
    expect(m.pendingDown).toBeNull();

    // down, moves (not performed: they move the remembered pointer), up → one drag.
    m.map({ action: 'left_mouse_down', coordinate: [100, 100] });
    const move = m.map({ action: 'mouse_move', coordinate: [400, 300] });
    expect(move.kind).toBe('text');
    expect(m.map({ action: 'screenshot' })).toEqual({ kind: 'screenshot' });
    expect(m.pendingDown).toEqual({ x: 150, y: 150 });
    expect(stepsOf(m.map({ action: 'left_mouse_up' }))).toEqual([{ action: 'mouse_drag', params: { start: { x: 150, y: 150 }, end: { x: 600, y: 450 }, button: 'left' } }]);

    // An up at its own coordinate drags there.
    m.map({ action: 'left_mouse_down' });
    expect(stepsOf(m.map({ action: 'left_mouse_up', coordinate: [1279, 719] }))[0]).toEqual({
      action: 'mouse_drag',
      params: { start: { x: 600, y: 450 }, end: { x: 1919, y: 1079 }, button: 'left' },
    });

    // Errors: an up without a down, a second down.
    expect(errorOf(m.map({ action: 'left_mouse_up' }))).toMatch(/not down/);
    m.map({ action: 'left_mouse_down', coordinate: [1, 1] });
    expect(errorOf(m.map({ action: 'left_mouse_down' }))).toMatch(/already down/);
    // An action that acts on its own drops the pending down and says so.
    const key = m.map({ action: 'key', text: 'Escape' });
    expect(stepsOf(key)).toEqual([{ action: 'press_keys', params: { keys: 'Escape' } }]);
    expect(key.kind === 'steps' && key.note).toMatch(/pending left_mouse_down at \(1, 1\) was dropped/);
    expect(m.pendingDown).toBeNull();
  });

  it('screenshot, cursor_position (display pixels), zoom (20251124 with zoom enabled only)', () => {
    const m = mapper();
    expect(m.map({ action: 'screenshot' })).toEqual({ kind: 'screenshot' });
    expect(m.map({ action: 'cursor_position' })).toEqual({ kind: 'text', text: 'X=640,Y=360' });
    m.map({ action: 'mouse_move', coordinate: [1279, 719] });
    expect(m.map({ action: 'cursor_position' })).toEqual({ kind: 'text', text: 'X=1279,Y=719' });
    expect(m.map({ action: 'zoom', region: [0, 0, 640, 360] })).toEqual({ kind: 'zoom', rect: { left: 0, top: 0, width: 960, height: 540 } });
    expect(errorOf(m.map({ action: 'zoom', region: [10, 10, 5, 20] }))).toMatch(/x1 < x2/);
    expect(errorOf(m.map({ action: 'zoom', region: [0, 0, 1281, 10] }))).toMatch(/within the 1280x720 display/);
    expect(errorOf(m.map({ action: 'zoom' }))).toMatch(/region/);
    expect(errorOf(mapper('computer_20251124', false).map({ action: 'zoom', region: [0, 0, 10, 10] }))).toMatch(/not enabled/);
    expect(errorOf(mapper('computer_20250124').map({ action: 'zoom', region: [0, 0, 10, 10] }))).toMatch(/only in computer_20251124/);
  });

  it('unknown actions, malformed input and coordinates outside the display are error results', () => {
    const m = mapper('computer_20250124');
    const unknown = errorOf(m.map({ action: 'teleport' }));
    expect(unknown).toMatch(/Unknown computer action "teleport"/);
    expect(unknown).not.toMatch(/zoom/);
    expect(errorOf(mapper().map({ action: 'teleport' }))).toMatch(/zoom/);
    expect(errorOf(m.map(null))).toMatch(/must be an object/);
    expect(errorOf(m.map({ coordinate: [1, 1] }))).toMatch(/no "action"/);
    expect(errorOf(m.map({ action: 'left_click', coordinate: [1281, 5] }))).toMatch(/outside the 1280x720 display/);
    expect(errorOf(m.map({ action: 'left_click', coordinate: [-1, 5] }))).toMatch(/outside/);
    expect(errorOf(m.map({ action: 'left_click', coordinate: [5] }))).toMatch(/\[x, y\]/);
    expect(errorOf(m.map({ action: 'left_click', coordinate: ['5', 6] }))).toMatch(/\[x, y\]/);
    // The display's own edge is accepted and clamped onto the last pixel.
    expect(stepsOf(m.map({ action: 'left_click', coordinate: [1280, 720] }))[0]!.params).toMatchObject({ position: { x: 1919, y: 1079 } });
  });

  it('a new screen size puts the pointer back to its centre and drops a pending down', () => {
    const m = mapper();
    m.map({ action: 'left_mouse_down', coordinate: [5, 5] });
    m.update({ map: new DisplayMap({ width: 1280, height: 800 }, { width: 1280, height: 800 }), toolVersion: 'computer_20251124', zoom: true });
    expect(m.pendingDown).toBeNull();
    expect(m.pointer).toEqual({ x: 640, y: 400 });
    expect(m.displaySize()).toEqual({ width: 1280, height: 800 });
  });
});
