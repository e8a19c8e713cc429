import { describe, expect, it } from 'vitest';
import { findSigns, type EntryScreens } from './heuristic.ts';

const click = (x: number, y = 10) => ({ action: 'mouse_click' as const, params: { position: { x, y }, button: 'left', click_type: 'single' } });
const finish = { action: 'finish' as const, params: {} };
/** Screens: before[i] and after[i] from a list of hashes, one per boundary (s0 before entry 0, s1 after it...). */
const screens = (hs: string[]): EntryScreens => ({ before: hs.slice(0, -1), after: hs.slice(1) });
const H = { type: 'heuristic' as const };

describe('heuristic judge', () => {
  it('stuck: N actions in a row that left the screen unchanged', () => {
    const entries = [click(1), click(2), click(3), click(4), finish];
    expect(findSigns(entries, screens(['a', 'b', 'b', 'b', 'b', 'b']), H)).toEqual([{ kind: 'stuck', from: 1, to: 3, detail: expect.stringContaining('3 actions in a row') }]);
    // Two unchanged in a row: under the default 3.
    expect(findSigns(entries, screens(['a', 'b', 'b', 'b', 'c', 'c']), H)).toEqual([]);
    expect(findSigns(entries, screens(['a', 'b', 'b', 'b', 'c', 'c']), { ...H, stuckSteps: 2 }).map((s) => s.kind)).toEqual(['stuck']);
    // Unknown screens never count as unchanged.
    expect(findSigns(entries, { before: ['a', null, null, null, 'x'], after: [null, null, null, 'x', 'x'] }, H)).toEqual([]);
  });

  it('loop: the same cycle of actions at the end, or screens cycling', () => {
    const ab = [click(1), click(2), click(1), click(2), click(1), click(2), finish];
    expect(findSigns(ab, null, H).map((s) => [s.kind, s.from, s.to])).toEqual([['loop', 0, 5]]);
    // A single repeated action that makes progress (the screen changes each time) is not a loop.
    const down = [click(5), click(5), click(5), finish];
    expect(findSigns(down, screens(['a', 'b', 'c', 'd', 'd']), H)).toEqual([]);
    // Different actions, screens cycling A, B, A, B, A, B.
    const varied = [click(1), click(2), click(3), click(4), click(5), click(6)];
    expect(findSigns(varied, screens(['s', 'A', 'B', 'A', 'B', 'A', 'B']), H).map((s) => s.kind)).toEqual(['loop']);
    expect(findSigns(varied, screens(['s', 'A', 'B', 'C', 'D', 'E', 'F']), H)).toEqual([]);
  });

  it('repeated errors: N failed actions in a row with the same code', () => {
    const err = (code: string) => ({ ...click(1), error: { code } });
    expect(findSigns([err('ACTION_ERR_OFF_SCREEN'), err('ACTION_ERR_OFF_SCREEN'), click(3), err('ACTION_ERR_OFF_SCREEN')], null, H)).toEqual([]);
    const signs = findSigns(
      [click(9), err('ACTION_ERR_OFF_SCREEN'), { ...click(2), error: { code: 'ACTION_ERR_OFF_SCREEN' } }, { ...click(3), error: { code: 'ACTION_ERR_OFF_SCREEN' } }],
      null,
      H,
    );
    expect(signs.map((s) => [s.kind, s.from, s.to])).toEqual([['repeated_errors', 1, 3]]);
    const at = (x: number, code: string) => ({ ...click(x), error: { code } });
    expect(findSigns([at(1, 'A'), at(2, 'B'), at(3, 'A')], null, { ...H, errorRepeats: 2 })).toEqual([]);
    expect(findSigns([at(1, 'A'), at(2, 'A'), at(3, 'B')], null, { ...H, errorRepeats: 2 }).map((s) => s.kind)).toEqual(['repeated_errors']);
  });
});
