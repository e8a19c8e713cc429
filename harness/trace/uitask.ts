/**
 * The Python uitask harness's `execution.json`, read and written exactly as uitask's code writes it.
 *
 * uitask (`computer_use/act.py`, `record_action`) binds each primitive call's arguments by name
 * (`inspect.signature(...).bind`, `apply_defaults()`, `self` dropped), passes them through
 * `uitask.utils.to_jsonable` (enums → value, dataclasses → every field in declaration order,
 * tuples → lists) and appends `{ "action": <method name>, "params": ..., "task_marked_complete":
 * true | false | null }`, with the same shape when the call raised (no error field). So params are
 * (field order as written):
 *   mouse_move       { "position": { "x", "y" } }
 *   mouse_click      { "action": { "button": "left"|"right", "click_type": "single"|"double"|"triple", "position": { "x", "y" } | null } }
 *   mouse_drag       { "action": { "button": "left"|"right", "start": { "x", "y" }, "end": { "x", "y" } } }
 *   mouse_scroll     { "action": { "position": { "x", "y" }, "direction": "down"|"up"|"left"|"right", "repeat": int } }
 *   press_keys       { "keys": [string, ...] }  (every key of every element is held down together)
 *   type_text        { "text": string }
 *   page_navigation  { "direction": "forward"|"back" }
 *   wait             { "duration": number }
 *   finish           { "params": {...} | null }
 *
 * `normalizeUitaskEntry` turns one such entry into vncua's flat params (a `TraceEntry`, so every
 * reader downstream works unchanged); `toUitaskEntry` does the reverse for `vncua export-trace`.
 */
import { z } from 'zod';
import { VncuaError } from '../errors.ts';
import { ACTION_NAMES, ACTION_PARAMS, actionNameSchema, type ActionName, type TraceEntry } from './schema.ts';

/** One entry of uitask's execution.json. */
export interface UitaskEntry {
  action: ActionName;
  params: Record<string, unknown>;
  task_marked_complete: boolean | null;
}

/** What is wrong with one entry: the dotted field inside it ('' for the entry) and the problem. */
export interface UitaskIssue {
  field: string;
  problem: string;
}

/** uitask's `Position` dataclass (it asserts both coordinates are >= 0). */
const position = z.strictObject({ x: z.number().min(0), y: z.number().min(0) });
/** uitask's `MouseButton` enum: only left and right. */
const button = z.enum(['left', 'right']);

/** uitask's params per action, strict: to_jsonable writes every field and nothing else. */
const UITASK_PARAMS = {
  mouse_move: z.strictObject({ position }),
  mouse_click: z.strictObject({
    action: z.strictObject({ button, click_type: z.enum(['single', 'double', 'triple']), position: position.nullable() }),
  }),
  mouse_drag: z.strictObject({ action: z.strictObject({ button, start: position, end: position }) }),
  mouse_scroll: z.strictObject({
    action: z.strictObject({ position, direction: z.enum(['down', 'up', 'left', 'right']), repeat: z.number().int().min(0) }),
  }),
  press_keys: z.strictObject({ keys: z.array(z.string()) }),
  type_text: z.strictObject({ text: z.string() }),
  page_navigation: z.strictObject({ direction: z.enum(['forward', 'back']) }),
  wait: z.strictObject({ duration: z.number() }),
  finish: z.strictObject({ params: z.record(z.string(), z.unknown()).nullable() }),
} as const satisfies Record<ActionName, z.ZodType>;

/** How uitask writes each action's params, for error messages. */
export const UITASK_PARAMS_SHAPE: Record<ActionName, string> = {
  mouse_move: '{"position": {"x", "y"}}',
  mouse_click: '{"action": {"button", "click_type", "position": {"x", "y"} | null}}',
  mouse_drag: '{"action": {"button", "start": {"x", "y"}, "end": {"x", "y"}}}',
  mouse_scroll: '{"action": {"position": {"x", "y"}, "direction", "repeat"}}',
  press_keys: '{"keys": [string, ...]}',
  type_text: '{"text": string}',
  page_navigation: '{"direction": "forward" | "back"}',
  wait: '{"duration": seconds}',
  finish: '{"params": {...} | null}',
};

/** Top-level keys uitask writes; any other key of an entry is kept under `meta.uitask`. */
const UITASK_KEYS = new Set(['action', 'params', 'task_marked_complete']);

/** True when `entry` carries a shape only uitask writes (nested `action`, `duration`, a list of keys, finish's `params.params`). */
export function hasUitaskShape(entry: unknown): boolean {
  if (!isRecord(entry) || !isRecord(entry.params)) return false;
  const p = entry.params;
  switch (entry.action) {
    case 'mouse_click':
    case 'mouse_drag':
    case 'mouse_scroll':
      return isRecord(p.action);
    case 'wait':
      return 'duration' in p;
    case 'press_keys':
      return Array.isArray(p.keys);
    case 'finish':
      return Object.keys(p).length === 1 && (p.params === null || isRecord(p.params));
    default:
      return false;
  }
}

/**
 * The key names uitask's `press_keys` turns `keys` into (all held down together), following its
 * parsing: empty elements and "none" are skipped; an element with `+` (longer than one character
 * once stripped) splits on `+`, each part stripped; an element with a space (not " " itself) splits
 * on single spaces; a run of digits is one key per digit; "-" followed by digits is "-" then one key
 * per digit; anything else is one key. Every name is lower-cased, as uitask looks it up.
 */
export function uitaskKeyNames(keys: readonly string[]): string[] {
  const out: string[] = [];
  const digits = (s: string) => /^\p{Nd}+$/u.test(s);
  for (const key of keys) {
    if (!key) continue;
    if (key.includes('+') && key.trim().length > 1) out.push(...key.split('+').map((p) => p.trim().toLowerCase()));
    else if (key !== ' ' && key.includes(' ')) out.push(...key.split(' ').map((p) => p.toLowerCase()));
    else if (digits(key)) out.push(...key);
    else if (key.startsWith('-') && digits(key.slice(1))) out.push('-', ...key.slice(1));
    else if (key.toLowerCase() === 'none') continue;
    else out.push(key.toLowerCase());
  }
  return out;
}

/**
 * uitask's `keys` as one vncua chord string: the key names of `uitaskKeyNames` joined with `+`
 * (the `+` and space keys by name), e.g. ["ctrl+a"] and ["ctrl", "a"] → "ctrl+a", ["Return"] →
 * "return", ["12"] → "1+2". Keys that name no key ([], ["none"]) give "", which vncua's pressKeys
 * rejects when replayed.
 */
export function uitaskKeysToChord(keys: readonly string[]): string {
  return uitaskKeyNames(keys)
    .map((k) => (k === '+' ? 'plus' : k === ' ' ? 'space' : k))
    .join('+');
}

/** vncua's flat params for uitask's params of `action` (already validated). */
// biome-ignore lint/suspicious/noExplicitAny: uitask's JSON, shapes checked field by field
function flatParams(action: ActionName, p: Record<string, any>): Record<string, unknown> {
  switch (action) {
    case 'mouse_click': {
      const a = p.action;
      return { ...(a.position === null ? {} : { position: a.position }), button: a.button, click_type: a.click_type };
    }
    case 'mouse_drag':
      return { start: p.action.start, end: p.action.end, button: p.action.button };
    case 'mouse_scroll':
      return { position: p.action.position, direction: p.action.direction, repeat: p.action.repeat };
    case 'press_keys':
      return { keys: uitaskKeysToChord(p.keys) };
    case 'wait':
      return { seconds: p.duration };
    case 'finish':
      return p.params === null ? {} : p.params;
    default:
      return p;
  }
}

/**
 * One uitask entry as a vncua `TraceEntry` (flat params, `index` = `i`, no timing), or the first
 * problem found. Params must be exactly uitask's; `task_marked_complete` may be missing (null);
 * other top-level keys are kept under `meta.uitask`.
 */
export function normalizeUitaskEntry(raw: unknown, i: number): { entry: TraceEntry } | { issue: UitaskIssue } {
  if (!isRecord(raw)) return { issue: { field: '', problem: 'expected an object { "action", "params", "task_marked_complete" }' } };
  const name = actionNameSchema.safeParse(raw.action);
  if (!name.success) return { issue: { field: 'action', problem: `unknown action ${JSON.stringify(raw.action) ?? 'undefined'}; expected one of ${ACTION_NAMES.join(', ')}` } };
  const action = name.data;
  const params = UITASK_PARAMS[action].safeParse(raw.params);
  if (!params.success) {
    const issue = params.error.issues[0]!;
    const path: PropertyKey[] = ['params', ...issue.path];
    if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
    const problem = issue.code === 'unrecognized_keys' ? `unknown key for ${action}` : issue.message;
    return {
      issue: {
        field: dotted(path),
        problem: `${problem}; uitask writes ${action} params as ${UITASK_PARAMS_SHAPE[action]}`,
      },
    };
  }
  const tmc = raw.task_marked_complete ?? null;
  if (typeof tmc !== 'boolean' && tmc !== null) return { issue: { field: 'task_marked_complete', problem: 'expected true, false or null' } };
  const extra = Object.fromEntries(Object.entries(raw).filter(([k]) => !UITASK_KEYS.has(k)));
  const entry = { index: i, action, params: flatParams(action, params.data as Record<string, unknown>), task_marked_complete: tmc } as TraceEntry;
  if (Object.keys(extra).length > 0) entry.meta = { uitask: extra };
  return { entry };
}

/** uitask's params for a vncua entry's flat params, or the problem when uitask cannot express them. */
function uitaskParams(e: TraceEntry): { params: Record<string, unknown> } | { issue: UitaskIssue } {
  // biome-ignore lint/suspicious/noExplicitAny: uitask's JSON, shapes checked field by field
  const p = e.params as Record<string, any>;
  if (e.action !== 'finish') {
    // uitask binds arguments by name: an argument its method does not take could not have been recorded.
    const extra = Object.keys(p).find((k) => !(k in (ACTION_PARAMS[e.action] as z.ZodObject).shape));
    if (extra !== undefined) return { issue: { field: `params.${extra}`, problem: `uitask's ${e.action} takes no argument "${extra}"` } };
  }
  let params: Record<string, unknown>;
  switch (e.action) {
    case 'mouse_click':
      params = { action: { button: p.button, click_type: p.click_type, position: p.position ?? null } };
      break;
    case 'mouse_drag':
      params = { action: { button: p.button, start: p.start, end: p.end } };
      break;
    case 'mouse_scroll':
      params = { action: { position: p.position, direction: p.direction, repeat: p.repeat } };
      break;
    case 'press_keys':
      params = { keys: [p.keys] };
      break;
    case 'wait':
      params = { duration: p.seconds };
      break;
    case 'finish':
      params = { params: Object.keys(p).length === 0 ? null : p };
      break;
    default:
      params = { ...p };
  }
  const r = UITASK_PARAMS[e.action].safeParse(params);
  if (r.success) return { params };
  const issue = r.error.issues[0]!;
  // Name the field as it is in the vncua entry (no nested `action`, `seconds` for `duration`, `keys` a string).
  let path: PropertyKey[] = issue.path.filter((s, k) => !(k === 0 && s === 'action' && e.action !== 'finish'));
  if (e.action === 'wait') path = ['seconds'];
  if (e.action === 'press_keys') path = ['keys'];
  const field = dotted(['params', ...path]);
  const value = path.reduce<unknown>((v, k) => (isRecord(v) ? v[String(k)] : undefined), p);
  const why =
    (e.action === 'mouse_click' || e.action === 'mouse_drag') && path[0] === 'button' && value === 'middle'
      ? "uitask's MouseButton has only left and right"
      : `${issue.message} (uitask writes ${e.action} params as ${UITASK_PARAMS_SHAPE[e.action]})`;
  return { issue: { field, problem: why } };
}

/**
 * A vncua entry in uitask's exact shape: `{ action, params, task_marked_complete }` with uitask's
 * params (our `keys` string becomes the one-element list `[keys]`, `seconds` becomes `duration`,
 * the pointer actions' params nest under `action`, finish's under `params`, `{}` as null), or the
 * problem when uitask cannot express the entry (a middle-button click or drag, or params a failed
 * attempt recorded that do not fit uitask's argument types). `error`, timing, `index` and `meta` are
 * not written: uitask records a call that raised with the same shape and no error field.
 */
export function toUitaskEntry(e: TraceEntry): { entry: UitaskEntry } | { issue: UitaskIssue } {
  const r = uitaskParams(e);
  if ('issue' in r) return r;
  return { entry: { action: e.action, params: r.params, task_marked_complete: e.task_marked_complete ?? null } };
}

/**
 * JSON text as Python's `json.dump(value, f)` writes it with its defaults (what uitask does):
 * one line, `", "` and `": "` separators, every character outside printable ASCII escaped as
 * `\uXXXX` (ensure_ascii), no trailing newline. Numbers are written as JavaScript writes them.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : value > 0 ? 'Infinity' : value < 0 ? '-Infinity' : 'NaN';
  if (typeof value === 'string') return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object') {
    const fields = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${fields.map(([k, v]) => `${pythonJson(k)}: ${pythonJson(v)}`).join(', ')}}`;
  }
  return pythonJson(String(value));
}

/** A zod path as a dotted field name (`params.action.position.x`, `params.keys[1]`). */
function dotted(path: readonly PropertyKey[]): string {
  return path
    .map((k) => (typeof k === 'number' ? `[${k}]` : String(k)))
    .join('.')
    .replace(/\.\[/g, '[');
}

// biome-ignore lint/suspicious/noExplicitAny: uitask's JSON, shapes checked field by field
function isRecord(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An entry left out of an export, and why. */
export interface LeftOutEntry extends UitaskIssue {
  index: number;
  action: ActionName;
  /** True for a failed attempt (uitask could not have recorded it: its arguments fail uitask's types before the call). */
  failed: boolean;
  /** True for a person's action (actor "human"), left out unless `includeHuman`. */
  human: boolean;
}

/** What `exportUitaskTrace` made. */
export interface UitaskExport {
  /** The entries, in uitask's shape. */
  entries: UitaskEntry[];
  /** The file's text, as uitask's `json.dump` writes it. */
  text: string;
  /** Entries left out (a person's actions unless `includeHuman`; failed attempts uitask could not have recorded; with `skipUnsupported`, also successful ones it cannot express). */
  leftOut: LeftOutEntry[];
  /** How many failed attempts were written (like uitask, without their error). */
  failedWritten: number;
}

/**
 * A vncua trace in uitask's execution.json shape (see toUitaskEntry). A person's action (actor "human",
 * from a takeover) is left out unless `includeHuman`: uitask has no actor, and a trace for training or
 * scoring an agent should hold the agent's steps only; kept, it is written like any entry (without the
 * actor). A failed attempt whose params uitask cannot express is left out (uitask validates arguments
 * before the recorded call, so its trace would not hold it); a successful entry it cannot express (a
 * middle-button click or drag) is TRACE_ERR_EXPORT naming the entry and field, unless `skipUnsupported`
 * leaves it out too.
 */
export function exportUitaskTrace(entries: readonly TraceEntry[], options: { skipUnsupported?: boolean; includeHuman?: boolean; file?: string } = {}): UitaskExport {
  const out: UitaskEntry[] = [];
  const leftOut: LeftOutEntry[] = [];
  let failedWritten = 0;
  for (const e of entries) {
    const failed = 'error' in e && e.error !== undefined;
    if (e.actor === 'human' && !options.includeHuman) {
      leftOut.push({
        index: e.index,
        action: e.action,
        failed,
        human: true,
        field: 'actor',
        problem: 'a person\'s action (actor "human"), not the agent\'s; keep it with --include-human',
      });
      continue;
    }
    const r = toUitaskEntry(e);
    if ('entry' in r) {
      out.push(r.entry);
      if (failed) failedWritten++;
      continue;
    }
    if (!failed && !options.skipUnsupported) {
      const file = options.file ?? '<memory>';
      throw new VncuaError(
        'TRACE_ERR_EXPORT',
        `${file} (entry ${e.index}, field "${r.issue.field}"): uitask cannot express this ${e.action}: ${r.issue.problem}. Leave such entries out with --skip-unsupported.`,
        { details: { path: file, index: e.index, field: r.issue.field, problem: r.issue.problem } },
      );
    }
    leftOut.push({ index: e.index, action: e.action, failed, human: e.actor === 'human', ...r.issue });
  }
  return { entries: out, text: pythonJson(out), leftOut, failedWritten };
}
