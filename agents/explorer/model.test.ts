import { describe, expect, it } from 'vitest';
import { modelAllowed, modelStepProblem } from './model.ts';

const screen = { width: 1280, height: 800 };

describe('modelStepProblem', () => {
  it('accepts the input actions on the screen and says what is wrong with anything else', () => {
    expect(modelStepProblem({ action: 'mouse_click', params: { position: { x: 10, y: 10 }, button: 'left', click_type: 'single' } }, screen)).toBeNull();
    expect(modelStepProblem({ action: 'press_keys', params: { keys: 'Escape' } }, screen)).toBeNull();
    expect(modelStepProblem({ action: 'type_text', params: { text: 'hi' } }, screen)).toBeNull();
    expect(modelStepProblem({ action: 'mouse_click', params: { position: { x: 1280, y: 10 } } }, screen)).toMatch(/off the 1280x800 screen/);
    expect(modelStepProblem({ action: 'finish', params: {} }, screen)).toMatch(/not one of/);
    expect(modelStepProblem({ action: 'press_keys', params: { keys: 'Retrun' } }, screen)).toMatch(/^keys:/);
    expect(modelStepProblem({ action: 'page_navigation', params: { direction: 'up' } }, screen)).toMatch(/direction/);
    expect(modelStepProblem('click there', screen)).toMatch(/not an action/);
  });
});

describe('modelAllowed', () => {
  const caps = { modelEvery: 3, maxModelCalls: 2, maxModelCostUsd: 0.01 };
  it('keeps calls apart and under the call and cost caps', () => {
    expect(modelAllowed({ calls: 0, costUsd: 0, lastStep: Number.NEGATIVE_INFINITY }, 1, caps)).toBe(true);
    expect(modelAllowed({ calls: 1, costUsd: 0, lastStep: 5 }, 7, caps)).toBe(false);
    expect(modelAllowed({ calls: 1, costUsd: 0, lastStep: 5 }, 8, caps)).toBe(true);
    expect(modelAllowed({ calls: 2, costUsd: 0, lastStep: 1 }, 20, caps)).toBe(false);
    expect(modelAllowed({ calls: 1, costUsd: 0.01, lastStep: 1 }, 20, caps)).toBe(false);
    expect(modelAllowed({ calls: 1, costUsd: 0.5, lastStep: 1 }, 20, { ...caps, maxModelCostUsd: undefined })).toBe(true);
  });
});
