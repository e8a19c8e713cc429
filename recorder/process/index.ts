/** Post-processing runs: per-action before/after screenshots, action_screenshots.json, the step report and the video. */
export { processRun, DEFAULT_SETTLE_MS } from './run.ts';
export type { ProcessRunOptions, ProcessRunResult } from './run.ts';
export { processRoot, processRuns } from './root.ts';
export type { ProcessRootOptions, ProcessRootResult, RunJob, RunOutcome } from './root.ts';
export { findRuns } from './find.ts';
export { QUIET_MS, settleAfter } from './settle.ts';
export { ACTION_SCREENSHOTS_DIR, ACTION_SCREENSHOTS_JSON, ACTION_SCREENSHOTS_HTML, imagePath } from './output.ts';
export type { ActionScreenshotsFile, ActionShot, ShotWarning } from './output.ts';
