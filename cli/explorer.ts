/**
 * `vncua run|eval --agent explorer`: the explorer (agents/explorer) with its settings from the arguments after `--`
 * and, when `--model` is given, a vision model as its Layer 2 (byom/chat/planner.ts, any OpenAI-compatible endpoint):
 *
 * `vncua run --agent explorer --url URL -- --seed 7 --budget-ms 60000 --model Qwen/Qwen2.5-VL-7B-Instruct --base-url http://127.0.0.1:8000/v1`
 *
 * Flags: the explorer's (agents/explorer/build.ts: --seed, --steps, --budget-ms, --stuck-after, --model-every,
 * --max-model-calls, --max-model-cost) and the model's: `--model NAME` (or VNCUA_EXPLORER_MODEL), `--base-url URL`
 * (or VNCUA_EXPLORER_BASE_URL), `--prices FILE` (or VNCUA_PRICES), `--max-tokens N`, `--timeout-ms N`; the API key
 * from VNCUA_CHAT_API_KEY, else OPENAI_API_KEY (never a flag).
 */
import { EXPLORER_FLAGS, buildExplorer, explorerFlagOptions } from '../agents/explorer/build.ts';
import type { ExplorerAgent } from '../agents/explorer/agent.ts';
import type { AgentContext } from '../harness/agent/index.ts';
import { adapterArgs } from '../byom/build-args.ts';
import { ChatPlanner } from '../byom/chat/planner.ts';

/** The model's flags after `--`. */
export const EXPLORER_MODEL_FLAGS = ['model', 'base-url', 'prices', 'max-tokens', 'timeout-ms'] as const;

/** Build the explorer from the run's context, `env` and `ctx.args` (see the file comment). */
export function buildExplorerFromArgs(ctx: AgentContext, env: NodeJS.ProcessEnv = process.env): ExplorerAgent {
  const a = adapterArgs('explorer', ctx.args, [...EXPLORER_FLAGS, ...EXPLORER_MODEL_FLAGS], env);
  const own = explorerFlagOptions(a.values);
  const model = a.string('model', 'VNCUA_EXPLORER_MODEL');
  if (!model) {
    for (const flag of ['base-url', 'prices', 'max-tokens', 'timeout-ms'] as const) {
      if (a.values[flag] !== undefined) throw a.bad({ value: a.values[flag]!, from: `--${flag}` }, "configures the explorer's model: give --model NAME too");
    }
    return buildExplorer(ctx, own);
  }
  const baseURL = a.url('base-url', 'VNCUA_EXPLORER_BASE_URL');
  const apiKey = a.env('VNCUA_CHAT_API_KEY', 'OPENAI_API_KEY')?.value;
  const prices = a.prices('prices', 'VNCUA_PRICES');
  const maxTokens = a.positiveInt('max-tokens');
  const timeout = a.positiveInt('timeout-ms');
  const planner = new ChatPlanner({
    model,
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(prices ? { prices } : {}),
    ...(maxTokens ? { maxTokens } : {}),
    ...(timeout ? { requestTimeoutMs: timeout } : {}),
  });
  return buildExplorer(ctx, { ...own, model: planner });
}

/** `vncua run|eval --agent explorer`. */
export default function build(ctx: AgentContext): ExplorerAgent {
  return buildExplorerFromArgs(ctx, process.env);
}
