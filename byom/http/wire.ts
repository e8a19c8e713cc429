/**
 * The HTTP planner's wire format (documented in byom/http/README.md), validated with zod, and
 * its mapping to trace steps.
 *
 * Request (POST endpoint, `content-type: application/json`, `authorization: Bearer <token>`):
 * ```jsonc
 * { "task": "…", "screenshot": "<base64 PNG>", "resolution": { "width": 1280, "height": 800 },
 *   "previous_steps": [ { "step": 0, "action": { "type": "CLICK", "x": 10, "y": 20 } }, … ] }
 * ```
 * Response (200, JSON): `{ "actions": [ … ], "id"?: "…", "usage"?: { … }, "model"?: "…" }` (other top-level keys
 * are ignored); `actions` is non-empty and performed in order. Each action (unknown keys rejected;
 * every action may carry `"description": "…"`):
 * ```jsonc
 * { "type": "CLICK",      "x": 10, "y": 20, "button"?: "left"|"right"|"middle", "click_count"?: 1|2|3 }
 * { "type": "MOUSE_MOVE", "x": 10, "y": 20 }
 * { "type": "DRAG",       "start": { "x": 1, "y": 2 }, "end": { "x": 3, "y": 4 }, "button"?: "left"|"right"|"middle" }
 * { "type": "SCROLL",     "x": 10, "y": 20, "direction": "up"|"down"|"left"|"right", "amount"?: 1..100 }   // wheel notches, default 1
 * { "type": "TYPE_INTO",  "text": "…", "x"?: 10, "y"?: 20, "clear"?: false }   // click at x,y first if given; clear = select all first
 * { "type": "KEY_PRESS",  "keys": "ctrl+a" | ["ctrl", "a"] }                     // one key or chord (vncua key names)
 * { "type": "WAIT",       "seconds": 1.5 }                                        // 0..3600
 * { "type": "FINISH",     "success"?: true, "message"?: "…", "status"?: "finished"|"ambiguity"|"needs_human"|"sensitive_action"|"problem", "reason"?: "…" }
 * ```
 * A FINISH with a `status` other than "finished" stops the run without the task done, for `reason` (Agent.finish).
 * Coordinates are pixels of the screenshot sent (its size is `resolution`), 0..width-1 / 0..height-1.
 */
import { z } from 'zod';
import type { ActionStep } from '../../harness/agent/index.ts';
import { MAX_SCROLL_REPEAT, MAX_WAIT_SECONDS } from '../../harness/agent/index.ts';
import { parseKeys, planTypeText } from '../../harness/keys/index.ts';
import { FINISH_STATUSES } from '../../harness/trace/schema.ts';
import { formatIssues } from '../chat/actions.ts';
import { coordinateProblem, toScreen, type CoordinateFrame } from '../chat/coordinates.ts';

/** The planner's action types. */
export const PLANNER_ACTION_TYPES = ['KEY_PRESS', 'TYPE_INTO', 'CLICK', 'WAIT', 'MOUSE_MOVE', 'SCROLL', 'DRAG', 'FINISH'] as const;

const num = z.number().refine(Number.isFinite, 'must be a finite number');
const point = z.strictObject({ x: num, y: num });
const button = z.enum(['left', 'right', 'middle']);
const description = z.string().optional();

/** Schema of one planner action. */
export const plannerActionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('CLICK'), x: num, y: num, button: button.optional(), click_count: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(), description }),
  z.strictObject({ type: z.literal('MOUSE_MOVE'), x: num, y: num, description }),
  z.strictObject({ type: z.literal('DRAG'), start: point, end: point, button: button.optional(), description }),
  z.strictObject({
    type: z.literal('SCROLL'),
    x: num,
    y: num,
    direction: z.enum(['up', 'down', 'left', 'right']),
    amount: z.number().int().min(1).max(MAX_SCROLL_REPEAT).optional(),
    description,
  }),
  z
    .strictObject({ type: z.literal('TYPE_INTO'), text: z.string(), x: num.optional(), y: num.optional(), clear: z.boolean().optional(), description })
    .refine((a) => (a.x === undefined) === (a.y === undefined), { message: 'give both x and y, or neither', path: ['x'] }),
  z.strictObject({ type: z.literal('KEY_PRESS'), keys: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), description }),
  z.strictObject({ type: z.literal('WAIT'), seconds: z.number().min(0).max(MAX_WAIT_SECONDS), description }),
  z.strictObject({
    type: z.literal('FINISH'),
    success: z.boolean().optional(),
    message: z.string().optional(),
    status: z.enum(FINISH_STATUSES).optional(),
    reason: z.string().optional(),
    description,
  }),
]);

/** One planner action. */
export type PlannerAction = z.infer<typeof plannerActionSchema>;

/** Schema of the planner's answer. */
export const plannerResponseSchema = z.looseObject({
  actions: z.array(plannerActionSchema).min(1),
  id: z.string().optional(),
  usage: z.record(z.string(), z.unknown()).optional(),
});

/** The planner's answer. */
export type PlannerResponse = z.infer<typeof plannerResponseSchema>;

/** One entry of `previous_steps`: an action performed, and the act() step it came in. */
export interface PreviousStep {
  step: number;
  action: PlannerAction;
}

/** The request body. */
export interface PlannerRequest {
  task: string;
  /** Base64 PNG. */
  screenshot: string;
  resolution: { width: number; height: number };
  previous_steps: PreviousStep[];
  /** What the navigation guard blocked since the last request ("domain not allowed: URL (rule)" lines and a hint); absent when nothing was. */
  observations?: string[];
}

/** Validate a parsed response body; the error lists the bad fields (`actions.2.x: …`). */
export function parsePlannerResponse(body: unknown): { ok: true; value: PlannerResponse } | { ok: false; error: string } {
  const r = plannerResponseSchema.safeParse(body);
  return r.success ? { ok: true, value: r.data } : { ok: false, error: formatIssues(r.error) };
}

/**
 * The trace steps that perform `a` on the screen of `frame`. Throws Error (message for the
 * MODEL_ERR_BAD_RESPONSE the caller raises) on coordinates outside the screenshot, unknown key
 * names or text that cannot be typed.
 */
export function plannerActionSteps(a: PlannerAction, frame: CoordinateFrame): ActionStep[] {
  const at = (x: number, y: number, field = 'x, y') => {
    const problem = coordinateProblem(frame, x, y);
    if (problem) throw new Error(`${a.type}: ${field} ${problem}`);
    return toScreen(frame, x, y);
  };
  switch (a.type) {
    case 'CLICK':
      return [
        { action: 'mouse_click', params: { position: at(a.x, a.y), button: a.button ?? 'left', click_type: (['single', 'double', 'triple'] as const)[(a.click_count ?? 1) - 1] } },
      ];
    case 'MOUSE_MOVE':
      return [{ action: 'mouse_move', params: { position: at(a.x, a.y) } }];
    case 'DRAG':
      return [{ action: 'mouse_drag', params: { start: at(a.start.x, a.start.y, 'start'), end: at(a.end.x, a.end.y, 'end'), button: a.button ?? 'left' } }];
    case 'SCROLL':
      return [{ action: 'mouse_scroll', params: { position: at(a.x, a.y), direction: a.direction, repeat: a.amount ?? 1 } }];
    case 'TYPE_INTO': {
      try {
        planTypeText(a.text, { prime: false });
      } catch (e) {
        throw new Error(`TYPE_INTO: text cannot be typed: ${(e as Error).message}`);
      }
      const steps: ActionStep[] = [];
      if (a.x !== undefined && a.y !== undefined) steps.push({ action: 'mouse_click', params: { position: at(a.x, a.y), button: 'left', click_type: 'single' } });
      if (a.clear) steps.push({ action: 'press_keys', params: { keys: 'ctrl+a' } });
      if (a.text !== '') steps.push({ action: 'type_text', params: { text: a.text } });
      else if (a.clear) steps.push({ action: 'press_keys', params: { keys: 'BackSpace' } });
      return steps;
    }
    case 'KEY_PRESS': {
      const keys = Array.isArray(a.keys) ? a.keys.join('+') : a.keys;
      try {
        parseKeys(keys);
      } catch (e) {
        throw new Error(`KEY_PRESS: ${(e as Error).message}`);
      }
      return [{ action: 'press_keys', params: { keys } }];
    }
    case 'WAIT':
      return [{ action: 'wait', params: { seconds: a.seconds } }];
    case 'FINISH': {
      const params: Record<string, unknown> = {};
      if (a.success !== undefined) params.success = a.success;
      if (a.message !== undefined) params.message = a.message;
      if (a.status !== undefined) params.status = a.status;
      if (a.reason !== undefined) params.reason = a.reason;
      return [{ action: 'finish', params }];
    }
  }
}
