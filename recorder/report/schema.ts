/**
 * Zod schema of `action_screenshots.json` (written by the post-processor, read by the step report).
 * Lenient about extra keys (newer writers may add fields) and strict about the types of the
 * fields the report shows. Image paths must be relative paths inside the run directory: the
 * report must never point the browser at another origin.
 */
import { z } from 'zod';
import { VncuaError } from '../../harness/errors.ts';

/** A relative image path such as `action_screenshots/0000_before.png` (no scheme, no leading slash, no `..`). */
export const imagePathSchema = z
  .string()
  .min(1)
  .refine((p) => !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(p) && !p.startsWith('/') && !p.includes('\\') && !p.split('/').includes('..'), {
    message: 'must be a relative path inside the run directory (no scheme, no leading "/", no "..", no "\\")',
  });

const size = z.number().int().positive();
const epochMs = z.number().min(0);

/** `{ code, message }` of a warning or a failed action. */
export const reportIssueSchema = z.looseObject({ code: z.string(), message: z.string() });

/** A step's or a run's model calls: count, tokens and cost (null when some call did not report them). */
export const reportModelSchema = z.looseObject({
  calls: z.number().int().min(0),
  input_tokens: z.number().min(0).nullable().optional(),
  output_tokens: z.number().min(0).nullable().optional(),
  cost_usd: z.number().min(0).nullable().optional(),
});

/** One action of the run with its before/after frames. */
export const reportActionSchema = z.looseObject({
  index: z.number().int().min(0),
  action: z.string().min(1),
  actor: z.string().nullable().optional(),
  params: z.record(z.string(), z.unknown()).default({}),
  started_at: epochMs.nullable().optional(),
  ended_at: epochMs.nullable().optional(),
  duration_ms: z.number().min(0).nullable().optional(),
  task_marked_complete: z.boolean().nullable().optional(),
  error: reportIssueSchema.nullable().optional(),
  before: imagePathSchema.nullable().optional(),
  after: imagePathSchema.nullable().optional(),
  before_at: epochMs.nullable().optional(),
  after_at: epochMs.nullable().optional(),
  settled: z.boolean().nullable().optional(),
  before_stale: z.boolean().nullable().optional(),
  before_stale_reason: z.string().nullable().optional(),
  before_shows_at: epochMs.nullable().optional(),
  after_stale: z.boolean().nullable().optional(),
  after_stale_reason: z.string().nullable().optional(),
  after_shows_at: epochMs.nullable().optional(),
  width: size.nullable().optional(),
  height: size.nullable().optional(),
  model: reportModelSchema.nullable().optional(),
});

/** The first successful step and what its check saw (see recorder/process/output.ts SuccessShot). */
export const reportSuccessSchema = z.looseObject({
  index: z.number().int().min(0),
  at: epochMs.nullable().optional(),
  phase: z.string().nullable().optional(),
  rule: z.string().nullable().optional(),
  pattern: z.string().nullable().optional(),
  snippet: z.string().nullable().optional(),
  url: z.string().nullable().optional(),
  image: imagePathSchema.nullable().optional(),
});

/** The whole `action_screenshots.json`. */
export const actionScreenshotsSchema = z.looseObject({
  version: z.literal(1),
  source: z.enum(['vncua', 'uitask']),
  alignment: z.enum(['timestamps', 'inferred']),
  task: z.string().nullable().optional(),
  outcome: z
    .looseObject({
      status: z.string(),
      steps: z.number().int().min(0).nullable().optional(),
      duration_ms: z.number().min(0).nullable().optional(),
      success: z.boolean().nullable().optional(),
      reason: z.string().nullable().optional(),
      error: reportIssueSchema.nullable().optional(),
      model: reportModelSchema.nullable().optional(),
    })
    .nullable()
    .optional(),
  width: size,
  height: size,
  settle_ms: z.number().min(0).nullable().optional(),
  warnings: z.array(reportIssueSchema).default([]),
  success: reportSuccessSchema.nullable().optional(),
  actions: z.array(reportActionSchema),
});

/** A parsed `action_screenshots.json`. */
export type ActionScreenshots = z.infer<typeof actionScreenshotsSchema>;
/** The parsed first success of `action_screenshots.json`. */
export type ReportSuccess = z.infer<typeof reportSuccessSchema>;
/** One parsed action of `action_screenshots.json`. */
export type ReportAction = z.infer<typeof reportActionSchema>;
/** What `renderStepReport` accepts: the file's JSON shape before defaults are applied. */
export type ActionScreenshotsInput = z.input<typeof actionScreenshotsSchema>;

/** Dotted path of a zod issue (`actions[3].before`). */
function issuePath(path: readonly PropertyKey[]): string {
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
    .join('.')
    .replace(/\.\[/g, '[');
}

/** Validates parsed JSON as action_screenshots.json; throws `REPORT_ERR_INVALID` naming the first bad field. */
export function parseActionScreenshots(data: unknown, file = '<memory>'): ActionScreenshots {
  const r = actionScreenshotsSchema.safeParse(data);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 10).map((i) => ({ field: issuePath(i.path), problem: i.message }));
  const first = issues[0]!;
  throw new VncuaError(
    'REPORT_ERR_INVALID',
    `${file}: field "${first.field || '(root)'}" ${first.problem}. The file does not match the action_screenshots.json format; regenerate it with \`vncua process --overwrite\`.`,
    { details: { path: file, field: first.field, problem: first.problem, issues } },
  );
}
