/**
 * One line of `vncua export ROOT --format jsonl` (eval/export.ts): one step of one run, with the task,
 * the action in three shapes (the trace's, the TypeScript call's, uitask's), the step's and the run's
 * verdicts, what the model said when the agent recorded it, and the before/after screenshots as
 * files beside the JSONL. `schemas/export-line.schema.json` is generated from this schema
 * (scripts/gen-schemas.ts). Keys are snake_case like every file vncua writes; the values of `call`
 * are the TypeScript API's own (camelCase argument names), and `meta` is the trace entry's as recorded.
 */
import { z } from 'zod';
import { ACTION_NAMES, RUN_STATUSES, anyParamsSchema, entrySuccessSchema, metaSchema, traceErrorSchema } from './schema.ts';

const epochMs = z.number().min(0);
const relPath = z.string().describe("A path relative to the JSONL file's directory, '/' separated.");
const STALE_REASONS = ['damage', 'undecodable', 'end_of_data'] as const;

/** The Agent method call that performs the action (harness/agent/apply-action.ts apiCall). */
export const exportCallSchema = z
  .strictObject({
    method: z.enum(['mouseMove', 'mouseClick', 'mouseDrag', 'mouseScroll', 'pressKeys', 'typeText', 'pageNavigation', 'wait', 'finish']),
    args: z.array(z.unknown()).describe('The arguments in order, camelCase as the TypeScript API takes them (absent options left out).'),
  })
  .describe("The action as the TypeScript API's call, e.g. mouseClick({ position, button, clickType }).");

/** The entry as uitask's execution.json holds it (harness/trace/uitask.ts toUitaskEntry). */
export const exportUitaskSchema = z
  .strictObject({
    action: z.enum(ACTION_NAMES),
    params: anyParamsSchema,
    task_marked_complete: z.boolean().nullable(),
  })
  .describe('The entry exactly as the Python uitask harness writes it in execution.json (nested params, `duration`, `keys` a list).');

/** What a model agent recorded for this step (from the trace entry's meta), or null. */
export const exportModelSchema = z
  .strictObject({
    messages: z.array(z.string()).describe("The model's text for this step: meta.model_text, meta.thought, meta.description, in that order."),
    reasoning: z.array(z.string()).describe('Reasoning summaries (meta.reasoning).'),
    calls: z.array(z.record(z.string(), z.unknown())).describe('meta.model_calls as recorded: latency_ms, usage, response_id, model, attempts.'),
    tokens: z
      .strictObject({ input: z.number().nullable(), output: z.number().nullable(), total: z.number().nullable() })
      .nullable()
      .describe(
        "Token counts summed over the calls: each call's tokens (the whole prompt, cache hits and writes included; all output) when recorded, else its usage's input_tokens / prompt_tokens and output_tokens / completion_tokens; null when no call reported usage.",
      ),
    latency_ms: z.number().nullable().describe("The calls' latency summed; null without calls."),
    cost_usd: z.number().min(0).nullable().describe("The calls' cost_usd summed (USD at list prices, byom/pricing.ts); null without calls or when a call was not priced."),
  })
  .describe('What the model agent recorded for this step; null when the entry carries none of it.');

/** One line of the JSONL export. */
export const exportLineSchema = z
  .strictObject({
    version: z.literal(1),
    run_id: z.string().describe("The run directory relative to ROOT, '/' separated (e.g. replay/1280_800/click-1)."),
    run_dir: z.string().describe('The run directory, absolute.'),
    agent: z.string(),
    resolution: z.string().describe('WxH, or "unknown".'),
    repeat: z.number().int().min(1),
    task: z.strictObject({
      id: z.string(),
      goal: z.string().nullable(),
      group: z.string(),
      url: z.string().nullable(),
    }),
    step_index: z.number().int().min(0).describe("The entry's index in the trace."),
    step_count: z.number().int().min(0).describe('Entries in the trace.'),
    action: z.enum(ACTION_NAMES),
    actor: z.enum(['agent', 'human']).describe('Who performed the step: the agent, or a person who took over the run (the trace entry\'s actor "human").'),
    params: anyParamsSchema.describe("The params as vncua's execution.json holds them (flat, snake_case)."),
    call: exportCallSchema,
    uitask: exportUitaskSchema.nullable(),
    uitask_reason: z.string().nullable().describe('Why `uitask` is null (uitask cannot express the entry, e.g. a middle-button click); null otherwise.'),
    started_at: epochMs.nullable().describe('Epoch ms; null for uitask traces, which record no time.'),
    ended_at: epochMs.nullable(),
    duration_ms: z.number().min(0).nullable(),
    verdict: z
      .strictObject({
        task_marked_complete: z.boolean().nullable().describe('The success check after this step: true, false, or null when no check answered.'),
        first_success: z.boolean().describe('This is the first step the success check marked complete.'),
        error: traceErrorSchema.nullable().describe("The failed attempt's error; null when the action ran."),
        success_check: entrySuccessSchema.nullable(),
      })
      .describe("The step's verdict."),
    run_verdict: z
      .strictObject({
        status: z
          .enum([...RUN_STATUSES, 'partial', 'unknown'])
          .describe("result.json's status; partial: only partial_execution.json; unknown: a final trace without result.json (uitask's)."),
        success: z.boolean(),
        success_index: z.number().int().nullable(),
        finish_index: z.number().int().nullable(),
        proper_stop: z.boolean(),
        complete: z.boolean(),
        steps: z.number().int().min(0),
        duration_ms: z.number().nullable(),
        error: traceErrorSchema.nullable(),
      })
      .describe("The run's verdict, as vncua score computes it (eval/score.ts)."),
    model: exportModelSchema.nullable(),
    meta: metaSchema.nullable().describe("The trace entry's meta as recorded (adapters' extra data); null when absent."),
    screenshot_before: relPath.nullable().describe('PNG of the screen as the action started; null with screenshot_reason.'),
    screenshot_after: relPath.nullable().describe('PNG of the screen once it settled after the action; null with screenshot_reason.'),
    screenshot_source: z
      .enum(['process', 'rendered'])
      .nullable()
      .describe("process: copied from the run's vncua process output; rendered: rendered from its recording by the same post-processor; null: none."),
    screenshot_reason: z.string().nullable().describe('Why a screenshot is null (no recording, a damaged one, an action with no known time); null when both exist.'),
    screenshot_before_stale: z.enum(STALE_REASONS).nullable().describe('Set when the before image is older than its instant (damage or end of the recorded data).'),
    screenshot_after_stale: z.enum(STALE_REASONS).nullable(),
    width: z.number().int().nullable().describe('Screenshot width in pixels (null without screenshots).'),
    height: z.number().int().nullable(),
  })
  .meta({
    title: 'vncua export line',
    description: 'One line of `vncua export ROOT --format jsonl`: one step of one run. See schemas/EXPORT.md.',
  });

/** One line of the JSONL export. */
export type ExportLine = z.infer<typeof exportLineSchema>;
