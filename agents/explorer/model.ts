/**
 * Layer 2's side of the explorer: when the model may be asked (after the heuristics got stuck, `modelEvery` steps
 * apart, under the call and cost caps) and whether its answer is an action the explorer will perform (pure checks;
 * the call itself goes through a NextActionPlanner, harness/agent/planner.ts).
 */
import type { ActionStep } from '../../harness/agent/index.ts';
import { parseKeys } from '../../harness/keys/index.ts';

/** The instruction a planner gets when the run has no task. */
export const EXPLORE_TASK =
  'Explore this web application like a tester: reach screens and features not seen yet. The simple heuristics are stuck on this screen; give one action that reveals something new (never leave the application, never finish).';

/** Actions a model's answer may be. */
const MODEL_ACTIONS = new Set(['mouse_click', 'mouse_move', 'mouse_drag', 'mouse_scroll', 'type_text', 'press_keys', 'page_navigation']);

/** Why `step` is no action the explorer performs on a `screen`-sized screen (one line), or null when it is one. */
export function modelStepProblem(step: unknown, screen: { width: number; height: number }): string | null {
  if (typeof step !== 'object' || step === null) return 'not an action object';
  const s = step as ActionStep;
  if (typeof s.action !== 'string' || !MODEL_ACTIONS.has(s.action)) return `action ${JSON.stringify(s.action)} is not one of ${[...MODEL_ACTIONS].join(', ')}`;
  const p = (s.params ?? {}) as Record<string, unknown>;
  const onScreen = (name: string): string | null => {
    const v = p[name] as { x?: unknown; y?: unknown } | undefined;
    if (typeof v?.x !== 'number' || typeof v?.y !== 'number' || !Number.isInteger(v.x) || !Number.isInteger(v.y)) return `${name} must be whole pixels { x, y }`;
    if (v.x < 0 || v.y < 0 || v.x >= screen.width || v.y >= screen.height) return `${name} (${v.x}, ${v.y}) is off the ${screen.width}x${screen.height} screen`;
    return null;
  };
  switch (s.action) {
    case 'mouse_click':
    case 'mouse_move':
    case 'mouse_scroll':
      return onScreen('position');
    case 'mouse_drag':
      return onScreen('start') ?? onScreen('end');
    case 'type_text':
      return typeof p.text === 'string' && p.text !== '' ? null : 'text must be a non-empty string';
    case 'press_keys':
      if (typeof p.keys !== 'string') return 'keys must be a string';
      try {
        parseKeys(p.keys);
        return null;
      } catch (e) {
        return `keys: ${(e as Error).message}`;
      }
    case 'page_navigation':
      return p.direction === 'back' || p.direction === 'forward' ? null : 'direction must be back or forward';
  }
  return null;
}

/** The model's budget as the loop counts it. */
export interface ModelBudget {
  calls: number;
  costUsd: number;
  /** Step number of the last call (-Infinity: none yet). */
  lastStep: number;
}

/** May the model be asked at step `step`, given the caps? */
export function modelAllowed(b: ModelBudget, step: number, caps: { modelEvery: number; maxModelCalls: number; maxModelCostUsd: number | undefined }): boolean {
  if (b.calls >= caps.maxModelCalls) return false;
  if (caps.maxModelCostUsd !== undefined && b.costUsd >= caps.maxModelCostUsd) return false;
  return step - b.lastStep >= caps.modelEvery;
}
