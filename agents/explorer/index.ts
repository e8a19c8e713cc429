/** The explorer (issue 18): an app explorer that needs no model. See agent.ts. */
export { ExplorerAgent, GAME_CANVAS_COVER, explorerSeed } from './agent.ts';
export { EXPLORER_DEFAULTS, type ExplorerAgentOptions } from './options.ts';
export { EXPLORER_FLAGS, buildExplorer, explorerFlagOptions } from './build.ts';
export type * from './types.ts';
