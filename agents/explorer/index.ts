/** The explorer (issue 18): an app explorer that needs no model. See agent.ts. */
export { ExplorerAgent, GAME_CANVAS_COVER, explorerSeed } from './agent.ts';
export { EXPLORER_DEFAULTS, type ExplorerAgentOptions } from './options.ts';
export { EXPLORER_FLAGS, buildExplorer, explorerFlagOptions } from './build.ts';
export type * from './types.ts';
export { FindingsMonitor, type FindingsMonitorOptions, isBlankFrame } from './findings/index.ts';
export { QaExplorerAgent, type QaExplorerOptions } from './report/qa-agent.ts';
export { QA_REPORT_FILES, qaReportSchema, writeQaReport, type QaReport } from './report/index.ts';
