/**
 * Task files: a URL list (eval/url-list.ts: one URL a line, for the explorer), our own format (a JSON array of `{ id, goal, url, success, maxSteps?, resolution?, hint?, group?,
 * allowedDomains?, blockedDomains?, judges? }`,
 * validated with zod) and the Python uitask harness's (a JSON array of `{ web_name, id, ques, ux_hint, web }`),
 * detected automatically and normalized to `EvalTask`.
 *
 * - Our `url` may be relative (e.g. `pages/click.html`): it resolves against `baseUrl` (`--base-url`, or the
 *   static server the CLI starts over the task file's directory).
 * - uitask's `web` URLs keep their path; `baseUrl` replaces their origin (and prefixes its own path), so a
 *   local copy of the sites serves them. Their success check is the uitask sentinel `>code#1</` (its act.py: `">code#1</" in page.content()`).
 * - A bad file throws ONE `EVAL_ERR_BAD_TASKS` whose `details.issues` holds one `{ index, field, problem }`
 *   per bad entry (index -1 for the file itself), and whose message lists them all.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Sentinel } from '../harness/cdp/sentinel.ts';
import { DEFAULT_SENTINEL } from '../harness/cdp/sentinel.ts';
import { parseScreenSize, type ScreenSize } from '../harness/desktop/size.ts';
import { VncuaError } from '../harness/errors.ts';
import { parseDomainPattern } from '../harness/guard/patterns.ts';
import { issueField } from '../harness/trace/parse.ts';
import { checkTaskSecrets } from '../harness/secrets/run-secrets.ts';
import { judgeListSchema, judgeSpecProblem, type JudgeSpec } from './judges/spec.ts';
import { looksLikeUrlList, parseUrlList } from './url-list.ts';

/** A task as the runner runs it (both formats normalize to this). */
export interface EvalTask {
  /** Unique within the file; also the task's directory name. */
  id: string;
  /** What the agent is asked to do. */
  goal: string;
  /** The page the desktop opens: absolute once resolved; relative until then (see resolveTaskUrls). */
  url: string;
  /** The success check run after each action. */
  success: Exclude<Sentinel, 'default'>;
  /** Overrides the runner's maxSteps for this task. */
  maxSteps?: number;
  /** Pins the task to this screen size (it then runs at this size only). */
  resolution?: ScreenSize;
  /** A hint for the agent (uitask's ux_hint); kept in task.json. */
  hint?: string;
  /** Task group for aggregation (given, uitask's web_name, or the id without its trailing -N / --N). */
  group: string;
  /** The judges of this task's runs (eval/judges/spec.ts), instead of the suite's (--judge); the sentinel's verdict is always kept beside them. */
  judges?: JudgeSpec[];
  /** The navigation guard's allow list for this task: it narrows --allowed-domains (a URL must pass both). */
  allowedDomains?: string[];
  /** Hosts blocked for this task, besides --blocked-domains. */
  blockedDomains?: string[];
  /** Per-domain auth bindings (harness/secrets/auth-bindings.ts): each value named by an …Env field, never given. */
  auth?: Array<Record<string, unknown> & { domain: string; type: string }>;
  /** Secrets the agent types with {{secret:NAME}}: name → { env: VARIABLE } (never a value). */
  secrets?: Record<string, { env: string }>;
}

/** Which format a task file was in. */
export type TaskFileFormat = 'vncua' | 'uitask' | 'urls';

/** One problem of one task entry. */
export interface TaskIssue {
  /** Entry index in the file; -1 for the file itself (unreadable, not JSON, not an array). */
  index: number;
  /** Dotted field path inside the entry (e.g. `success.selector`); '' for the entry itself. */
  field: string;
  problem: string;
}

/** A loaded task file. */
export interface TaskFile {
  /** Absolute path of the file. */
  file: string;
  format: TaskFileFormat;
  tasks: EvalTask[];
}

/** Task ids become directory names: letters, digits, '.', '_', '-' (not starting with '.'). */
export const TASK_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

const taskId = z.string().regex(TASK_ID_PATTERN, 'must be 1-200 letters, digits, ".", "_" or "-", not starting with "." (it names the task\'s directory)');
const nonEmpty = z.string().min(1, 'must be a non-empty string');

const successSchema = z.union([
  z.strictObject({ sentinel: nonEmpty }),
  z.strictObject({ selector: nonEmpty, visible: z.boolean().optional() }),
  z.strictObject({ expression: nonEmpty }),
]);

/** Schema of one task in our format (unknown keys are rejected, so a misspelt field is reported). */
export const taskSchema = z.strictObject({
  id: taskId,
  goal: nonEmpty,
  url: nonEmpty,
  success: successSchema,
  maxSteps: z.number().int().min(1).optional(),
  resolution: z
    .string()
    .regex(/^\d{1,5}x\d{1,5}$/, 'must be WxH, e.g. 1280x800')
    .optional(),
  hint: z.string().optional(),
  group: nonEmpty.optional(),
  judges: judgeListSchema.optional(),
  allowedDomains: z.array(z.string()).optional(),
  blockedDomains: z.array(z.string()).optional(),
  // Checked by checkTaskSecrets (harness/secrets), for codes naming the binding or the entry.
  auth: z.array(z.looseObject({ domain: z.string(), type: z.string() })).optional(),
  secrets: z.record(z.string(), z.unknown()).optional(),
});

/** Schema of one uitask task (extra keys are allowed: uitask files carry their own). */
export const uitaskTaskSchema = z.looseObject({
  web_name: nonEmpty,
  id: z.union([z.string(), z.number().int().min(0).transform(String)]).pipe(taskId),
  ques: nonEmpty,
  ux_hint: z.string().nullable().optional(),
  web: z.string().url('must be an absolute URL'),
});

const OUR_KEYS = ['goal', 'url', 'success'];
const UITASK_KEYS = ['web_name', 'ques', 'ux_hint', 'web'];

/** The task group of an id: the id without its trailing `--N` / `-N` number (`combo-box-tasks--1` -> `combo-box-tasks`). */
export function taskGroup(id: string): string {
  const g = id.replace(/-{1,2}\d+$/, '');
  return g.length > 0 ? g : id;
}

/** True when `url` has no scheme (it resolves against a base URL). */
export function isRelativeUrl(url: string): boolean {
  return !/^[a-z][a-z0-9+.-]*:/i.test(url);
}

/** Which format an array of entries is in: uitask when more entries carry uitask keys than ours. */
export function detectTaskFormat(data: unknown[]): TaskFileFormat {
  let ours = 0;
  let theirs = 0;
  for (const e of data) {
    if (typeof e !== 'object' || e === null) continue;
    if (OUR_KEYS.some((k) => k in e)) ours++;
    if (UITASK_KEYS.some((k) => k in e)) theirs++;
  }
  return theirs > ours ? 'uitask' : 'vncua';
}

/** EVAL_ERR_BAD_TASKS listing every issue. */
function badTasks(source: string, issues: TaskIssue[]): VncuaError {
  const lines = issues.map((i) => `  ${i.index < 0 ? 'file' : `entry ${i.index}`}${i.field ? `, field "${i.field}"` : ''}: ${i.problem}`);
  return new VncuaError(
    'EVAL_ERR_BAD_TASKS',
    `${source}: ${issues.length} bad ${issues.length === 1 ? 'entry' : 'entries'}. A task file is a JSON array of { "id", "goal", "url", "success": { "sentinel" | "selector" | "expression" } } (optional maxSteps, resolution, hint, group, allowedDomains, blockedDomains, judges), or uitask's [{ "web_name", "id", "ques", "ux_hint", "web" }]:\n${lines.join('\n')}`,
    { details: { source, issues } },
  );
}

/** The first issue of one entry against `schema`, or the parsed value. */
function check<T>(schema: z.ZodType<T>, raw: unknown, index: number): { ok: T } | { issue: TaskIssue } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { issue: { index, field: '', problem: 'expected an object' } };
  const r = schema.safeParse(raw);
  if (r.success) return { ok: r.data };
  const issue = r.error.issues[0]!;
  const field = issueField(issue);
  let problem = issue.message;
  // A bad judge: name its own field ("judges.1.regex"), not the union's.
  const judges = (raw as { judges?: unknown }).judges;
  if (issue.path[0] === 'judges' && typeof issue.path[1] === 'number' && Array.isArray(judges)) {
    const p = judgeSpecProblem(judges[issue.path[1]]);
    if (p) return { issue: { index, field: `judges.${issue.path[1]}${p.field ? `.${p.field}` : ''}`, problem: p.problem } };
  }
  if (issue.code === 'unrecognized_keys') problem = 'unknown field';
  else if (issue.code === 'invalid_union' && field === 'success') problem = 'expected exactly one of { "sentinel": "..." }, { "selector": "..." } or { "expression": "..." }';
  else if ((issue.code === 'invalid_type' || issue.code === 'invalid_union') && valueAt(raw, issue.path) === undefined) problem = 'missing';
  return { issue: { index, field, problem } };
}

/** The value at a zod issue path inside `raw` (undefined when absent). */
function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = raw;
  for (const k of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

function fromOurs(t: z.infer<typeof taskSchema>, index: number, issues: TaskIssue[]): EvalTask | undefined {
  let resolution: ScreenSize | undefined;
  if (t.resolution !== undefined) {
    try {
      resolution = parseScreenSize(t.resolution);
    } catch (e) {
      issues.push({ index, field: 'resolution', problem: (e as Error).message });
      return undefined;
    }
  }
  if (!isRelativeUrl(t.url)) {
    try {
      new URL(t.url);
    } catch {
      issues.push({ index, field: 'url', problem: 'not a valid absolute URL (give a full URL, or a path relative to the base URL)' });
      return undefined;
    }
  }
  for (const list of ['allowedDomains', 'blockedDomains'] as const) {
    for (const [i, p] of (t[list] ?? []).entries()) {
      try {
        parseDomainPattern(p, list);
      } catch (e) {
        issues.push({ index, field: `${list}.${i}`, problem: `${(e as VncuaError).code}: ${(e as Error).message}` });
        return undefined;
      }
    }
  }
  const task: EvalTask = { id: t.id, goal: t.goal, url: t.url, success: t.success as EvalTask['success'], group: t.group ?? taskGroup(t.id) };
  try {
    // Structure and no inline value now; the variables are looked up when the run's Agent is made.
    checkTaskSecrets({ auth: t.auth, secrets: t.secrets, where: `Task ${t.id}` });
    if (t.auth?.length) task.auth = t.auth;
    if (t.secrets && Object.keys(t.secrets).length) task.secrets = t.secrets as Record<string, { env: string }>;
  } catch (e) {
    issues.push({ index, field: t.auth ? 'auth' : 'secrets', problem: `${(e as VncuaError).code}: ${(e as Error).message}` });
  }
  if (t.allowedDomains?.length) task.allowedDomains = t.allowedDomains;
  if (t.blockedDomains?.length) task.blockedDomains = t.blockedDomains;
  if (t.maxSteps !== undefined) task.maxSteps = t.maxSteps;
  if (resolution) task.resolution = resolution;
  if (t.hint !== undefined) task.hint = t.hint;
  if (t.judges !== undefined) task.judges = t.judges;
  return task;
}

function fromUitask(t: z.infer<typeof uitaskTaskSchema>): EvalTask {
  const task: EvalTask = { id: t.id, goal: t.ques, url: t.web, success: { sentinel: DEFAULT_SENTINEL }, group: t.web_name };
  if (t.ux_hint) task.hint = t.ux_hint;
  return task;
}

/** Validate and normalize parsed JSON (`source` names it in errors); throws EVAL_ERR_BAD_TASKS with one issue per bad entry. */
export function parseTasks(data: unknown, source = 'tasks'): { format: TaskFileFormat; tasks: EvalTask[] } {
  if (!Array.isArray(data)) throw badTasks(source, [{ index: -1, field: '', problem: 'a task file must be a JSON array of tasks' }]);
  if (data.length === 0) throw badTasks(source, [{ index: -1, field: '', problem: 'the file holds no task' }]);
  const format = detectTaskFormat(data);
  const issues: TaskIssue[] = [];
  const tasks: EvalTask[] = [];
  const firstIndex = new Map<string, number>();
  data.forEach((raw: unknown, index) => {
    // Duplicates are found among every entry's id, valid entry or not.
    const rawId = typeof raw === 'object' && raw !== null ? (raw as { id?: unknown }).id : undefined;
    const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : undefined;
    const first = id === undefined ? undefined : firstIndex.get(id);
    if (id !== undefined && first === undefined) firstIndex.set(id, index);
    const r = format === 'uitask' ? check(uitaskTaskSchema, raw, index) : check(taskSchema, raw, index);
    if ('issue' in r) {
      issues.push(r.issue);
      return;
    }
    if (first !== undefined) {
      issues.push({ index, field: 'id', problem: `duplicate id "${id}" (also entry ${first}); ids name the result directories and must be unique` });
      return;
    }
    const task = format === 'uitask' ? fromUitask(r.ok as z.infer<typeof uitaskTaskSchema>) : fromOurs(r.ok as z.infer<typeof taskSchema>, index, issues);
    if (task) tasks.push(task);
  });
  if (issues.length > 0) throw badTasks(source, issues);
  return { format, tasks };
}

/** Read, validate and normalize a task file; EVAL_ERR_BAD_TASKS if it cannot be read or has bad entries. */
export async function loadTaskFile(path: string, opts: { baseUrl?: string; signal?: AbortSignal } = {}): Promise<TaskFile> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, { encoding: 'utf8', signal: opts.signal });
  } catch (cause) {
    throw new VncuaError('EVAL_ERR_BAD_TASKS', `Could not read the task file ${file}: ${(cause as Error).message}.`, {
      cause,
      details: { source: file, issues: [{ index: -1, field: '', problem: `unreadable: ${(cause as Error).message}` }] },
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    // A URL list (eval/url-list.ts: one URL a line) is a task file too: each URL a task with only a start page.
    if (looksLikeUrlList(text)) return { file, format: 'urls', tasks: parseUrlList(text, file) };
    throw badTasks(file, [{ index: -1, field: '', problem: `not valid JSON (${(cause as Error).message})` }]);
  }
  const { format, tasks } = parseTasks(data, file);
  return { file, format, tasks: opts.baseUrl !== undefined ? resolveTaskUrls(tasks, opts.baseUrl, format) : tasks };
}

/** Check a base URL (http/https/file); EVAL_ERR_BAD_OPTIONS if malformed. */
export function parseBaseUrl(baseUrl: string): URL {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch (cause) {
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `Bad base URL "${baseUrl}": expected an absolute URL such as http://127.0.0.1:8000/.`, {
      cause,
      details: { field: 'baseUrl', value: baseUrl },
    });
  }
  if (!['http:', 'https:', 'file:'].includes(u.protocol)) {
    throw new VncuaError('EVAL_ERR_BAD_OPTIONS', `Bad base URL "${baseUrl}": expected http://, https:// or file://.`, { details: { field: 'baseUrl', value: baseUrl } });
  }
  if (!u.pathname.endsWith('/')) u.pathname += '/';
  return u;
}

/** uitask's rule: keep `url`'s path, query and fragment; take the origin (and a path prefix) from `base`. */
export function rebaseUrl(url: string, base: URL): string {
  const u = new URL(url);
  const out = new URL(base.href);
  out.pathname = base.pathname.replace(/\/$/, '') + u.pathname;
  out.search = u.search;
  out.hash = u.hash;
  return out.href;
}

/** Resolve task URLs against `baseUrl`: relative ones for our format; every `web` origin for uitask's. */
export function resolveTaskUrls(tasks: EvalTask[], baseUrl: string, format: TaskFileFormat = 'vncua'): EvalTask[] {
  const base = parseBaseUrl(baseUrl);
  return tasks.map((t) => {
    if (format === 'uitask') return { ...t, url: rebaseUrl(t.url, base) };
    return isRelativeUrl(t.url) ? { ...t, url: new URL(t.url, base).href } : t;
  });
}
