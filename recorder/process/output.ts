/**
 * What the post-processor writes into a run directory: `action_screenshots/NNNN_{before,after}.png`
 * and `action_screenshots.json` (shape fixed in the shared plan; read by the step report and the runner).
 * The JSON is written last and atomically, so its presence means the images are all there.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StaleReason } from '../replay/replayer.ts';

/** Directory of the images, beside execution.json. */
export const ACTION_SCREENSHOTS_DIR = 'action_screenshots';
/** The JSON index of the images. */
export const ACTION_SCREENSHOTS_JSON = 'action_screenshots.json';
/** The step report written from it. */
export const ACTION_SCREENSHOTS_HTML = 'action_screenshots.html';

/** A warning in the JSON. */
export interface ShotWarning {
  code: string;
  message: string;
}

/** One action with its before/after frames. */
export interface ActionShot {
  index: number;
  action: string;
  /** "human": a person did this during a takeover (the trace entry's actor); absent for the agent's actions. */
  actor?: 'human';
  params: Record<string, unknown>;
  started_at: number | null;
  ended_at: number | null;
  duration_ms: number | null;
  task_marked_complete: boolean | null;
  error: { code: string; message: string } | null;
  before: string | null;
  after: string | null;
  before_at: number | null;
  after_at: number | null;
  settled: boolean | null;
  /** True when the before image is older than before_at (null: no image). */
  before_stale: boolean | null;
  /** Why (Replayer's StaleReason: 'damage', 'undecodable', 'end_of_data'), or null when not stale. */
  before_stale_reason: StaleReason | null;
  /** The last instant whose screen the before image is known to show (= before_at unless stale). */
  before_shows_at: number | null;
  /** Same as before_stale for the after image (a stale after image is never `settled`). */
  after_stale: boolean | null;
  after_stale_reason: StaleReason | null;
  after_shows_at: number | null;
  width: number | null;
  height: number | null;
  /** The model calls recorded on this entry (meta.model_calls, harness/trace/model-calls.ts): count, tokens and cost (null when a call did not report them); absent when none. */
  model?: StepModelUsage;
}

/** A step's (or a run's) model calls: how many, their tokens and cost; a sum is null unless every call had it. */
export interface StepModelUsage {
  calls: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/** The run's first successful step and what its success check saw, with the frame of that moment. */
export interface SuccessShot {
  /** The entry index of the first step whose task_marked_complete is true. */
  index: number;
  /** When the check that saw it answered (epoch ms); null when the trace and result.json do not say (older runs, uitask). */
  at: number | null;
  /** immediate (right after the action), grace (while the screen settled) or final (after the run's tail); null when unknown. */
  phase: 'immediate' | 'grace' | 'final' | null;
  rule: 'text' | 'selector' | 'expression' | null;
  pattern: string | null;
  snippet: string | null;
  url: string | null;
  /** `action_screenshots/success.png`: the screen at `at`; null when `at` is unknown or outside the recording. */
  image: string | null;
}

/** The whole action_screenshots.json. */
export interface ActionScreenshotsFile {
  version: 1;
  source: 'vncua' | 'uitask';
  alignment: 'timestamps' | 'inferred';
  task: string | null;
  outcome: {
    status: string;
    steps: number;
    duration_ms: number;
    success: boolean | null;
    /** result.json's reason (why the agent stopped), when given. */
    reason?: string;
    /** result.json's error, when the run ended with one (a stop status's code too: AGENT_ERR_COST_CAP, MODEL_ERR_REFUSAL…). */
    error?: { code: string; message: string };
    /** result.json's model totals, when the run made model calls. */
    model?: StepModelUsage;
  } | null;
  width: number;
  height: number;
  settle_ms: number;
  /** The quiet window used to decide that the screen settled (ms). */
  quiet_ms: number;
  /** The trace file the actions come from (execution.json or partial_execution.json). */
  trace_file: string;
  warnings: ShotWarning[];
  /** The first successful step (null: no step was marked complete). */
  success: SuccessShot | null;
  actions: ActionShot[];
}

/** The frame at the first success, relative to the run directory. */
export const SUCCESS_IMAGE = `${ACTION_SCREENSHOTS_DIR}/success.png`;

/** `NNNN_before.png` / `NNNN_after.png`, relative to the run directory. */
export function imagePath(index: number, which: 'before' | 'after'): string {
  return `${ACTION_SCREENSHOTS_DIR}/${String(index).padStart(4, '0')}_${which}.png`;
}

/**
 * True when `runDir` already holds a complete output for a trace of `actions` entries read from `traceFile`:
 * the JSON parses, matches them, and every image it names exists.
 */
export async function isComplete(runDir: string, actions: number, traceFile: string): Promise<boolean> {
  let data: ActionScreenshotsFile;
  try {
    data = JSON.parse(await readFile(join(runDir, ACTION_SCREENSHOTS_JSON), 'utf8')) as ActionScreenshotsFile;
  } catch {
    return false;
  }
  if (data?.version !== 1 || !Array.isArray(data.actions) || data.actions.length !== actions || data.trace_file !== traceFile) return false;
  const files = [...data.actions.flatMap((a) => [a.before, a.after]), data.success?.image].filter((p): p is string => typeof p === 'string');
  const present = await Promise.all(files.map((f) => exists(join(runDir, f))));
  return present.every(Boolean);
}

/** True when `path` exists. */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
