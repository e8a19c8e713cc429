/**
 * `ChatAgent` for OpenAI-compatible chat-completions endpoints with image input, its parts, and
 * the builder `vncua run|eval --agent chat` uses (default export).
 *
 * Environment of the builder: VNCUA_CHAT_MODEL (required), VNCUA_CHAT_BASE_URL (default: OpenAI's),
 * VNCUA_CHAT_API_KEY (else OPENAI_API_KEY, else "EMPTY" for local servers), VNCUA_CHAT_COORDINATES
 * (absolute | normalized1000 | resized), VNCUA_CHAT_IMAGE_SIZE ("WxH", for resized/normalized1000),
 * VNCUA_CHAT_HISTORY (screenshots kept, default 3).
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { badOption } from '../../harness/agent/options.ts';
import { ChatAgent, type ChatAgentOptions } from './agent.ts';
import { COORDINATE_SPACES, type CoordinateSpace } from './coordinates.ts';

export { ChatAgent, CHAT_DEFAULTS, reaskText, type ChatAgentOptions, type ChatOptions } from './agent.ts';
export { CHAT_ACTIONS, chatActionSchema, validateChatAction, type ChatAction } from './actions.ts';
export { COORDINATE_SPACES, coordinateExtent, toScreen, type CoordinateFrame, type CoordinateSpace, type Size } from './coordinates.ts';
export { extractJsonObject } from './extract.ts';
export { defaultSystemPrompt, type PromptInputs } from './prompt.ts';

/** Build a ChatAgent from the run's context and the environment (see the module comment). */
export function buildChatAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): ChatAgent {
  const model = env.VNCUA_CHAT_MODEL;
  if (!model) throw badOption('model', undefined, 'set VNCUA_CHAT_MODEL to the model name the server serves');
  const options: ChatAgentOptions = { ...ctx.agentOptions, model };
  if (env.VNCUA_CHAT_BASE_URL) options.baseURL = env.VNCUA_CHAT_BASE_URL;
  const key = env.VNCUA_CHAT_API_KEY || env.OPENAI_API_KEY;
  if (key) options.apiKey = key;
  const space = env.VNCUA_CHAT_COORDINATES;
  if (space) {
    if (!(COORDINATE_SPACES as readonly string[]).includes(space)) throw badOption('coordinates', space, `VNCUA_CHAT_COORDINATES must be one of ${COORDINATE_SPACES.join(', ')}`);
    options.coordinates = space as CoordinateSpace;
  }
  const size = env.VNCUA_CHAT_IMAGE_SIZE;
  if (size) {
    const m = /^(\d+)x(\d+)$/.exec(size);
    if (!m) throw badOption('imageSize', size, 'VNCUA_CHAT_IMAGE_SIZE must be WxH, e.g. 1024x640');
    options.imageSize = { width: Number(m[1]), height: Number(m[2]) };
  }
  const history = env.VNCUA_CHAT_HISTORY;
  if (history) options.historyScreens = Number(history);
  return new ChatAgent(options);
}

/** `vncua run|eval --agent byom/chat/index.ts`: a ChatAgent from the environment. */
export default function build(ctx: AgentContext): ChatAgent {
  return buildChatAgent(ctx, process.env);
}
