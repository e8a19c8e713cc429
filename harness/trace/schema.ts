/**
 * Zod schemas of the trace files a run leaves in its output directory:
 * - `execution.json` (and `partial_execution.json` while running): one entry per action,
 *   uitask's action names (snake_case) with flat params (uitask's nested params are read and written
 *   by uitask.ts);
 * - `result.json`: how the run ended.
 * `schemas/*.schema.json` are generated from these by `scripts/gen-schemas.ts`.
 *
 * Strictness: an entry WITHOUT `error` must match its action's params exactly (no unknown keys);
 * an entry WITH `error` records a failed attempt with the params as given, which may be invalid,
 * so its params are any object. Extra data from adapters goes under the optional `meta` object.
 */
import { z } from 'zod';

/** Snake_case action names, as uitask writes them. */
export const ACTION_NAMES = ['mouse_move', 'mouse_click', 'mouse_drag', 'mouse_scroll', 'press_keys', 'type_text', 'page_navigation', 'wait', 'finish'] as const;

/** One of `ACTION_NAMES`. */
export type ActionName = (typeof ACTION_NAMES)[number];

/** Schema of an action name. */
export const actionNameSchema = z.enum(ACTION_NAMES);

/** A screen position in pixels (fractional allowed, never negative). */
export const pointSchema = z.strictObject({ x: z.number().min(0), y: z.number().min(0) });

/** Mouse buttons (uitask's MouseButton has only left and right). */
export const mouseButtonSchema = z.enum(['left', 'middle', 'right']);

/** Params fields per action (uitask's own shapes are in uitask.ts). */
const PARAM_SHAPES = {
  mouse_move: { position: pointSchema },
  mouse_click: {
    position: pointSchema.optional(),
    button: mouseButtonSchema,
    click_type: z.enum(['single', 'double', 'triple']),
  },
  mouse_drag: { start: pointSchema, end: pointSchema, button: mouseButtonSchema },
  mouse_scroll: {
    position: pointSchema,
    direction: z.enum(['up', 'down', 'left', 'right']),
    repeat: z.number().int().min(1),
  },
  press_keys: { keys: z.string().min(1) },
  type_text: { text: z.string() },
  page_navigation: { direction: z.enum(['back', 'forward']) },
  wait: { seconds: z.number().min(0) },
} as const;

/** Any params object: finish's params, and the params of a failed attempt. */
export const anyParamsSchema = z.record(z.string(), z.unknown());

/** Strict params schema per action (unknown keys rejected; finish takes any object, as uitask's does). */
export const ACTION_PARAMS = {
  mouse_move: z.strictObject(PARAM_SHAPES.mouse_move),
  mouse_click: z.strictObject(PARAM_SHAPES.mouse_click),
  mouse_drag: z.strictObject(PARAM_SHAPES.mouse_drag),
  mouse_scroll: z.strictObject(PARAM_SHAPES.mouse_scroll),
  press_keys: z.strictObject(PARAM_SHAPES.press_keys),
  type_text: z.strictObject(PARAM_SHAPES.type_text),
  page_navigation: z.strictObject(PARAM_SHAPES.page_navigation),
  wait: z.strictObject(PARAM_SHAPES.wait),
  finish: anyParamsSchema,
} as const satisfies Record<ActionName, z.ZodType>;

/** A failure: a stable code (e.g. `ACTION_ERR_...`) and a message. */
export const traceErrorSchema = z.strictObject({ code: z.string().min(1), message: z.string() });

/** `{ code, message }` of a failed action or run. */
export type TraceError = z.infer<typeof traceErrorSchema>;

const epochMs = z.number().min(0).describe('Epoch milliseconds (fractional) from harness/trace/clock.ts now().');

/** Fields every vncua entry has besides action and params, in file order. */
const ENTRY_FIELDS = {
  index: z.number().int().min(0).describe('0-based position of the entry in the trace.'),
  task_marked_complete: z.boolean().nullable().describe('Result of the success check after the action; null when no check was available.'),
  started_at: epochMs,
  ended_at: epochMs,
  duration_ms: z.number().min(0).describe('ended_at - started_at, in milliseconds.'),
} as const;

/** When a success check saw the task complete: right after the action, in the grace window after it, or in the run's final check. */
export const SUCCESS_PHASES = ['immediate', 'grace', 'final'] as const;

/** The kinds of success rule: an HTML text (the default and `{ sentinel }`), a CSS selector, a JS expression. */
export const SUCCESS_RULES = ['text', 'selector', 'expression'] as const;

const evidenceFields = {
  rule: z.enum(SUCCESS_RULES).describe('Which kind of rule matched: text (the default >code#1</ rule or a { sentinel }), selector or expression.'),
  pattern: z.string().describe('The sentinel text, the CSS selector or the JS expression.'),
  snippet: z.string().describe('What matched: the text with ~40 characters each side, the element outerHTML, or the expression value as JSON (at most 240 characters).'),
  url: z.string().describe('location.href of the page that matched.'),
  at: epochMs.describe('When the check that saw it answered (epoch ms).'),
} as const;

/** Evidence of a success check on a trace entry (set only when the check said true). */
export const entrySuccessSchema = z
  .strictObject({
    phase: z.enum(SUCCESS_PHASES).describe('immediate: the check right after the action; grace: a re-check while the screen settled; final: the check after the run ended.'),
    ...evidenceFields,
  })
  .describe('What the success check saw when it marked this entry complete (task_marked_complete true).');

/** What `success_check` on an entry holds. */
export type EntrySuccess = z.infer<typeof entrySuccessSchema>;

/** Who performed an entry's action: absent for the agent, "human" for a person who took over the run (vncua serve's takeover, Agent.takeover()). */
export const actorSchema = z
  .literal('human')
  .describe(
    '"human": a person did this while they held the run (a takeover); absent: the agent did. uitask has no such field: vncua export-trace leaves these entries out unless --include-human.',
  );

/** Free-form extra data adapters attach (model usage, latency...). */
export const metaSchema = z.record(z.string(), z.unknown()).describe('Extra data from adapters (model usage, latency...).');

function okEntry<A extends ActionName, P extends z.ZodType>(action: A, params: P) {
  return z.strictObject({
    index: ENTRY_FIELDS.index,
    action: z.literal(action),
    actor: actorSchema.optional(),
    params,
    task_marked_complete: ENTRY_FIELDS.task_marked_complete,
    started_at: ENTRY_FIELDS.started_at,
    ended_at: ENTRY_FIELDS.ended_at,
    duration_ms: ENTRY_FIELDS.duration_ms,
    success_check: entrySuccessSchema.optional(),
    meta: metaSchema.optional(),
  });
}

/** An action that ran without error: params validated strictly for its action. */
export const okEntrySchema = z.discriminatedUnion('action', [
  okEntry('mouse_move', ACTION_PARAMS.mouse_move),
  okEntry('mouse_click', ACTION_PARAMS.mouse_click),
  okEntry('mouse_drag', ACTION_PARAMS.mouse_drag),
  okEntry('mouse_scroll', ACTION_PARAMS.mouse_scroll),
  okEntry('press_keys', ACTION_PARAMS.press_keys),
  okEntry('type_text', ACTION_PARAMS.type_text),
  okEntry('page_navigation', ACTION_PARAMS.page_navigation),
  okEntry('wait', ACTION_PARAMS.wait),
  okEntry('finish', ACTION_PARAMS.finish),
]);

/** An action attempt that failed: `error` present, params recorded as given (any object). */
export const failedEntrySchema = z.strictObject({
  index: ENTRY_FIELDS.index,
  action: actionNameSchema,
  actor: actorSchema.optional(),
  params: anyParamsSchema,
  task_marked_complete: ENTRY_FIELDS.task_marked_complete,
  started_at: ENTRY_FIELDS.started_at,
  ended_at: ENTRY_FIELDS.ended_at,
  duration_ms: ENTRY_FIELDS.duration_ms,
  error: traceErrorSchema,
  success_check: entrySuccessSchema.optional(),
  meta: metaSchema.optional(),
});

/** One entry of a vncua `execution.json`: a successful action or a failed attempt. */
export const executionEntrySchema = z.union([okEntrySchema, failedEntrySchema]);

/** The whole `execution.json` / `partial_execution.json` written by vncua. */
export const executionSchema = z.array(executionEntrySchema).meta({
  title: 'vncua execution trace',
  description:
    "execution.json / partial_execution.json: one entry per action, in order. Action names as the uitask harness writes them; params flat (vncua export-trace --format uitask writes uitask's nested params).",
});

/** One entry of a vncua trace. */
export type ExecutionEntry = z.infer<typeof executionEntrySchema>;

/** A successful entry. */
export type OkEntry = z.infer<typeof okEntrySchema>;

/** A failed attempt's entry. */
export type FailedEntry = z.infer<typeof failedEntrySchema>;

/** `Omit` applied to each member of a union (plain `Omit` would collapse the discriminated union). */
export type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Timing fields of an entry. */
export type EntryTiming = Pick<OkEntry, 'started_at' | 'ended_at' | 'duration_ms'>;

/** A normalized entry from any source: timing is absent for uitask traces (which do not record it). */
export type TraceEntry = DistributiveOmit<ExecutionEntry, keyof EntryTiming> & Partial<EntryTiming>;

/** What `TraceWriter.append` takes: an entry without `index` and `duration_ms` (the writer fills them). */
export type TraceEntryInput = DistributiveOmit<ExecutionEntry, 'index' | 'duration_ms'>;

/**
 * Why an agent stopped without finishing the task: given with `finish({ status, reason })` (or mapped by a model adapter from
 * the model's refusal or safety check). `ambiguity`: the task cannot be done as stated; `needs_human`: a login wall, a CAPTCHA,
 * a confirmation only a person may give; `sensitive_action`: the agent will not act without approval; `problem`: the
 * environment is broken. Scores count them apart: neither a success nor a failure of the agent's skill.
 */
export const STOP_STATUSES = ['ambiguity', 'needs_human', 'sensitive_action', 'problem'] as const;

/** One of `STOP_STATUSES`. */
export type StopStatus = (typeof STOP_STATUSES)[number];

/** What `finish({ status })` accepts: `finished` (the default) or a stop status. */
export const FINISH_STATUSES = ['finished', ...STOP_STATUSES] as const;

/** One of `FINISH_STATUSES`. */
export type FinishStatus = (typeof FINISH_STATUSES)[number];

/**
 * How a run can end. stuck, parse_error and timeout are set by adapters; infra_error by the eval runner; cost_cap when the
 * run's or the suite's cost cap was reached (before the next model call); the STOP_STATUSES by the agent's finish() or an
 * adapter's mapping of a refusal; safety_check is what adapters before the stop statuses wrote for a safety check or a
 * refusal (now sensitive_action), still read.
 */
export const RUN_STATUSES = [
  'finished',
  'max_steps',
  'cancelled',
  'error',
  'safety_check',
  'stuck',
  'parse_error',
  'infra_error',
  'timeout',
  ...STOP_STATUSES,
  'cost_cap',
] as const;

/** One of `RUN_STATUSES`. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The evidence of a run's first success in `result.json`: what the check saw, when, on which entry, in which phase. */
export const runEvidenceSchema = z
  .strictObject({ ...evidenceFields, entry_index: z.number().int().min(0).describe('The trace entry the success is attributed to.'), phase: entrySuccessSchema.shape.phase })
  .describe("The first successful entry's check: the rule, the matching snippet, the URL, the time, the entry and the phase.");

/** What `evidence` in result.json holds. */
export type RunEvidence = z.infer<typeof runEvidenceSchema>;

/** `result.json`: how the run ended. */
export const runResultSchema = z
  .strictObject({
    status: z.enum(RUN_STATUSES),
    steps: z.number().int().min(0).describe('Number of act() calls that returned (steps, not primitives: one act() may perform several actions).'),
    durationMs: z.number().min(0).describe('Wall time of the run in milliseconds.'),
    error: traceErrorSchema.optional(),
    reason: z
      .string()
      .optional()
      .describe(
        "Why the agent stopped, in its own words: finish({ status, reason })'s reason, or the model's refusal text as an adapter read it; present with a stop status when one was given.",
      ),
    success: z
      .boolean()
      .nullable()
      .optional()
      .describe('Some success check (right after an action, in its grace window, or the final one) saw the task complete; null when no check answered.'),
    success_at: epochMs.nullable().optional().describe('When the check behind `evidence` answered (epoch ms); null without a success.'),
    evidence: runEvidenceSchema.nullable().optional(),
    model_calls: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Model calls made during the run (the items of the entries' meta.model_calls, and any recorded after the last entry); absent when the agent made none."),
    input_tokens: z.number().min(0).optional().describe("Prompt tokens over the run's model calls (cache hits and writes included); absent unless every call reported its tokens."),
    output_tokens: z.number().min(0).optional().describe("Generated tokens over the run's model calls (reasoning included); absent unless every call reported its tokens."),
    cost_usd: z
      .number()
      .min(0)
      .optional()
      .describe("USD over the run's model calls at list prices (byom/pricing.ts, or the agent's own prices); absent unless every call was priced."),
    paused_ms: z
      .number()
      .min(0)
      .optional()
      .describe('Time the loop spent paused (pause(), askForHelp(), a person holding the run), in ms; present when it paused. durationMs includes it.'),
    help_requests: z.number().int().min(0).optional().describe('askForHelp() calls; present when there were some.'),
    human_steps: z.number().int().min(0).optional().describe('Trace entries a person made during takeovers (actor "human"); present when there were some.'),
    domain_blocked: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe("Requests the navigation guard blocked (DOMAIN_BLOCKED; each is in an entry's meta.domain_blocked); present when the run had allowedDomains or blockedDomains."),
    live_error: traceErrorSchema.optional().describe('Why the live endpoint (live view and takeover) could not be started; the run went on without it.'),
  })
  .meta({ title: 'vncua run result', description: 'result.json: how a run ended.' });

/** Contents of `result.json`. */
export type RunResult = z.infer<typeof runResultSchema>;
