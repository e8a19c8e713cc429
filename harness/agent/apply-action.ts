/**
 * Apply one trace entry (`{ action, params }`, the snake_case names and params of execution.json,
 * ours or uitask's) to an Agent through its recorded primitives. Shared by `reenact()` and the
 * scripted agent, so a trace and a script are played the same way.
 *
 * Params are passed on as given (only the keys each primitive takes), and the primitive checks
 * them: a bad value is ACTION_ERR_BAD_ARGUMENT / ACTION_ERR_OFF_SCREEN, recorded as a failed
 * attempt by the Agent. An action name vncua does not know is ACTION_ERR_UNKNOWN_ACTION.
 */
import { VncuaError } from '../errors.ts';
import { ACTION_NAMES, type ActionName } from '../trace/schema.ts';
import type { Agent } from './agent.ts';
import type { ClickType, MouseButton, NavigationDirection, Point, ScrollDirection } from './arguments.ts';

/** One step to play: a trace entry's action and params (other entry fields are ignored). */
export interface ActionStep {
  action: string;
  params?: Record<string, unknown>;
}

/** True when `name` is one of the trace format's actions. */
export function isKnownAction(name: unknown): name is ActionName {
  return typeof name === 'string' && (ACTION_NAMES as readonly string[]).includes(name);
}

/** ACTION_ERR_UNKNOWN_ACTION for the entry at `index`, listing the known actions. */
export function unknownActionError(index: number, action: unknown): VncuaError {
  return new VncuaError('ACTION_ERR_UNKNOWN_ACTION', `Entry ${index}: unknown action ${JSON.stringify(action)}; use one of ${ACTION_NAMES.join(', ')}.`, {
    details: { index, action, known: [...ACTION_NAMES] },
  });
}

/** `obj` without the keys whose value is undefined (so a primitive's defaults apply). */
function defined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Perform `step` with `agent`'s primitive for its action (must be called from act(), during run()).
 * `index` names the entry in errors. Resolves when the primitive resolved; rejects with its error.
 */
export async function applyAction(agent: Agent, step: ActionStep, index: number): Promise<void> {
  const p = (step.params ?? {}) as Record<string, unknown>;
  const action = step.action;
  if (!isKnownAction(action)) throw unknownActionError(index, action);
  switch (action) {
    case 'mouse_move':
      return agent.mouseMove(p.position as Point);
    case 'mouse_click':
      return agent.mouseClick(
        defined({ position: p.position as Point | undefined, button: p.button as MouseButton | undefined, clickType: p.click_type as ClickType | undefined }),
      );
    case 'mouse_drag':
      return agent.mouseDrag(defined({ start: p.start as Point, end: p.end as Point, button: p.button as MouseButton | undefined }));
    case 'mouse_scroll':
      return agent.mouseScroll(defined({ position: p.position as Point, direction: p.direction as ScrollDirection, repeat: p.repeat as number | undefined }));
    case 'press_keys':
      return agent.pressKeys(p.keys as string);
    case 'type_text':
      return agent.typeText(p.text as string);
    case 'page_navigation':
      return agent.pageNavigation(p.direction as NavigationDirection);
    case 'wait':
      return agent.wait(p.seconds as number);
    case 'finish':
      return agent.finish(p);
  }
}

/** A trace entry as the Agent method call that performs it: the TypeScript API's name and arguments (camelCase). */
export interface ApiCall {
  /** The Agent method (`mouseClick`, `typeText`, …). */
  method: 'mouseMove' | 'mouseClick' | 'mouseDrag' | 'mouseScroll' | 'pressKeys' | 'typeText' | 'pageNavigation' | 'wait' | 'finish';
  /** Its arguments in order, as applyAction passes them (absent options left out, so the defaults apply). */
  args: unknown[];
}

/**
 * The Agent call that `applyAction` makes for `step` (a known action), as data: the TypeScript API's
 * method and arguments, e.g. `mouse_click { click_type }` → `mouseClick({ clickType })`.
 */
export function apiCall(step: { action: ActionName; params?: Record<string, unknown> }): ApiCall {
  const p = (step.params ?? {}) as Record<string, unknown>;
  switch (step.action) {
    case 'mouse_move':
      return { method: 'mouseMove', args: [p.position] };
    case 'mouse_click':
      return { method: 'mouseClick', args: [defined({ position: p.position, button: p.button, clickType: p.click_type })] };
    case 'mouse_drag':
      return { method: 'mouseDrag', args: [defined({ start: p.start, end: p.end, button: p.button })] };
    case 'mouse_scroll':
      return { method: 'mouseScroll', args: [defined({ position: p.position, direction: p.direction, repeat: p.repeat })] };
    case 'press_keys':
      return { method: 'pressKeys', args: [p.keys] };
    case 'type_text':
      return { method: 'typeText', args: [p.text] };
    case 'page_navigation':
      return { method: 'pageNavigation', args: [p.direction] };
    case 'wait':
      return { method: 'wait', args: [p.seconds] };
    case 'finish':
      return { method: 'finish', args: [p] };
  }
}
