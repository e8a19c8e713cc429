/** Anthropic computer use (Messages API, official `@anthropic-ai/sdk`) as a vncua Agent. */
export {
  AnthropicCuaAgent,
  BETA_FLAGS,
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_HISTORY_SCREENS,
  DEFAULT_MAX_FAILED_TURNS,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_TOKENS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SYSTEM_PROMPT,
  defaultToolVersion,
  type AnthropicCuaOptions,
  type AnthropicCuaOwnOptions,
} from './agent.ts';
export { COMPUTER_ACTIONS, ComputerActionMapper, DEFAULT_WAIT_SECONDS, MAX_DURATION_SECONDS, TOOL_VERSIONS, type ComputerInput, type Mapped, type ToolVersion } from './actions.ts';
export { DisplayMap, MAX_DISPLAY_HEIGHT, MAX_DISPLAY_PIXELS, MAX_DISPLAY_WIDTH, fitDisplay, type Size } from './display.ts';
export { XDOTOOL_NAMES, translateKeys } from './keys.ts';
export { anthropicOptions, buildAnthropicAgent } from './build.ts';
export { default } from './build.ts';
