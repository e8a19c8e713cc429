import { describe, expect, it } from 'vitest';
import { ACTION_PARAMS } from '../../harness/trace/schema.ts';
import { CHAT_ACTIONS, validateChatAction } from './actions.ts';
import type { CoordinateFrame } from './coordinates.ts';

const absolute: CoordinateFrame = { space: 'absolute', screen: { width: 1280, height: 800 }, image: { width: 1280, height: 800 } };
const normalized: CoordinateFrame = { ...absolute, space: 'normalized1000' };

describe('validateChatAction', () => {
  it('maps every action to a trace step whose params the trace schema accepts', () => {
    const replies: Array<[Record<string, unknown>, { action: string; params: Record<string, unknown> }]> = [
      [
        { action: 'click', coordinate: [10, 20] },
        { action: 'mouse_click', params: { position: { x: 10, y: 20 }, button: 'left', click_type: 'single' } },
      ],
      [
        { action: 'click', coordinate: [10, 20], button: 'middle' },
        { action: 'mouse_click', params: { position: { x: 10, y: 20 }, button: 'middle', click_type: 'single' } },
      ],
      [
        { action: 'double_click', coordinate: [1, 2] },
        { action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'double' } },
      ],
      [
        { action: 'triple_click', coordinate: [1, 2] },
        { action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'left', click_type: 'triple' } },
      ],
      [
        { action: 'right_click', coordinate: [1, 2] },
        { action: 'mouse_click', params: { position: { x: 1, y: 2 }, button: 'right', click_type: 'single' } },
      ],
      [
        { action: 'move', coordinate: [5, 6] },
        { action: 'mouse_move', params: { position: { x: 5, y: 6 } } },
      ],
      [
        { action: 'drag', start: [1, 2], end: [300, 400] },
        { action: 'mouse_drag', params: { start: { x: 1, y: 2 }, end: { x: 300, y: 400 }, button: 'left' } },
      ],
      [
        { action: 'scroll', coordinate: [5, 6], direction: 'down' },
        { action: 'mouse_scroll', params: { position: { x: 5, y: 6 }, direction: 'down', repeat: 3 } },
      ],
      [
        { action: 'scroll', coordinate: [5, 6], direction: 'left', amount: 7 },
        { action: 'mouse_scroll', params: { position: { x: 5, y: 6 }, direction: 'left', repeat: 7 } },
      ],
      [
        { action: 'type', text: 'héllo 世界\n' },
        { action: 'type_text', params: { text: 'héllo 世界\n' } },
      ],
      [
        { action: 'keys', keys: 'ctrl+shift+p' },
        { action: 'press_keys', params: { keys: 'ctrl+shift+p' } },
      ],
      [
        { action: 'navigate', direction: 'back' },
        { action: 'page_navigation', params: { direction: 'back' } },
      ],
      [
        { action: 'wait', seconds: 1.5 },
        { action: 'wait', params: { seconds: 1.5 } },
      ],
      [{ action: 'finish' }, { action: 'finish', params: {} }],
      [
        { action: 'finish', answer: '42' },
        { action: 'finish', params: { answer: '42' } },
      ],
    ];
    const seen = new Set<string>();
    for (const [reply, step] of replies) {
      const v = validateChatAction(reply, absolute);
      expect(v, JSON.stringify(reply)).toMatchObject({ ok: true, step });
      if (v.ok) {
        seen.add(v.action.action);
        expect(ACTION_PARAMS[v.step.action as keyof typeof ACTION_PARAMS].safeParse(v.step.params).success).toBe(true);
      }
    }
    expect([...seen].sort()).toEqual([...CHAT_ACTIONS].sort());
  });

  it('keeps the thought apart from the step', () => {
    const v = validateChatAction({ action: 'wait', seconds: 0, thought: 'page is loading' }, absolute);
    expect(v).toEqual({
      ok: true,
      action: { action: 'wait', seconds: 0, thought: 'page is loading' },
      step: { action: 'wait', params: { seconds: 0 } },
      thought: 'page is loading',
    });
  });

  it('maps coordinates through the frame', () => {
    const v = validateChatAction({ action: 'drag', start: [0, 0], end: [1000, 500] }, normalized);
    expect(v.ok && v.step.params).toEqual({ start: { x: 0, y: 0 }, end: { x: 1279, y: 400 }, button: 'left' });
  });

  it('rejects with a message naming the problem', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ action: 'tap', coordinate: [1, 2] }, /"action" must be one of/],
      [{ coordinate: [1, 2] }, /"action" must be one of/],
      [{ action: 'click', coordinate: [1] }, /coordinate/],
      [{ action: 'click', coordinate: '(1, 2)' }, /coordinate/],
      [{ action: 'click', coordinate: [1, 2], extra: true }, /unknown key "extra"/],
      [{ action: 'click', coordinate: [1281, 2] }, /outside the coordinate space/],
      [{ action: 'click', coordinate: [500, 1001] }, /outside/],
      [{ action: 'scroll', coordinate: [1, 2], direction: 'sideways' }, /direction/],
      [{ action: 'scroll', coordinate: [1, 2], direction: 'up', amount: 0 }, /amount/],
      [{ action: 'keys', keys: 'ctrl+Retrun' }, /keys: /],
      [{ action: 'type', text: '' }, /text/],
      [{ action: 'type', text: 'a\u0007b' }, /cannot be typed/],
      [{ action: 'wait', seconds: 600 }, /seconds/],
    ];
    for (const [reply, re] of cases) {
      const v = validateChatAction(reply, reply.coordinate && (reply.coordinate as number[])[1] === 1001 ? normalized : absolute);
      expect(v.ok, JSON.stringify(reply)).toBe(false);
      if (!v.ok) expect(v.error, JSON.stringify(reply)).toMatch(re);
    }
  });
});
