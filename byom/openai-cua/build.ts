/**
 * Builder of OpenAICuaAgent for `vncua run` / `vncua eval --agent openai-cua`, from the environment
 * and the arguments after `--` (a flag wins over its environment variable):
 *
 * | Flag | Environment | Option |
 * | --- | --- | --- |
 * | | `OPENAI_API_KEY` (required; never a flag) | `apiKey` |
 * | `--base-url URL` | `OPENAI_BASE_URL` | `baseURL` (default: the SDK's, https://api.openai.com/v1) |
 * | `--model NAME` | `VNCUA_OPENAI_MODEL` | `model` (default `computer-use-preview`) |
 * | `--tool-form preview\|computer` | | `toolForm` (default: from the model name) |
 * | `--display WxH` | | `screenshotSize` (downscale screenshots) |
 * | `--ack-safety CODE[,CODE…]` | | `acknowledgeSafetyChecks` |
 * | `--timeout-ms N` | | `requestTimeoutMs` |
 * | `--budget-ms N` | | `budgetMs` |
 * | `--prices FILE` | `VNCUA_PRICES` | `prices` (JSON `{ "MODEL": { "input": N, "output": N } }`, USD per 1M tokens; byom/pricing.ts) |
 */
import type { AgentContext } from '../../harness/agent/index.ts';
import { adapterArgs } from '../build-args.ts';
import { OpenAICuaAgent, type OpenAICuaOptions } from './agent.ts';

/** The flags after `--` (each takes a value). */
export const OPENAI_CUA_FLAGS = ['model', 'base-url', 'tool-form', 'display', 'ack-safety', 'timeout-ms', 'budget-ms', 'prices'] as const;

/** The OpenAICuaAgent options for `ctx`, from `env` and `ctx.args` (exported for tests). */
export function openAICuaOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): OpenAICuaOptions {
  const a = adapterArgs('openai-cua', ctx.args, OPENAI_CUA_FLAGS, env);
  const apiKey = a.env('OPENAI_API_KEY')?.value;
  if (!apiKey) throw a.missing('API key', null, ['OPENAI_API_KEY'], 'keys are read from the environment only; any non-empty string for a server that needs none');
  const options: OpenAICuaOptions = { ...ctx.agentOptions, apiKey };
  const baseURL = a.url('base-url', 'OPENAI_BASE_URL');
  if (baseURL) options.baseURL = baseURL;
  const model = a.string('model', 'VNCUA_OPENAI_MODEL');
  if (model) options.model = model;
  const toolForm = a.oneOf(['preview', 'computer'], 'tool-form');
  if (toolForm) options.toolForm = toolForm;
  const display = a.size('display');
  if (display) options.screenshotSize = display;
  const ack = a.list('ack-safety');
  if (ack) options.acknowledgeSafetyChecks = ack;
  const timeout = a.positiveInt('timeout-ms');
  if (timeout) options.requestTimeoutMs = timeout;
  const budget = a.positiveInt('budget-ms');
  if (budget) options.budgetMs = budget;
  const prices = a.prices('prices', 'VNCUA_PRICES');
  if (prices) options.prices = prices;
  return options;
}

/** Build an OpenAICuaAgent from the CLI context, the environment and `ctx.args`. */
export function buildOpenAICuaAgent(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): OpenAICuaAgent {
  return new OpenAICuaAgent(openAICuaOptions(ctx, env));
}

/** The module's default export: the builder `vncua run --agent byom/openai-cua/build.ts` calls. */
export default function build(ctx: AgentContext): OpenAICuaAgent {
  return buildOpenAICuaAgent(ctx);
}
