/**
 * Judge specs: which evaluators decide whether a run succeeded, beside the CDP success sentinel.
 * Given per task (a task file's `judges` array), per suite (`vncua eval --judge`, the default of every
 * task without its own) and again after the fact (`vncua score --judge`). Validated with zod; a bad one
 * is one JUDGE_ERR_BAD_SPEC naming the judge and the field.
 *
 * - `sentinel`: the task's own success check as the runner saw it (the trace's first task_marked_complete);
 * - `expression`: a JS expression evaluated in the final page over CDP (true: pass);
 * - `url`: the final page's URL, matched `exact`, by `glob` (`*` any run of characters, `?` one) or by `regex`;
 * - `dom`: the final page's visible text contains `text`, or `selector` matches an element;
 * - `heuristic`: stuck (identical screens for `stuckSteps` actions), loops, repeated errors: fail when one is
 *   found, unknown otherwise (it can tell a failure, never a success);
 * - `llm`: an OpenAI-compatible vision model shown the task, the final screenshot and the step list;
 *   `when` says how often: every run, only when the other judges disagree or are unsure, or a seeded sample;
 * - `hybrid`: its cheap judges first; the LLM only when they disagree or none is sure (`escalate` adds
 *   `fail` or `pass` to call it on those too).
 */
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';
import { issueField } from '../../harness/trace/parse.ts';

const name = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,60}$/, 'must be 1-60 letters, digits, ".", "_" or "-"')
  .optional();
const nonEmpty = z.string().min(1, 'must be a non-empty string');
const count = (min: number) => z.number().int().min(min).max(1000);

/** A regex source that compiles. */
const regexSource = nonEmpty.refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'is not a valid regular expression' },
);

const sentinelSpec = z.strictObject({ type: z.literal('sentinel'), name });
const expressionSpec = z.strictObject({ type: z.literal('expression'), name, expression: nonEmpty });
const urlSpec = z
  .strictObject({ type: z.literal('url'), name, exact: nonEmpty.optional(), glob: nonEmpty.optional(), regex: regexSource.optional() })
  .refine((s) => [s.exact, s.glob, s.regex].filter((x) => x !== undefined).length === 1, { message: 'give exactly one of exact, glob or regex', path: ['exact'] });
const domSpec = z
  .strictObject({ type: z.literal('dom'), name, text: nonEmpty.optional(), selector: nonEmpty.optional(), visible: z.boolean().optional() })
  .refine((s) => (s.text === undefined) !== (s.selector === undefined), { message: 'give exactly one of text or selector', path: ['text'] });
const heuristicSpec = z.strictObject({
  type: z.literal('heuristic'),
  name,
  /** Actions in a row that left the screen identical: stuck (default 3). */
  stuckSteps: count(2).optional(),
  /** Times a cycle of 1-3 actions repeats at the end of the run: a loop (default 3). */
  loopRepeats: count(2).optional(),
  /** Failed actions in a row with the same error code (default 3). */
  errorRepeats: count(2).optional(),
});
const llmFields = {
  name,
  /** The model name the API is asked for. */
  model: nonEmpty,
  /** The API's base URL (…/v1); default: the openai SDK's (OPENAI_BASE_URL, else api.openai.com). */
  baseUrl: z.string().url('must be an absolute URL').optional(),
  /** The environment variable holding the API key (default OPENAI_API_KEY); never the key itself. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  /** One call's timeout, ms (default 60000). */
  timeoutMs: z.number().int().min(1).max(600_000).optional(),
  /** Retries of a failed call (5xx, timeout, connection; default 1). */
  maxRetries: z.number().int().min(0).max(5).optional(),
  /** The model's rates in USD per 1M tokens, instead of byom/pricing.ts's table (a model it does not know, or your own rates). */
  price: z.strictObject({ input: z.number().min(0), output: z.number().min(0), cachedInput: z.number().min(0).optional() }).optional(),
};
const llmSpec = z
  .strictObject({
    type: z.literal('llm'),
    ...llmFields,
    /** always (default); unsure: only when the other judges disagree or none gave pass/fail; sample: a `sample` fraction of runs, drawn with `seed`. */
    when: z.enum(['always', 'unsure', 'sample']).optional(),
    sample: z.number().min(0).max(1).optional(),
    seed: z.number().int().optional(),
  })
  .refine((s) => (s.when === 'sample') === (s.sample !== undefined), { message: 'sample (a fraction 0..1) goes with when: "sample", and only with it', path: ['sample'] });
const cheapSpec = z.union([sentinelSpec, expressionSpec, urlSpec, domSpec, heuristicSpec]);
const hybridSpec = z.strictObject({
  type: z.literal('hybrid'),
  name,
  /** The cheap judges run first (default: sentinel and heuristic). */
  judges: z.array(cheapSpec).min(1).optional(),
  /** The LLM asked when they do not settle it. */
  llm: z.strictObject(llmFields),
  /** Also ask the LLM when the cheap judges agree on this verdict (default: only when they disagree or none is sure). */
  escalate: z.array(z.enum(['pass', 'fail'])).optional(),
});

/** Schema of one judge spec (unknown keys rejected). */
export const judgeSpecSchema = z.union([sentinelSpec, expressionSpec, urlSpec, domSpec, heuristicSpec, llmSpec, hybridSpec]);

/** One judge spec, as a task file or --judge gives it. */
export type JudgeSpec = z.infer<typeof judgeSpecSchema>;
/** A judge that needs no model. */
export type CheapJudgeSpec = z.infer<typeof cheapSpec>;
/** The LLM judge's spec. */
export type LlmJudgeSpec = z.infer<typeof llmSpec>;
/** The hybrid judge's spec. */
export type HybridJudgeSpec = z.infer<typeof hybridSpec>;
/** Every judge type. */
export const JUDGE_TYPES = ['sentinel', 'expression', 'url', 'dom', 'heuristic', 'llm', 'hybrid'] as const;

/** Schema of a list of judge specs (a task file's `judges`). */
export const judgeListSchema = z.array(judgeSpecSchema).min(1, 'must list at least one judge');

function badSpec(where: string, field: string, problem: string, raw: unknown): VncuaError {
  return new VncuaError(
    'JUDGE_ERR_BAD_SPEC',
    `Judge ${where}${field ? `, field "${field}"` : ''}: ${problem}. A judge is { "type": ${JUDGE_TYPES.map((t) => `"${t}"`).join(' | ')}, ... } (see eval/README.md "Judges").`,
    {
      details: { judge: where, field, problem, type: typeof raw === 'object' && raw !== null ? (raw as { type?: unknown }).type : undefined },
    },
  );
}

/** The problem of one raw spec, or null: `{ field, problem }` (used by the task file's validation too). */
export function judgeSpecProblem(raw: unknown): { field: string; problem: string } | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { field: '', problem: 'expected an object' };
  const type = (raw as { type?: unknown }).type;
  if (!JUDGE_TYPES.includes(type as (typeof JUDGE_TYPES)[number])) return { field: 'type', problem: `unknown type ${JSON.stringify(type)} (one of ${JUDGE_TYPES.join(', ')})` };
  // Parse against the schema of that type alone, so the issue names its field rather than "no union member matched".
  const schema = { sentinel: sentinelSpec, expression: expressionSpec, url: urlSpec, dom: domSpec, heuristic: heuristicSpec, llm: llmSpec, hybrid: hybridSpec }[
    type as (typeof JUDGE_TYPES)[number]
  ];
  const r = (schema as z.ZodType).safeParse(raw);
  if (r.success) return null;
  const issue = r.error.issues[0]!;
  return { field: issueField(issue), problem: issue.code === 'unrecognized_keys' ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}` : issue.message };
}

/** Validate one spec; JUDGE_ERR_BAD_SPEC naming `where` (e.g. `--judge 2`) and the field. */
export function parseJudgeSpec(raw: unknown, where: string): JudgeSpec {
  const p = judgeSpecProblem(raw);
  if (p) throw badSpec(where, p.field, p.problem, raw);
  return judgeSpecSchema.parse(raw);
}

/**
 * A --judge argument: a bare type with its defaults (`sentinel`, `heuristic`), or the spec as JSON
 * (`{"type":"url","glob":"*\/done*"}`), or `llm:MODEL` / `hybrid:MODEL` for those with a model and the
 * other defaults.
 */
export function parseJudgeArg(arg: string, where = '--judge'): JudgeSpec {
  const t = arg.trim();
  if (t.startsWith('{')) {
    let raw: unknown;
    try {
      raw = JSON.parse(t);
    } catch (cause) {
      throw badSpec(where, '', `not valid JSON (${(cause as Error).message})`, null);
    }
    return parseJudgeSpec(raw, where);
  }
  const m = /^(llm|hybrid):(.+)$/.exec(t);
  if (m) return parseJudgeSpec(m[1] === 'llm' ? { type: 'llm', model: m[2] } : { type: 'hybrid', llm: { model: m[2] } }, where);
  if (t === 'llm' || t === 'hybrid') throw badSpec(where, 'model', `${t} needs a model: ${t}:MODEL, or the spec as JSON`, { type: t });
  return parseJudgeSpec({ type: t }, where);
}

/** The name a judge's verdicts are stored and scored under: its `name`, else its type (`llm-2`… when a type repeats). */
export function judgeNames(specs: readonly JudgeSpec[]): string[] {
  const seen = new Map<string, number>();
  const names = specs.map((s) => s.name ?? s.type);
  const out: string[] = [];
  for (const n of names) {
    const k = (seen.get(n) ?? 0) + 1;
    seen.set(n, k);
    out.push(k === 1 ? n : `${n}-${k}`);
  }
  return out;
}

/** The spec list with the sentinel first (every judged run keeps the sentinel's verdict beside the others). */
export function withSentinel(specs: readonly JudgeSpec[]): JudgeSpec[] {
  return specs.some((s) => s.type === 'sentinel') ? [...specs] : [{ type: 'sentinel' }, ...specs];
}

/** Whether a spec (or a hybrid's cheap judges) must look at the live page at the run's end. */
export function needsLivePage(spec: JudgeSpec): boolean {
  if (spec.type === 'expression' || spec.type === 'url') return true;
  if (spec.type === 'dom') return true;
  if (spec.type === 'hybrid') return (spec.judges ?? []).some(needsLivePage);
  return false;
}

/** A stable key of a page check (expression or selector), to find its verdict taken at the run's end. */
export function pageCheckKey(spec: Extract<JudgeSpec, { type: 'expression' } | { type: 'dom' }>): string {
  return spec.type === 'expression'
    ? `expression:${spec.expression}`
    : spec.selector !== undefined
      ? `selector:${spec.visible ? 'visible:' : ''}${spec.selector}`
      : `text:${spec.text}`;
}
