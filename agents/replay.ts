/**
 * `ReplayAgent`: replays a reference trace (an execution.json-style array of `{ action, params }`),
 * one entry per act() call, through the same `applyAction` as the scripted agent and `reenact()`.
 * Before each input entry (not wait or finish) it looks at the screen as an agent would: before the first one, until
 * the page is painted (Agent.waitForPaintedScreen) and quiet; after an input entry, until the screen changed and
 * went quiet (Agent.waitForInputEffects, bounded: an action that changes nothing costs ~1 s); else until quiet. After
 * the last input entry it waits for its effects too, before finishing (or a wait entry). The run ends when the trace ends: on its `finish` entry, or, if the trace has none, with a
 * `finish` the agent adds after the last entry (in the same act() call).
 *
 * Traces are validated with the scripted agent's parser (`parseScript`, SCRIPT_ERR_INVALID with one
 * issue per bad entry). A reference that does not exist is AGENT_ERR_NO_REFERENCE.
 *
 * `vncua eval --agent replay` builds it with the default export: the reference of task `<id>` from
 * the tasks file `<dir>/tasks.json` is `<dir>/references/<id>.json` (or the --script file, if given).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Agent, applyAction, type AgentContext, type AgentOptions } from '../harness/agent/index.ts';
import { VncuaError } from '../harness/errors.ts';
import { parseScript, type ScriptStep } from './scripted.ts';

/** Options of ReplayAgent: the Agent's options plus the trace, as a file (`trace`) or as entries (`steps`). */
export interface ReplayAgentOptions extends AgentOptions {
  /** Path of the reference trace (JSON array of `{ action, params }`; other entry keys are ignored). */
  trace?: string;
  /** The entries themselves (parsed JSON; validated by the constructor). */
  steps?: unknown;
}

/** What the agent adds to a trace that does not end with `finish`. */
export const REPLAY_END_PARAMS = Object.freeze({ reason: 'end of the reference trace' });

/** Task ids name reference files: letters, digits, '.', '_', '-', not starting with '.' (no path separators). */
const SAFE_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** AGENT_ERR_NO_REFERENCE for `path` (or for no path at all). */
function noReference(message: string, path: string | null): VncuaError {
  return new VncuaError('AGENT_ERR_NO_REFERENCE', message, { details: { path } });
}

/** Read and validate a reference trace: AGENT_ERR_NO_REFERENCE if the file does not exist, SCRIPT_ERR_INVALID if it is unreadable or bad. */
export function loadReference(path: string): ScriptStep[] {
  if (!existsSync(path)) {
    throw noReference(`No reference trace at ${path}; write one (a JSON array of { "action", "params" } entries ending with "finish"), or pass --script FILE.`, path);
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (cause) {
    throw new VncuaError('SCRIPT_ERR_INVALID', `The reference trace ${path} could not be read as JSON: ${(cause as Error).message}.`, {
      cause,
      details: { source: path, issues: [] },
    });
  }
  return parseScript(data, path);
}

/** Where the replay agent finds the reference of a task: `<dirname(taskFile)>/references/<taskId>.json`. */
export function referencePath(taskFile: string, taskId: string): string {
  if (!SAFE_ID.test(taskId)) {
    throw noReference(`Task id ${JSON.stringify(taskId)} cannot name a reference file (use letters, digits, ".", "_" and "-").`, null);
  }
  return join(dirname(taskFile), 'references', `${taskId}.json`);
}

/** An agent that replays a reference trace, one entry per act() call, and finishes when it ends. */
export class ReplayAgent extends Agent {
  /** The validated entries. */
  readonly steps: readonly ScriptStep[];
  #next = 0;
  #sentInput = false;

  /** Loads and validates the trace (AGENT_ERR_NO_REFERENCE, SCRIPT_ERR_INVALID) and the Agent options (AGENT_ERR_BAD_OPTIONS). */
  constructor(options: ReplayAgentOptions) {
    const { trace, steps, ...rest } = options;
    if ((trace === undefined) === (steps === undefined)) {
      throw new VncuaError('AGENT_ERR_BAD_OPTIONS', 'ReplayAgent needs exactly one of the options "trace" (a file path) and "steps" (the entries).', {
        details: { field: trace === undefined ? 'trace' : 'steps' },
      });
    }
    if (trace !== undefined && (typeof trace !== 'string' || trace === '')) {
      throw new VncuaError('AGENT_ERR_BAD_OPTIONS', 'ReplayAgent option "trace" must be the path of a JSON file.', { details: { field: 'trace', value: trace } });
    }
    const parsed = trace !== undefined ? loadReference(trace) : parseScript(steps, 'steps');
    super(rest);
    this.steps = Object.freeze(parsed);
  }

  override async act(): Promise<boolean> {
    const i = this.#next++;
    const step = this.steps[i];
    // Look before input, as a model-driven agent does: a menu that is still opening or a popup that is
    // still closing would swallow an input sent at once (a native <select> popup did, under load).
    const previous = this.steps[i - 1];
    if (step && isInput(step)) {
      if (!this.#sentInput) {
        // The first input: the page must be on screen (a loaded page may not be painted yet on a busy machine).
        await this.waitForPaintedScreen();
        await this.waitForQuietScreen();
      } else if (previous && isInput(previous)) {
        // The previous step's effects: on a busy machine they can take longer to show than a quiet window.
        await this.waitForInputEffects();
      } else await this.waitForQuietScreen();
      this.#sentInput = true;
    } else if (previous && isInput(previous)) {
      // Before declaring the task done (finish, or the end of the trace) or waiting: the last input's effects, as
      // an agent looks before it says it is done; the success check after finish sees the page that answered.
      await this.waitForInputEffects();
    }
    if (step === undefined) {
      await this.finish({ ...REPLAY_END_PARAMS });
      return true;
    }
    await applyAction(this, step, i);
    if (step.action === 'finish') return true;
    if (i === this.steps.length - 1) {
      if (isInput(step)) await this.waitForInputEffects();
      await this.finish({ ...REPLAY_END_PARAMS });
      return true;
    }
    return false;
  }
}

/** Entries that send input (not wait or finish). */
function isInput(step: ScriptStep): boolean {
  return step.action !== 'wait' && step.action !== 'finish';
}

/**
 * Builder for `vncua eval --agent replay` / `vncua run --agent replay`: replays `ctx.script` if given,
 * else the task's reference beside its tasks file. AGENT_ERR_NO_REFERENCE when there is neither.
 */
export default function buildReplayAgent(ctx: AgentContext): ReplayAgent {
  let path: string;
  if (ctx.script) path = ctx.script;
  else if (ctx.taskFile && ctx.taskId) path = referencePath(ctx.taskFile, ctx.taskId);
  else {
    throw noReference('The replay agent needs a reference trace: run it through `vncua eval` (task id and tasks file), or give --script FILE.', null);
  }
  return new ReplayAgent({ ...ctx.agentOptions, trace: path });
}
