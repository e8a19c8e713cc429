/** The Agent base class users subclass to bring their own model, its options and its primitives' argument types. */
export { Agent } from './agent.ts';
export type {
  AgentRunResult,
  AgentScreenshotOptions,
  CaptureScreenOptions,
  EndRunStatus,
  FinishParams,
  MouseClickOptions,
  MouseDragOptions,
  MouseScrollOptions,
  ScreenCapture,
} from './agent.ts';
export type { RecorderFactory, RecorderStartOptions, RecordingHandle } from './recording.ts';
export { DEFAULT_MAX_STEPS, agentOptionsSchema, resolveAgentOptions } from './options.ts';
export type { AgentOptions, ResolvedAgentOptions, RunOptions } from './options.ts';
export { CLICK_TYPES, MAX_SCROLL_REPEAT, MAX_WAIT_SECONDS, MOUSE_BUTTONS, NAVIGATION_DIRECTIONS, SCROLL_DIRECTIONS } from './arguments.ts';
export type { ClickType, MouseButton, NavigationDirection, Point, ScrollDirection } from './arguments.ts';
export { apiCall, applyAction, isKnownAction, unknownActionError, type ActionStep, type ApiCall } from './apply-action.ts';
export { reenact, REENACT_FILES, type ReenactOptions, type ReenactResult } from './reenact.ts';
export type { AgentBuilder, AgentContext } from './context.ts';
export type { NextActionPlanner, PlannerAnswer, PlannerInput } from './planner.ts';
export { DEFAULT_BACKOFF_MS, LocalRateGate, parseRateLimit, parseRateLimits } from './rate-gate.ts';
export type { AcquireOptions, RateBackoff, RateBackoffEvent, RateCall, RateGate, RateGrant, RateRule } from './rate-gate.ts';
export { CostBudget } from './cost-budget.ts';
