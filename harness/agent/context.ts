/**
 * What `vncua run` gives an agent module whose default export is a builder function
 * (`export default (ctx: AgentContext) => new MyAgent({ ...ctx.agentOptions, ... })`).
 */
import type { Sentinel } from '../cdp/sentinel.ts';
import type { Agent } from './agent.ts';
import type { CostBudget } from './cost-budget.ts';
import type { RateGate } from './rate-gate.ts';
import type { RecorderFactory } from './recording.ts';

/** The context passed to an agent module's builder. */
export interface AgentContext {
  /** The task (--task), if given. */
  task: string | undefined;
  /** The run's output directory (--out, or runs/<timestamp>-<agent>/). */
  outputDir: string;
  /** The desktop's VNC endpoint. */
  vncUrl: string;
  /** The desktop's Chromium DevTools endpoint. */
  cdpUrl: string;
  /** The page the local desktop opened (--url); undefined with --vnc/--cdp. */
  url: string | undefined;
  /** --max-steps (default 50). */
  maxSteps: number;
  /** The script file (--script), if given. */
  script: string | undefined;
  /** The arguments after `--` on the command line, for the agent's own use. */
  args: string[];
  /**
   * The Agent options made from the above: `{ task, outputDir, vncUrl, cdpUrl }` (task left out when not given;
   * successCheck set by `vncua eval`; password when the desktop needs VNC Authentication; successGraceMs by
   * --success-grace-ms; live: false by --no-live; recorder: the recording proxy, so the run is recorded whichever
   * Agent class it builds; rateGate: the gate of model calls by --rate-limit, shared by every run of the suite, or
   * of every worker of a queue; maxCostUsd by --max-cost, costBudget by vncua eval --max-suite-cost; needsHuman by
   * --needs-human).
   */
  agentOptions: {
    task?: string;
    outputDir: string;
    vncUrl: string;
    cdpUrl: string;
    successCheck?: Sentinel;
    password?: string;
    successGraceMs?: number;
    live?: boolean;
    recorder?: RecorderFactory | null;
    /** The navigation guard's allow layers (--allowed-domains, a task's allowedDomains), the start page's origin added to each. */
    allowedDomains?: string[][];
    /** The navigation guard's blocked patterns (--blocked-domains and a task's, united). */
    blockedDomains?: string[];
    rateGate?: RateGate | null;
    /** --max-cost. */
    maxCostUsd?: number;
    /** The suite's cost cap (--max-suite-cost), shared by every run of the suite. */
    costBudget?: CostBudget | null;
    /** --needs-human. */
    needsHuman?: 'end' | 'ask';
  };
  /** The task's id (`vncua eval` only). */
  taskId?: string;
  /** Absolute path of the tasks file the task came from (`vncua eval` only; the replay agent finds references beside it). */
  taskFile?: string;
  /** The desktop's screen size (`vncua eval` only). */
  resolution?: { width: number; height: number };
}

/** A module's builder: returns the agent to run. */
export type AgentBuilder = (ctx: AgentContext) => Agent | Promise<Agent>;
