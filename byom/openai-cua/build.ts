/**
 * Builder of OpenAICuaAgent for `vncua run` / `vncua eval --agent openai-cua`, from the environment
 * and the arguments after `--`:
 *
 * | Environment | Option |
 * | --- | --- |
 * | `OPENAI_API_KEY` (required) | `apiKey` |
 * | `OPENAI_BASE_URL` | `baseURL` (default: the SDK's, https://api.openai.com/v1) |
 * | `VNCUA_OPENAI_MODEL` | `model` (default `computer-use-preview`) |
 *
 * Arguments after `--`: `--model NAME`, `--tool-form preview|computer`, `--display WxH`
 * (downscale screenshots), `--ack-safety CODE[,CODE…]` (safety check codes to acknowledge),
 * `--budget-ms N`. Arguments win over the environment.
 */
import { parseArgs } from 'node:util';
import type { AgentContext } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import { OpenAICuaAgent, type OpenAICuaOptions, type ToolForm } from './agent.ts';

function badArg(argument: string, value: unknown, why: string): VncuaError {
  return new VncuaError('CLI_ERR_BAD_ARGS', `openai-cua agent: ${argument} ${why}.`, { details: { argument, value } });
}

/** The OpenAICuaAgent options for `ctx`, from `env` and `ctx.args` (exported for tests). */
export function openAICuaOptions(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): OpenAICuaOptions {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: ctx.args ?? [],
      options: { model: { type: 'string' }, 'tool-form': { type: 'string' }, display: { type: 'string' }, 'ack-safety': { type: 'string' }, 'budget-ms': { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }) as { values: Record<string, string | undefined> });
  } catch (e) {
    throw new VncuaError('CLI_ERR_BAD_ARGS', `openai-cua agent: ${(e as Error).message} (it takes --model, --tool-form, --display, --ack-safety, --budget-ms).`, { cause: e });
  }
  const options: OpenAICuaOptions = { ...ctx.agentOptions, apiKey: env.OPENAI_API_KEY ?? '' };
  const baseURL = env.OPENAI_BASE_URL;
  if (baseURL) options.baseURL = baseURL;
  const model = values.model ?? env.VNCUA_OPENAI_MODEL;
  if (model) options.model = model;
  const form = values['tool-form'];
  if (form !== undefined) {
    if (form !== 'preview' && form !== 'computer') throw badArg('--tool-form', form, 'must be preview or computer');
    options.toolForm = form as ToolForm;
  }
  if (values.display !== undefined) {
    const m = /^(\d+)x(\d+)$/.exec(values.display);
    if (!m) throw badArg('--display', values.display, 'must be WxH, e.g. 1024x640');
    options.displaySize = { width: Number(m[1]), height: Number(m[2]) };
  }
  if (values['ack-safety'] !== undefined) options.acknowledgeSafetyChecks = values['ack-safety'].split(',').map((s) => s.trim()).filter(Boolean);
  if (values['budget-ms'] !== undefined) {
    const n = Number(values['budget-ms']);
    if (!Number.isFinite(n) || n <= 0) throw badArg('--budget-ms', values['budget-ms'], 'must be a positive number of ms');
    options.budgetMs = n;
  }
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
