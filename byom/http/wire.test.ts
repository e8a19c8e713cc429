import { describe, expect, it } from 'vitest';
import { ACTION_PARAMS } from '../../harness/trace/schema.ts';
import type { CoordinateFrame } from '../chat/coordinates.ts';
import { PLANNER_ACTION_TYPES, parsePlannerResponse, plannerActionSteps, type PlannerAction } from './wire.ts';

const frame: CoordinateFrame = { space: 'absolute', screen: { width: 1280, height: 800 }, image: { width: 1280, height: 800 } };

describe('planner wire format', () => {
  it('maps each action type to trace steps the trace schema accepts', () => {
    const cases: Array<[PlannerAction, Array<{ action: string; params: Record<string, unknown> }>]> = [
      [{ type: 'CLICK', x: 1, y: 2 }, [{ action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'single' } }]],
      [{ type: 'CLICK', x: 1, y: 2, button: 'right', click_count: 3 }, [{ action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'right', click_type: 'triple' } }]],
      [{ type: 'MOUSE_MOVE', x: 1279, y: 799 }, [{ action: 'mouse_move', params: { position: { x: 1279, y: 799 } } }]],
      [{ type: 'DRAG', start: { x: 1, y: 2 }, end: { x: 3, y: 4 } }, [{ action: 'mouse_drag', params: { start: { x: 1, y: 2 }, end: { x: 3, y: 4 }, button: 'left' } }]],
      [{ type: 'SCROLL', x: 5, y: 6, direction: 'up' }, [{ action: 'mouse_scroll', params: { position: { x: 5, y: 6 }, direction: 'up', repeat: 1 } }]],
      [{ type: 'SCROLL', x: 5, y: 6, direction: 'right', amount: 4 }, [{ action: 'mouse_scroll', params: { position: { x: 5, y: 6 }, direction: 'right', repeat: 4 } }]],
      [{ type: 'TYPE_INTO', text: 'abc' }, [{ action: 'type_text', params: { text: 'abc' } }]],
      [
        { type: 'TYPE_INTO', text: 'abc', x: 7, y: 8, clear: true },
        [
          { action: 'mouse_click', params: { position: { x: 7, y: 8 }, button: 'left', click_type: 'single' } },
          { action: 'press_keys', params: { keys: 'ctrl+a' } },
          { action: 'type_text', params: { text: 'abc' } },
        ],
      ],
      [
        { type: 'TYPE_INTO', text: '', clear: true },
        [
          { action: 'press_keys', params: { keys: 'ctrl+a' } },
          { action: 'press_keys', params: { keys: 'BackSpace' } },
        ],
      ],
      [{ type: 'KEY_PRESS', keys: 'Enter' }, [{ action: 'press_keys', params: { keys: 'Enter' } }]],
      [{ type: 'KEY_PRESS', keys: ['ctrl', 'shift', 'p'] }, [{ action: 'press_keys', params: { keys: 'ctrl+shift+p' } }]],
      [{ type: 'WAIT', seconds: 0.5 }, [{ action: 'wait', params: { seconds: 0.5 } }]],
      [{ type: 'FINISH' }, [{ action: 'finish', params: {} }]],
      [{ type: 'FINISH', success: true, message: 'done' }, [{ action: 'finish', params: { success: true, message: 'done' } }]],
    ];
    const types = new Set<string>();
    for (const [a, steps] of cases) {
      const parsed = parsePlannerResponse({ actions: [a] });
      expect(parsed.ok, JSON.stringify(a)).toBe(true);
      const got = plannerActionSteps(a, frame);
      expect(got).toEqual(steps);
      for (const s of got) expect(ACTION_PARAMS[s.action as keyof typeof ACTION_PARAMS].safeParse(s.params).success).toBe(true);
      types.add(a.type);
    }
    expect([...types].sort()).toEqual([...PLANNER_ACTION_TYPES].sort());
  });

  it('maps coordinates of a scaled screenshot back to the screen exactly', () => {
    const resized: CoordinateFrame = { space: 'resized', screen: { width: 1280, height: 800 }, image: { width: 1024, height: 640 } };
    expect(plannerActionSteps({ type: 'MOUSE_MOVE', x: 1023, y: 639 }, resized)).toEqual([{ action: 'mouse_move', params: { position: { x: 1279, y: 799 } } }]);
    expect(plannerActionSteps({ type: 'MOUSE_MOVE', x: 0, y: 0 }, resized)).toEqual([{ action: 'mouse_move', params: { position: { x: 0, y: 0 } } }]);
  });

  it('rejects bad responses naming the field', () => {
    const bad: Array<[unknown, RegExp]> = [
      [{}, /actions/],
      [{ actions: [] }, /actions/],
      [{ actions: [{ type: 'TAP', x: 1, y: 2 }] }, /actions\.0/],
      [{ actions: [{ type: 'CLICK', x: 1 }] }, /actions\.0\.y/],
      [{ actions: [{ type: 'CLICK', x: 1, y: 2, extra: 1 }] }, /unknown key "extra"/],
      [
        {
          actions: [
            { type: 'WAIT', seconds: 1 },
            { type: 'SCROLL', x: 1, y: 2, direction: 'in' },
          ],
        },
        /actions\.1\.direction/,
      ],
      [{ actions: [{ type: 'TYPE_INTO', text: 'a', x: 1 }] }, /x: give both x and y/],
      [{ actions: [{ type: 'CLICK', x: 1, y: 2, click_count: 4 }] }, /click_count/],
    ];
    for (const [body, re] of bad) {
      const r = parsePlannerResponse(body);
      expect(r.ok, JSON.stringify(body)).toBe(false);
      if (!r.ok) expect(r.error).toMatch(re);
    }
    expect(parsePlannerResponse({ actions: [{ type: 'WAIT', seconds: 1 }], id: 'r1', model: 'extra keys at the top level are ignored' }).ok).toBe(true);
  });

  it('refuses coordinates outside the screenshot, unknown keys and untypable text', () => {
    expect(() => plannerActionSteps({ type: 'CLICK', x: 1281, y: 0 }, frame)).toThrow(/outside/);
    expect(() => plannerActionSteps({ type: 'KEY_PRESS', keys: 'ctrl+Retrun' }, frame)).toThrow(/KEY_PRESS/);
    expect(() => plannerActionSteps({ type: 'TYPE_INTO', text: 'a\u0001' }, frame)).toThrow(/cannot be typed/);
  });
});
