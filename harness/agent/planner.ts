/**
 * `NextActionPlanner`: the seam through which an agent asks a model for one next action, with no model SDK in sight.
 * The explorer (agents/explorer) asks one when its heuristics stop making progress; byom/ implements it over a model
 * API (byom/chat/planner.ts: any OpenAI-compatible vision model). Lives in harness/ so agents/ and byom/ both build on it.
 */
import type { ActionStep } from './apply-action.ts';

/** What a planner is shown: the goal, the screen, where the browser is and what was done lately. */
export interface PlannerInput {
  /** What to do (the run's task, or the explorer's "explore this app" instruction). */
  task: string;
  /** The screen as a base64 PNG. */
  screenshotPng: string;
  /** The screen size in pixels (coordinates of the answer are screen pixels). */
  screen: { width: number; height: number };
  /** The page URL, when known. */
  url: string | null;
  /** The latest actions performed, oldest first. */
  history: readonly ActionStep[];
}

/** A planner's answer: the next action (trace step, snake_case, screen pixels) and what asking cost. */
export interface PlannerAnswer {
  step: ActionStep;
  /** USD this call cost, when the model's price is known. */
  costUsd?: number;
  tokens?: { input: number; output: number };
}

/**
 * Asks a model for the next action. Resolves null when the model has nothing to suggest; rejects with a VncuaError
 * (e.g. EXPLORER_ERR_MODEL_ANSWER for an answer that is not a usable action, with its cost in `details.costUsd`) when the call failed.
 */
export interface NextActionPlanner {
  next(input: PlannerInput, options: { signal: AbortSignal }): Promise<PlannerAnswer | null>;
}
