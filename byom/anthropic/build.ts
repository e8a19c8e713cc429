/**
 * Builder of AnthropicCuaAgent for `vncua run` / `vncua eval --agent anthropic`, from the
 * environment and the arguments after `--`:
 *
 * | Environment | Option |
 * | --- | --- |
 * | `ANTHROPIC_API_KEY` (required) | `apiKey` |
 * | `ANTHROPIC_BASE_URL` | `baseURL` (default: the SDK's, https://api.anthropic.com) |
 * | `VNCUA_ANTHROPIC_MODEL` | `model` (default `claude-sonnet-4-6`) |
 *
 * Arguments after `--`: `--model NAME`, `--tool-version computer_20251124|computer_20250124`,
 * `--display WxH` (screenshot size sent; default: fit within 1280x800), `--history N` (screenshots
 * kept), `--max-tokens N`, `--budget-ms N`. Arguments win over the environment.
 */
import { parseArgs } from 'node:util';
import type { AgentContext } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { TOOL_VERSIONS, type ToolVersion } from './actions.ts';
import { AnthropicCuaAgent, type AnthropicCuaOptions } from './agent.ts';

const ARGS = ['model', 'tool-version', 'display', 'history', 'max-tokens', 'budget-ms'] as const;

function badArg(argument: string, value: unknown, why: string): VncuaError {
  return new VncuaError('CLI_ERR_BAD_ARGS', `anthropic agent: ${argument} ${why}.`, { details: { argument, value } });
}

function positiveInt(argument: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw badArg(argument, v, 'must be a positive whole number');
  return n;
}

/** The AnthropicCuaAgent options for `ctx`, from `env` and `ctx.args` (exported for tests). */
export function anthropicOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): AnthropicCuaOptions {
  let values: Partial<Record<(typeof ARGS)[number], string>>;
  try {
    ({ values } = parseArgs({
      args: ctx.args ?? [],
      options: Object.fromEntries(ARGS.map((a) => [a, { type: 'string' }])) as Record<(typeof ARGS)[number], { type: 'string' }>,
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    throw new VncuaError('CLI_ERR_BAD_ARGS', `anthropic agent: ${(e as Error).message} (it takes ${ARGS.map((a) => `--${a}`).join(', ')}).`, { cause: e });
  }
  const options: AnthropicCuaOptions = { ...ctx.agentOptions, apiKey: env.ANTHROPIC_API_KEY ?? '' };
  if (env.ANTHROPIC_BASE_URL) options.baseURL = env.ANTHROPIC_BASE_URL;
  const model = values.model ?? env.VNCUA_ANTHROPIC_MODEL;
  if (model) options.model = model;
  const version = values['tool-version'];
  if (version !== undefined) {
    if (!(TOOL_VERSIONS as readonly string[]).includes(version)) throw badArg('--tool-version', version, `must be ${TOOL_VERSIONS.join(' or ')}`);
    options.toolVersion = version as ToolVersion;
  }
  if (values.display !== undefined) {
    const m = /^(\d+)x(\d+)$/.exec(values.display);
    if (!m) throw badArg('--display', values.display, 'must be WxH, e.g. 1280x720');
    options.screenshotSize = { width: Number(m[1]), height: Number(m[2]) };
  }
  if (values.history !== undefined) options.historyScreens = positiveInt('--history', values.history);
  if (values['max-tokens'] !== undefined) options.maxTokens = positiveInt('--max-tokens', values['max-tokens']);
  if (values['budget-ms'] !== undefined) options.budgetMs = positiveInt('--budget-ms', values['budget-ms']);
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
