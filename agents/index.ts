/** Agents that ship with vncua (scripted, replay, random, explorer), and the builders `vncua run|eval --agent NAME` knows them by. */
import type { AgentBuilder } from '../harness/agent/index.ts';
import { VncuaError } from '../harness/errors.ts';
import buildExplorerAgent from './explorer/build.ts';
import buildRandomAgent from './random.ts';
import buildReplayAgent from './replay.ts';
import { ScriptedAgent, loadScript } from './scripted.ts';

export { ReplayAgent, loadReference, referencePath, type ReplayAgentOptions } from './replay.ts';
export { RandomAgent, type RandomAgentOptions } from './random.ts';
export { ExplorerAgent, FindingsMonitor, QaExplorerAgent, writeQaReport, type ExplorerAgentOptions, type QaExplorerOptions, type QaReport } from './explorer/index.ts';
export { ScriptedAgent, loadScript, parseScript, type ScriptIssue, type ScriptStep, type ScriptedAgentOptions } from './scripted.ts';

/** Builder of the built-in `scripted` agent: plays the --script file. */
export const scripted: AgentBuilder = async (ctx) => {
  if (!ctx.script) {
    throw new VncuaError('CLI_ERR_BAD_ARGS', 'The scripted agent needs --script FILE (a JSON list of { "action", "params" } entries, e.g. an execution.json).', {
      details: { argument: '--script' },
    });
  }
  return new ScriptedAgent({ ...ctx.agentOptions, script: await loadScript(ctx.script) });
};

/** Built-in agents by the name `vncua run --agent NAME` accepts. */
export const BUILTIN_AGENTS: Readonly<Record<string, AgentBuilder>> = { scripted, replay: buildReplayAgent, random: buildRandomAgent, explorer: buildExplorerAgent };
