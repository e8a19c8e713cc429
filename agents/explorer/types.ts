/**
 * The explorer's shared types: the contract between the exploring loop (agents/explorer/agent.ts and the
 * heuristics beside it), the findings monitors (agents/explorer/findings/) and the QA report
 * (agents/explorer/report/). The loop produces `ExplorerStep`s and an `ExplorerSummary`; observers watch the
 * run through `ExplorerObserver` and contribute `Finding`s; the report is written from the summary plus the
 * findings. Field names are camelCase here; qa-report.json's schema (agents/explorer/report/) says how they are
 * written to disk.
 */
import type { ActionStep } from '../../harness/agent/index.ts';

/** A rectangle on the screen, in screen pixels. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What kind of thing a target is. */
export type TargetKind = 'link' | 'button' | 'input' | 'textarea' | 'select' | 'checkbox' | 'radio' | 'tab' | 'menuitem' | 'canvas' | 'screen_region' | 'other';

/** One interactive element the explorer saw and may act on. `key` is stable across steps for the same element. */
export interface Target {
  /** Stable identity of the element (e.g. role + name + path, or a screen region's grid cell). */
  key: string;
  kind: TargetKind;
  /** Accessible name or visible text, trimmed (may be empty). */
  label: string;
  /** Where it is on the screen. */
  box: Box;
  /** Where it was found. */
  source: 'dom' | 'ax' | 'screen';
  /** A link's resolved href, when it has one. */
  href?: string;
}

/** Which layer chose a step's action. */
export type ExplorerLayer = 'heuristic' | 'model' | 'unstick';

/** The unstick strategies, each recorded when used. */
export type UnstickStrategy = 'escape' | 'scroll' | 'click_elsewhere' | 'go_back' | 'reload';

/** One step of an exploration: what was done, why, and whether it made progress. */
export interface ExplorerStep {
  /** 1-based, the same number as the trace entry of the action. */
  step: number;
  /** The action performed (trace action name and params, snake_case). */
  action: ActionStep;
  layer: ExplorerLayer;
  /** The heuristic, pattern or unstick strategy that chose it (e.g. 'form.fill', 'game.platformer', 'unstick.reload'). */
  strategy: string;
  /** The target acted on, when there was one. */
  target?: Pick<Target, 'key' | 'kind' | 'label'>;
  /** Whether the screen or the DOM showed something new after it. */
  progress: boolean;
  /** The page URL after the step (null without CDP). */
  url: string | null;
  /** Perceptual hash of the frame after the step (hex). */
  frameHash: string;
  /** Milliseconds since the run started, when the step ended. */
  atMs: number;
}

/** A use of an unstick strategy. */
export interface UnstickEvent {
  step: number;
  strategy: UnstickStrategy;
  /** Why: e.g. 'no progress for 4 steps'. */
  reason: string;
}

/** A distinct state the explorer reached (a URL and a screen, up to the perceptual hash's tolerance). */
export interface StateVisit {
  key: string;
  url: string | null;
  frameHash: string;
  firstStep: number;
  visits: number;
  /** Screenshot of the state when first reached, relative to the run's output directory. */
  screenshot?: string;
}

/** Why an exploration ended. */
export type ExplorerEndReason = 'step_budget' | 'time_budget' | 'exhausted' | 'goal' | 'error' | 'cancelled';

/** What the loop knows at the end of a run: everything in qa-report.json except the findings. */
export interface ExplorerSummary {
  startUrl: string;
  seed: number;
  startedAt: string;
  durationMs: number;
  endReason: ExplorerEndReason;
  steps: ExplorerStep[];
  states: StateVisit[];
  coverage: {
    /** Interactive elements seen over the run, and how many of them were acted on. */
    seen: number;
    tried: number;
    targets: Array<Pick<Target, 'key' | 'kind' | 'label'> & { tried: boolean; firstSeenStep: number }>;
  };
  unstick: UnstickEvent[];
  model: { calls: number; ignored: number; costUsd: number; tokens: { input: number; output: number } };
}

/** Kinds of problem the explorer reports. */
export type FindingKind = 'console_error' | 'uncaught_exception' | 'request_failed' | 'http_error' | 'crash' | 'frozen' | 'blank_screen' | 'blocked_navigation';

/** One problem found, with its evidence. */
export interface Finding {
  kind: FindingKind;
  /** The step after which it was seen (0: while the page first loaded). */
  step: number;
  url: string | null;
  /** One line: what happened. */
  message: string;
  /** The console or network excerpt (stack, status line, failing URL...). */
  excerpt?: string;
  /** Screenshot at the time, relative to the run's output directory. */
  screenshot?: string;
  /** How many times the same problem was seen over the run (absent: once); repeats are not separate findings. */
  count?: number;
  /** The step of the last time it was seen, when it was seen again later. */
  lastStep?: number;
}

/** What observers are given. */
export interface ObserverContext {
  /** The browser's CDP URL, when the desktop has one. */
  cdpUrl: string | null;
  /** The run's output directory (execution.json's directory). */
  outputDir: string;
  /** Saves a PNG of the current screen under the output directory; resolves to its relative path. */
  screenshot(name: string): Promise<string>;
  /** The run's signal. */
  signal: AbortSignal;
}

/** Watches an exploration; the loop calls each hook in order and awaits it. */
export interface ExplorerObserver {
  /** Once the start page is up, before the first action. */
  start?(ctx: ObserverContext): Promise<void>;
  /** After every step, once its effects were waited for. */
  afterStep?(step: ExplorerStep, ctx: ObserverContext): Promise<void>;
  /** Findings seen since the last call (the loop stamps nothing: the observer sets `step`). */
  takeFindings?(): Finding[];
  /** At the end, whatever the reason. */
  finish?(summary: ExplorerSummary, ctx: ObserverContext): Promise<void>;
}
