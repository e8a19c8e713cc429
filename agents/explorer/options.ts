/** The explorer's own options (zod), checked before the Agent's, and their defaults. */
import { z } from 'zod';
import type { AgentOptions, NextActionPlanner } from '../../harness/agent/index.ts';
import { badOption } from '../../harness/agent/options.ts';
import type { ExplorerObserver } from './types.ts';

/** Options of ExplorerAgent: the Agent's options plus the exploration's. */
export interface ExplorerAgentOptions extends AgentOptions {
  /** The start page (for the default seed and the default allowed host). */
  url?: string;
  /** Seed of every choice: a number, or a string hashed to one. Default: hashed from `url` (else the task, else 0). */
  seed?: number | string;
  /** Actions at most before the run ends with endReason 'step_budget' (default 200). */
  maxSteps?: number;
  /** Milliseconds of exploring at most (default 120 000): then endReason 'time_budget'. */
  budgetMs?: number;
  /** Steps without progress before the explorer unsticks (or asks the model) (default 4). */
  stuckAfter?: number;
  /** Watchers of the run (findings monitors); their hooks are called in order and awaited. */
  observers?: ExplorerObserver[];
  /** Layer 2: the planner asked for the next action when the heuristics stop making progress (none by default). */
  model?: NextActionPlanner | null;
  /** Steps at least between two model calls (default 5). */
  modelEvery?: number;
  /** Model calls at most (default 10). */
  maxModelCalls?: number;
  /** USD the model calls may cost at most (default: no cap); once reached, the model is not asked again. */
  maxModelCostUsd?: number;
  /** How long one model call may take (default 60 000 ms). */
  modelTimeoutMs?: number;
  /** End the run (endReason 'goal') once the page shows the success sentinel (default true). */
  stopOnGoal?: boolean;
  /** Save a screenshot of each new state as screens/state-NNN.png (default true). */
  stateScreenshots?: boolean;
  /** Where one-line notices go (default: stderr). */
  log?: (line: string) => void;
}

/** Defaults of the explorer's options. */
export const EXPLORER_DEFAULTS = {
  maxSteps: 200,
  budgetMs: 120_000,
  stuckAfter: 4,
  modelEvery: 5,
  maxModelCalls: 10,
  modelTimeoutMs: 60_000,
} as const;

const whole = (min: number) => z.number().int().min(min);

/** Schema of the explorer's own options. */
export const explorerOptionsSchema = z.strictObject({
  url: z.string().min(1).optional(),
  seed: z.union([z.number().refine(Number.isFinite, 'must be finite'), z.string()]).optional(),
  maxSteps: whole(1).optional(),
  budgetMs: whole(1).optional(),
  stuckAfter: whole(1).optional(),
  observers: z.array(z.custom<ExplorerObserver>((v) => typeof v === 'object' && v !== null, 'must be an object with start/afterStep/takeFindings/finish hooks')).optional(),
  model: z
    .custom<NextActionPlanner>(
      (v) => typeof v === 'object' && v !== null && typeof (v as { next?: unknown }).next === 'function',
      'must be a planner ({ next(input, { signal }) })',
    )
    .nullable()
    .optional(),
  modelEvery: whole(1).optional(),
  maxModelCalls: whole(0).optional(),
  maxModelCostUsd: z.number().min(0).optional(),
  modelTimeoutMs: whole(1).optional(),
  stopOnGoal: z.boolean().optional(),
  stateScreenshots: z.boolean().optional(),
  log: z.custom<(line: string) => void>((v) => typeof v === 'function', 'must be a function (line) => void').optional(),
});

/** The explorer's keys of ExplorerAgentOptions. */
export const EXPLORER_KEYS = Object.keys(explorerOptionsSchema.shape) as Array<keyof z.infer<typeof explorerOptionsSchema>>;

/** Split `options` into the explorer's (checked: AGENT_ERR_BAD_OPTIONS naming the field) and the Agent's. */
export function splitExplorerOptions(options: ExplorerAgentOptions): { explorer: z.infer<typeof explorerOptionsSchema>; agent: AgentOptions } {
  const own: Record<string, unknown> = {};
  const agent: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options ?? {})) ((EXPLORER_KEYS as string[]).includes(k) ? own : agent)[k] = v;
  const parsed = explorerOptionsSchema.safeParse(own);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'options';
    throw badOption(field, own[issue.path[0] as string], issue.message);
  }
  return { explorer: parsed.data, agent: agent as unknown as AgentOptions };
}
