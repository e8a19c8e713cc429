/**
 * OpenAI computer actions → vncua steps, for every action type of both tool forms (the preview
 * tool's `action` and the batched tool's `actions` share the SDK's ComputerAction shapes), and the
 * coordinate map with downscaling (edge pixels, exact round trip).
 */
import type { ComputerAction, ResponseComputerToolCall } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { parseKeys } from '../../harness/keys/index.ts';
import { DEFAULT_WAIT_SECONDS, PIXELS_PER_NOTCH, mapComputerAction, mapKeys } from './actions.ts';
import { coordinateMap } from './coords.ts';

const same = coordinateMap({ width: 1280, height: 800 }, { width: 1280, height: 800 });
/** 1280x800 shown to the model as 1024x640 (x1.25). */
const down = coordinateMap({ width: 1024, height: 640 }, { width: 1280, height: 800 });

/** The preview tool's action type and the batched tool's must be the same shapes. */
type PreviewAction = NonNullable<ResponseComputerToolCall['action']>;
const asPreview = (a: ComputerAction): PreviewAction => a;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isVncuaError(e) ? e.code : 'not a VncuaError';
  }
  return undefined;
}

describe('mapComputerAction', () => {
  it('click: left/right/wheel → mouse_click left/right/middle at the mapped point; back/forward → page_navigation', () => {
    const click = (button: ComputerAction.Click['button']): ComputerAction => ({ type: 'click', button, x: 512, y: 320 });
    expect(mapComputerAction(click('left'), down).steps).toEqual([{ action: 'mouse_click', params: { position: { x: 640, y: 400 }, button: 'left', click_type: 'single' } }]);
    expect(mapComputerAction(click('right'), down).steps[0]!.params!.button).toBe('right');
    expect(mapComputerAction(click('wheel'), down).steps[0]!.params!.button).toBe('middle');
    expect(mapComputerAction(click('back'), down).steps).toEqual([{ action: 'page_navigation', params: { direction: 'back' } }]);
    expect(mapComputerAction(click('forward'), down).steps).toEqual([{ action: 'page_navigation', params: { direction: 'forward' } }]);
    expect(codeOf(() => mapComputerAction({ type: 'click', button: 'side', x: 1, y: 1 }, same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
  });

  it('double_click → mouse_click double', () => {
    const a: ComputerAction = { type: 'double_click', x: 10, y: 20, keys: null };
    expect(mapComputerAction(asPreview(a), same).steps).toEqual([{ action: 'mouse_click', params: { position: { x: 10, y: 20 }, button: 'left', click_type: 'double' } }]);
  });

  it(`scroll: scroll_y then scroll_x in pixels → mouse_scroll notches of ${PIXELS_PER_NOTCH} px (rounded, at least 1, at most 100), scaled to the screen`, () => {
    const scroll = (scroll_x: number, scroll_y: number, map = same) => mapComputerAction({ type: 'scroll', x: 100, y: 200, scroll_x, scroll_y }, map).steps;
    expect(scroll(0, 360)).toEqual([{ action: 'mouse_scroll', params: { position: { x: 100, y: 200 }, direction: 'down', repeat: 3 } }]);
    expect(scroll(0, -120)).toEqual([{ action: 'mouse_scroll', params: { position: { x: 100, y: 200 }, direction: 'up', repeat: 1 } }]);
    expect(scroll(0, 5)[0]!.params!.repeat).toBe(1);
    expect(scroll(0, 1_000_000)[0]!.params!.repeat).toBe(100);
    expect(scroll(300, -240).map((s) => [s.params!.direction, s.params!.repeat])).toEqual([
      ['up', 2],
      ['right', 3], // 2.5 notches rounds up
    ]);
    expect(scroll(-200, 0).map((s) => [s.params!.direction, s.params!.repeat])).toEqual([['left', 2]]);
    expect(scroll(0, 0)).toEqual([]);
    // 144 image px at x1.25 = 180 screen px = 1.5 → 2 notches; unscaled, 144 px = 1.2 → 1 notch.
    expect(scroll(0, 144, down)[0]!.params).toEqual({ position: { x: 125, y: 250 }, direction: 'down', repeat: 2 });
    expect(scroll(0, 144, same)[0]!.params!.repeat).toBe(1);
  });

  it('type → type_text, exactly', () => {
    expect(mapComputerAction({ type: 'type', text: 'héllo\nwörld 中' }, same).steps).toEqual([{ action: 'type_text', params: { text: 'héllo\nwörld 中' } }]);
  });

  it('keypress → press_keys in vncua key syntax', () => {
    expect(mapComputerAction({ type: 'keypress', keys: ['CTRL', 'A'] }, same).steps).toEqual([{ action: 'press_keys', params: { keys: 'ctrl+a' } }]);
    expect(mapComputerAction({ type: 'keypress', keys: ['ENTER'] }, same).steps[0]!.params).toEqual({ keys: 'Enter' });
  });

  it('drag: a two-point path → mouse_drag; a longer path → start to end, the path kept in the notes; fewer than two points is an error', () => {
    expect(
      mapComputerAction(
        {
          type: 'drag',
          path: [
            { x: 0, y: 0 },
            { x: 1023, y: 639 },
          ],
        },
        down,
      ),
    ).toEqual({
      steps: [{ action: 'mouse_drag', params: { start: { x: 0, y: 0 }, end: { x: 1279, y: 799 }, button: 'left' } }],
      notes: undefined,
    });
    const long = mapComputerAction(
      {
        type: 'drag',
        path: [
          { x: 10, y: 10 },
          { x: 50, y: 60 },
          { x: 90, y: 10 },
        ],
      },
      same,
    );
    expect(long.steps).toEqual([{ action: 'mouse_drag', params: { start: { x: 10, y: 10 }, end: { x: 90, y: 10 }, button: 'left' } }]);
    expect(long.notes).toEqual({
      drag_path: [
        { x: 10, y: 10 },
        { x: 50, y: 60 },
        { x: 90, y: 10 },
      ],
    });
    expect(codeOf(() => mapComputerAction({ type: 'drag', path: [{ x: 1, y: 1 }] }, same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
  });

  it('move → mouse_move; keys held during a mouse action are reported in the notes', () => {
    expect(mapComputerAction({ type: 'move', x: 5, y: 6 }, same)).toEqual({ steps: [{ action: 'mouse_move', params: { position: { x: 5, y: 6 } } }], notes: undefined });
    expect(mapComputerAction({ type: 'click', button: 'left', x: 5, y: 6, keys: ['SHIFT'] }, same).notes).toEqual({ held_keys_ignored: ['SHIFT'] });
  });

  it(`wait → wait ${DEFAULT_WAIT_SECONDS} s (or ms/1000 when the action gives ms); screenshot → nothing`, () => {
    expect(mapComputerAction({ type: 'wait' }, same).steps).toEqual([{ action: 'wait', params: { seconds: DEFAULT_WAIT_SECONDS } }]);
    expect(mapComputerAction({ type: 'wait', ms: 250 }, same).steps).toEqual([{ action: 'wait', params: { seconds: 0.25 } }]);
    expect(mapComputerAction({ type: 'screenshot' }, same).steps).toEqual([]);
  });

  it('an unknown type, a non-object, or missing coordinates → MODEL_ERR_UNKNOWN_ACTION with the action in details', () => {
    let err: unknown;
    try {
      mapComputerAction({ type: 'zoom', x: 1, y: 2 }, same);
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'MODEL_ERR_UNKNOWN_ACTION')).toBe(true);
    expect((err as { details: unknown }).details).toEqual({ action: { type: 'zoom', x: 1, y: 2 } });
    expect(codeOf(() => mapComputerAction('click', same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
    expect(codeOf(() => mapComputerAction({ type: 'click', button: 'left', x: '5', y: 6 }, same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
    expect(codeOf(() => mapComputerAction({ type: 'type' }, same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
    expect(codeOf(() => mapComputerAction({ type: 'keypress', keys: [] }, same))).toBe('MODEL_ERR_UNKNOWN_ACTION');
  });
});

describe('mapKeys', () => {
  const cases: Array<[string[], string]> = [
    [['CTRL', 'C'], 'ctrl+c'],
    [['CTRL', 'SHIFT', 'T'], 'ctrl+shift+t'],
    [['ENTER'], 'Enter'],
    [['RETURN'], 'Enter'],
    [['ESC'], 'Escape'],
    [['SPACE'], 'space'],
    [[' '], 'space'],
    [['ARROWLEFT'], 'Left'],
    [['ArrowRight'], 'Right'],
    [['ARROWUP'], 'Up'],
    [['ARROWDOWN'], 'Down'],
    [['CMD', 'A'], 'super+a'],
    [['META', 'L'], 'super+l'],
    [['ALT', 'TAB'], 'alt+Tab'],
    [['ALT', 'LEFT'], 'alt+Left'],
    [['BACKSPACE'], 'BackSpace'],
    [['DELETE'], 'Delete'],
    [['HOME'], 'Home'],
    [['END'], 'End'],
    [['PAGEUP'], 'Page_Up'],
    [['PAGEDOWN'], 'Page_Down'],
    [['F1'], 'F1'],
    [['f12'], 'F12'],
    [['CTRL', '+'], 'ctrl+plus'],
    [['a'], 'a'],
    [['A'], 'A'],
    [['?'], '?'],
  ];
  it.each(cases)('%j → %s, which the key parser accepts', (keys, expected) => {
    const mapped = mapKeys(keys);
    expect(mapped).toBe(expected);
    expect(parseKeys(mapped).chords.length).toBeGreaterThan(0);
  });

  it('a chord means the same keysyms as the model named (Ctrl+A, not Ctrl+Shift+A)', () => {
    expect(parseKeys(mapKeys(['CTRL', 'A']))).toEqual(parseKeys('ctrl+a'));
    expect(parseKeys(mapKeys(['CTRL', 'A'])).chords[0]!.names).not.toContain('Shift_L');
  });

  it('an unknown key name passes through, so the key parser reports it (ACTION_ERR_UNKNOWN_KEY)', () => {
    expect(mapKeys(['HYPERSPACE'])).toBe('HYPERSPACE');
    expect(codeOf(() => parseKeys(mapKeys(['HYPERSPACE'])))).toBe('ACTION_ERR_UNKNOWN_KEY');
  });
});

describe('coordinateMap', () => {
  const sizes: Array<[number, number, number, number]> = [
    [1024, 640, 1280, 800],
    [960, 540, 1920, 1080],
    [1280, 800, 1920, 1080],
    [1366, 768, 1366, 768],
    [800, 500, 1280, 800],
  ];
  it.each(sizes)('image %dx%d of screen %dx%d: edge pixels map to edge pixels, and image → screen → image is exact for every pixel', (iw, ih, sw, sh) => {
    const m = coordinateMap({ width: iw, height: ih }, { width: sw, height: sh });
    expect(m.toScreen({ x: 0, y: 0 })).toEqual({ x: 0, y: 0 });
    expect(m.toScreen({ x: iw - 1, y: ih - 1 })).toEqual({ x: sw - 1, y: sh - 1 });
    expect(m.toScreen({ x: iw - 1, y: 0 })).toEqual({ x: sw - 1, y: 0 });
    for (let x = 0; x < iw; x++) {
      const s = m.toScreen({ x, y: 0 });
      expect(m.toImage(s).x).toBe(x);
      // Inside the screen area this image pixel was scaled from: [x·k − ½, (x+1)·k − ½).
      const k = sw / iw;
      expect(s.x).toBeGreaterThanOrEqual(x * k - 0.5);
      expect(s.x).toBeLessThan((x + 1) * k - 0.5 + 1e-9);
    }
    for (let y = 0; y < ih; y++) expect(m.toImage(m.toScreen({ x: 0, y })).y).toBe(y);
  });

  it('points outside the image are clamped to the screen; fractional points are rounded', () => {
    expect(down.toScreen({ x: -5, y: 9999 })).toEqual({ x: 0, y: 799 });
    expect(down.toScreen({ x: 1024, y: 640 })).toEqual({ x: 1279, y: 799 });
    expect(same.toScreen({ x: 10.4, y: 10.6 })).toEqual({ x: 10, y: 11 });
  });
});
