/**
 * How `vncua run|eval --agent explorer` builds the explorer: the start page from the context (--url, a task's url),
 * the seed from the task id in a suite, its own settings from the arguments after `--` (parseExplorerArgs), and the
 * Layer-2 planner handed in by the CLI (cli/explorer.ts makes one over byom/ when --model is given).
 *
 * | Flag (after `--`) | Option |
 * | --- | --- |
 * | `--seed N\|TEXT` | `seed` (default: hashed from the URL) |
 * | `--steps N` | `maxSteps` (default: the run's --max-steps less one, for the finish entry) |
 * | `--budget-ms N` | `budgetMs` |
 * | `--stuck-after N` | `stuckAfter` |
 * | `--model-every N` | `modelEvery` |
 * | `--max-model-calls N` | `maxModelCalls` |
 * | `--max-model-cost USD` | `maxModelCostUsd` |
 */
import type { AgentContext, NextActionPlanner } from '../../harness/agent/index.ts';
import { VncuaError } from '../../harness/errors.ts';
import type { ExplorerAgent } from './agent.ts';
import type { ExplorerAgentOptions } from './options.ts';
import { QaExplorerAgent } from './report/qa-agent.ts';

/** The explorer's own flags after `--` (each takes a value). */
export const EXPLORER_FLAGS = ['seed', 'steps', 'budget-ms', 'stuck-after', 'model-every', 'max-model-calls', 'max-model-cost'] as const;

const bad = (flag: string, value: string, why: string) =>
  new VncuaError('CLI_ERR_BAD_ARGS', `explorer agent: --${flag} ${why}, got ${JSON.stringify(value)}.`, { details: { argument: `--${flag}`, value } });

/** The explorer options `values` (flag → value, flags of EXPLORER_FLAGS) give; CLI_ERR_BAD_ARGS on a bad value. */
export function explorerFlagOptions(values: Readonly<Partial<Record<(typeof EXPLORER_FLAGS)[number], string>>>): Partial<ExplorerAgentOptions> {
  const o: Partial<ExplorerAgentOptions> = {};
  const int = (flag: (typeof EXPLORER_FLAGS)[number], min: number): number | undefined => {
    const v = values[flag];
    if (v === undefined) return undefined;
    if (!/^\s*\d+\s*$/.test(v) || Number(v) < min) throw bad(flag, v, `must be a whole number >= ${min}`);
    return Number(v);
  };
  if (values.seed !== undefined) o.seed = /^\d+$/.test(values.seed) ? Number(values.seed) : values.seed;
  const steps = int('steps', 1);
  if (steps !== undefined) o.maxSteps = steps;
  const budget = int('budget-ms', 1);
  if (budget !== undefined) o.budgetMs = budget;
  const stuck = int('stuck-after', 1);
  if (stuck !== undefined) o.stuckAfter = stuck;
  const every = int('model-every', 1);
  if (every !== undefined) o.modelEvery = every;
  const calls = int('max-model-calls', 0);
  if (calls !== undefined) o.maxModelCalls = calls;
  const cost = values['max-model-cost'];
  if (cost !== undefined) {
    const n = Number(cost);
    if (cost.trim() === '' || !Number.isFinite(n) || n < 0) throw bad('max-model-cost', cost, 'must be a number of USD >= 0');
    o.maxModelCostUsd = n;
  }
  return o;
}

/** Build the explorer for a run: `extra` (flag options, the planner) over the context's defaults; with its findings monitor and QA report (report/qa-agent.ts). */
export function buildExplorer(ctx: AgentContext, extra: Partial<ExplorerAgentOptions> & { model?: NextActionPlanner | null } = {}): ExplorerAgent {
  const url = ctx.url;
  return new QaExplorerAgent({
    ...ctx.agentOptions,
    ...(url !== undefined ? { url } : {}),
    seed: ctx.taskId ?? url ?? ctx.task ?? 0,
    maxSteps: Math.max(1, ctx.maxSteps - 1),
    ...extra,
  });
}

/** Builder of `--agent explorer` without CLI flags (agents/index.ts BUILTIN_AGENTS); the CLI's own reads `-- --seed …` and `--model`. */
export default function buildExplorerAgent(ctx: AgentContext): ExplorerAgent {
  return buildExplorer(ctx);
}
