/**
 * `ScriptedAgent`: plays a JSON list of actions, one per act() call, in the trace format
 * (`[{ "action": "mouse_click", "params": { ... } }, ...]`), so a vncua trace is a valid script.
 * act() returns true after the last entry, or on `finish`.
 *
 * The script is checked when the agent is built: each entry must be an object with a known
 * `action` and `params` matching that action exactly (harness/trace/schema.ts ACTION_PARAMS:
 * unknown params keys are rejected, so a misspelt one is reported; `params` may be left out for
 * actions without required params). Other entry keys (index, timings, task_marked_complete...)
 * are ignored. A uitask execution.json is a script too: a script without vncua's `index` /
 * `started_at` in which some entry has a shape only uitask writes (nested `params.action`,
 * `params.duration`, a list of `keys`, finish's `params.params`) is read entry by entry as uitask's
 * (harness/trace/uitask.ts) and played with the same flat params a uitask trace is replayed with.
 * Every bad entry is reported at once in one SCRIPT_ERR_INVALID whose `details.issues` holds one
 * `{ index, field, problem }` per bad entry.
 */
import { readFile } from 'node:fs/promises';
import { Agent, applyAction, type ActionStep, type AgentOptions } from '../harness/agent/index.ts';
import { VncuaError } from '../harness/errors.ts';
import { detectSource, issueField } from '../harness/trace/parse.ts';
import { ACTION_NAMES, ACTION_PARAMS, actionNameSchema, type ActionName } from '../harness/trace/schema.ts';
import { hasUitaskShape, normalizeUitaskEntry } from '../harness/trace/uitask.ts';

/** One validated script entry. */
export interface ScriptStep extends ActionStep {
  action: ActionName;
  params: Record<string, unknown>;
}

/** One problem of one script entry. */
export interface ScriptIssue {
  index: number;
  /** Dotted field path inside the entry, e.g. `params.position.x`; '' for the entry itself. */
  field: string;
  problem: string;
}

/** Options of ScriptedAgent: the Agent's options plus the script. */
export interface ScriptedAgentOptions extends AgentOptions {
  /** The list of actions (already parsed JSON; validated by the constructor). */
  script: unknown;
}

/** SCRIPT_ERR_INVALID listing `issues` (one per bad entry). */
function invalidScript(source: string, issues: ScriptIssue[]): VncuaError {
  const lines = issues.map((i) => `  entry ${i.index}${i.field ? `, field "${i.field}"` : ''}: ${i.problem}`);
  return new VncuaError(
    'SCRIPT_ERR_INVALID',
    `${source}: ${issues.length} bad ${issues.length === 1 ? 'entry' : 'entries'}; each must be { "action": one of ${ACTION_NAMES.join(', ')}, "params": {...} } as in execution.json:\n${lines.join('\n')}`,
    { details: { source, issues } },
  );
}

/** The first problem of one entry, or undefined if it is valid. */
function entryIssue(raw: unknown, index: number): ScriptIssue | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { index, field: '', problem: 'expected an object { action, params }' };
  const e = raw as Record<string, unknown>;
  const name = actionNameSchema.safeParse(e.action);
  if (!name.success) return { index, field: 'action', problem: `unknown action ${JSON.stringify(e.action) ?? 'undefined'}; expected one of ${ACTION_NAMES.join(', ')}` };
  const params = ACTION_PARAMS[name.data].safeParse(e.params ?? {});
  if (!params.success) {
    const issue = params.error.issues[0]!;
    return { index, field: issueField(issue, ['params']), problem: issue.code === 'unrecognized_keys' ? `unknown key for ${name.data}` : issue.message };
  }
  return undefined;
}

/** The step of a uitask entry (vncua's flat params), or its issue. */
function uitaskStep(raw: unknown, index: number): ScriptStep | ScriptIssue {
  const r = normalizeUitaskEntry(raw, index);
  if ('issue' in r) return { index, ...r.issue };
  return { action: r.entry.action, params: r.entry.params as Record<string, unknown> };
}

/** Validate a script (parsed JSON); throws SCRIPT_ERR_INVALID with one issue per bad entry. `source` names it in the message. */
export function parseScript(data: unknown, source = 'script'): ScriptStep[] {
  if (!Array.isArray(data)) throw invalidScript(source, [{ index: -1, field: '', problem: 'the script must be a JSON array of entries' }]);
  const issues: ScriptIssue[] = [];
  const steps: ScriptStep[] = [];
  if (detectSource(data) === 'uitask' && data.some(hasUitaskShape)) {
    data.forEach((raw: unknown, i) => {
      const r = uitaskStep(raw, i);
      if ('problem' in r) issues.push(r);
      else steps.push(r);
    });
    if (issues.length > 0) throw invalidScript(source, issues);
    return steps;
  }
  data.forEach((raw: unknown, i) => {
    const issue = entryIssue(raw, i);
    if (issue) issues.push(issue);
    else {
      const e = raw as { action: ActionName; params?: Record<string, unknown> };
      steps.push({ action: e.action, params: e.params ?? {} });
    }
  });
  if (issues.length > 0) throw invalidScript(source, issues);
  return steps;
}

/** Read and validate a script file (JSON); SCRIPT_ERR_INVALID if it cannot be read, parsed or validated. */
export async function loadScript(path: string): Promise<ScriptStep[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new VncuaError('SCRIPT_ERR_INVALID', `Could not read the script ${path}: ${(cause as Error).message}.`, { cause, details: { source: path, issues: [] } });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw new VncuaError('SCRIPT_ERR_INVALID', `The script ${path} is not valid JSON: ${(cause as Error).message}.`, { cause, details: { source: path, issues: [] } });
  }
  return parseScript(data, path);
}

/** An agent that plays a fixed list of actions, one per act() call. */
export class ScriptedAgent extends Agent {
  /** The validated script. */
  readonly steps: readonly ScriptStep[];
  #next = 0;

  /** Validates the script (SCRIPT_ERR_INVALID) and the Agent options (AGENT_ERR_BAD_OPTIONS). */
  constructor(options: ScriptedAgentOptions) {
    const { script, ...rest } = options;
    const steps = parseScript(script);
    super(rest);
    this.steps = Object.freeze(steps);
  }

  override async act(): Promise<boolean> {
    const i = this.#next++;
    const step = this.steps[i];
    if (step === undefined) return true;
    await applyAction(this, step, i);
    return step.action === 'finish' || this.#next >= this.steps.length;
  }
}
