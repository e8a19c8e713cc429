/** OpenAI computer use (Responses API, official `openai` SDK) as a vncua Agent. */
export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_OPENAI_CUA_MODEL,
  DEFAULT_REQUEST_TIMEOUT_MS,
  OpenAICuaAgent,
  type OpenAICuaOptions,
  type OpenAICuaOwnOptions,
  type SafetyCheck,
  type SafetyCheckPolicy,
  type ToolForm,
} from './agent.ts';
export { DEFAULT_WAIT_SECONDS, PIXELS_PER_NOTCH, mapComputerAction, mapKeys, type MappedAction } from './actions.ts';
export { coordinateMap, type CoordinateMap, type Size } from './coords.ts';
export { buildOpenAICuaAgent, openAICuaOptions } from './build.ts';
export { default } from './build.ts';
