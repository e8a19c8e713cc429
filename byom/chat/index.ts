/**
 * `ChatAgent` for OpenAI-compatible chat-completions endpoints with image input, its parts, and
 * the builder `vncua run|eval --agent chat` uses (default export).
 *
 * The builder reads the environment and the arguments after `--` (a flag wins over its variable):
 *
 * | Flag | Environment | Option |
 * | --- | --- | --- |
 * | `--model NAME` | `VNCUA_CHAT_MODEL` (one of the two required) | `model` |
 * | `--base-url URL` | `VNCUA_CHAT_BASE_URL` | `baseURL` (default: the SDK's, OpenAI's) |
 * | | `VNCUA_CHAT_API_KEY`, else `OPENAI_API_KEY` (never a flag) | `apiKey` (default "EMPTY", for local servers) |
 * | `--coordinates absolute\|normalized1000\|resized` | `VNCUA_CHAT_COORDINATES` | `coordinates` (default absolute) |
 * | `--image-size WxH` | `VNCUA_CHAT_IMAGE_SIZE` | `screenshotSize` (for resized / normalized1000) |
 * | `--history N` | `VNCUA_CHAT_HISTORY` | `historyScreens` (default 3) |
 * | `--max-tokens N` | | `maxTokens` |
 * | `--timeout-ms N` | | `requestTimeoutMs` |
 * | `--budget-ms N` | | `budgetMs` |
 * | `--prices FILE` | `VNCUA_PRICES` | `prices` (JSON `{ "MODEL": { "input": N, "output": N } }`, USD per 1M tokens; byom/pricing.ts) |
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { adapterArgs } from '../build-args.ts';
import { ChatAgent, type ChatAgentOptions } from './agent.ts';
import { COORDINATE_SPACES } from './coordinates.ts';

export { ChatAgent, CHAT_DEFAULTS, reaskText, type ChatAgentOptions, type ChatOptions } from './agent.ts';
export { CHAT_ACTIONS, chatActionSchema, validateChatAction, type ChatAction } from './actions.ts';
export { COORDINATE_SPACES, coordinateExtent, toScreen, type CoordinateFrame, type CoordinateSpace, type Size } from './coordinates.ts';
export { extractJsonObject } from './extract.ts';
export { defaultSystemPrompt, type PromptInputs } from './prompt.ts';

/** The flags after `--` (each takes a value). */
export const CHAT_FLAGS = ['model', 'base-url', 'coordinates', 'image-size', 'history', 'max-tokens', 'timeout-ms', 'budget-ms', 'prices'] as const;

/** The ChatAgent options for `ctx`, from `env` and `ctx.args` (see the module comment). */
export function chatOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): ChatAgentOptions {
  const a = adapterArgs('chat', ctx.args, CHAT_FLAGS, env);
  const model = a.string('model', 'VNCUA_CHAT_MODEL');
  if (!model) throw a.missing('model', 'model', ['VNCUA_CHAT_MODEL'], 'the model name the server serves, e.g. Qwen/Qwen2.5-VL-7B-Instruct');
  const options: ChatAgentOptions = { ...ctx.agentOptions, model };
  const baseURL = a.url('base-url', 'VNCUA_CHAT_BASE_URL');
  if (baseURL) options.baseURL = baseURL;
  const key = a.env('VNCUA_CHAT_API_KEY', 'OPENAI_API_KEY')?.value;
  if (key) options.apiKey = key;
  const space = a.oneOf(COORDINATE_SPACES, 'coordinates', 'VNCUA_CHAT_COORDINATES');
  if (space) options.coordinates = space;
  const size = a.size('image-size', 'VNCUA_CHAT_IMAGE_SIZE');
  if (size) options.screenshotSize = size;
  if (size && (space ?? 'absolute') === 'absolute') {
    throw a.bad(
      a.get('image-size', 'VNCUA_CHAT_IMAGE_SIZE')!,
      'scales the screenshots, which absolute coordinates (the default) do not allow: add --coordinates resized (or normalized1000)',
    );
  }
  if (space === 'resized' && !size)
    throw a.bad(a.get('coordinates', 'VNCUA_CHAT_COORDINATES')!, 'resized needs the image size: add --image-size WxH (or set VNCUA_CHAT_IMAGE_SIZE)');
  const history = a.positiveInt('history', 'VNCUA_CHAT_HISTORY');
  if (history) options.historyScreens = history;
  const maxTokens = a.positiveInt('max-tokens');
  if (maxTokens) options.maxTokens = maxTokens;
  const timeout = a.positiveInt('timeout-ms');
  if (timeout) options.requestTimeoutMs = timeout;
  const budget = a.positiveInt('budget-ms');
  if (budget) options.budgetMs = budget;
  const prices = a.prices('prices', 'VNCUA_PRICES');
  if (prices) options.prices = prices;
  return options;
}

/** Build a ChatAgent from the run's context, the environment and `ctx.args` (see the module comment). */
export function buildChatAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): ChatAgent {
  return new ChatAgent(chatOptions(ctx, env));
}

/** `vncua run|eval --agent byom/chat/index.ts`: a ChatAgent from the environment and the arguments after `--`. */
export default function build(ctx: AgentContext): ChatAgent {
  return buildChatAgent(ctx, process.env);
}
