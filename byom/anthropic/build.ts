/**
 * Builder of AnthropicCuaAgent for `vncua run` / `vncua eval --agent anthropic`, from the
 * environment and the arguments after `--` (a flag wins over its environment variable):
 *
 * | Flag | Environment | Option |
 * | --- | --- | --- |
 * | | `ANTHROPIC_API_KEY` (required; never a flag) | `apiKey` |
 * | `--base-url URL` | `ANTHROPIC_BASE_URL` | `baseURL` (default: the SDK's, https://api.anthropic.com) |
 * | `--model NAME` | `VNCUA_ANTHROPIC_MODEL` | `model` (default `claude-sonnet-4-6`) |
 * | `--tool-version computer_20251124\|computer_20250124` | | `toolVersion` (default: from the model name) |
 * | `--display WxH` | | `screenshotSize` (default: fit within 1280x800) |
 * | `--history N` | | `historyScreens` (screenshots kept, default 3) |
 * | `--max-tokens N` | | `maxTokens` (default 4096) |
 * | `--timeout-ms N` | | `requestTimeoutMs` |
 * | `--budget-ms N` | | `budgetMs` |
 * | `--prices FILE` | `VNCUA_PRICES` | `prices` (JSON `{ "MODEL": { "input": N, "output": N } }`, USD per 1M tokens; byom/pricing.ts) |
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { adapterArgs } from '../build-args.ts';
import { TOOL_VERSIONS } from './actions.ts';
import { AnthropicCuaAgent, type AnthropicCuaOptions } from './agent.ts';

/** The flags after `--` (each takes a value). */
export const ANTHROPIC_FLAGS = ['model', 'base-url', 'tool-version', 'display', 'history', 'max-tokens', 'timeout-ms', 'budget-ms', 'prices'] as const;

/** The AnthropicCuaAgent options for `ctx`, from `env` and `ctx.args` (exported for tests). */
export function anthropicOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): AnthropicCuaOptions {
  const a = adapterArgs('anthropic', ctx.args, ANTHROPIC_FLAGS, env);
  const apiKey = a.env('ANTHROPIC_API_KEY')?.value;
  if (!apiKey) throw a.missing('API key', null, ['ANTHROPIC_API_KEY'], 'keys are read from the environment only; any non-empty string for a server that needs none');
  const options: AnthropicCuaOptions = { ...ctx.agentOptions, apiKey };
  const baseURL = a.url('base-url', 'ANTHROPIC_BASE_URL');
  if (baseURL) options.baseURL = baseURL;
  const model = a.string('model', 'VNCUA_ANTHROPIC_MODEL');
  if (model) options.model = model;
  const version = a.oneOf(TOOL_VERSIONS, 'tool-version');
  if (version) options.toolVersion = version;
  const display = a.size('display');
  if (display) options.screenshotSize = display;
  const history = a.positiveInt('history');
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

/** Build an AnthropicCuaAgent from the CLI context, the environment (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, VNCUA_ANTHROPIC_MODEL) and `ctx.args`. */
export function buildAnthropicAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): AnthropicCuaAgent {
  return new AnthropicCuaAgent(anthropicOptions(ctx, env));
}

/** The module's default export: the builder `vncua run --agent byom/anthropic/build.ts` calls. */
export default function build(ctx: AgentContext): AnthropicCuaAgent {
  return buildAnthropicAgent(ctx);
}
