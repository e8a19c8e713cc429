/**
 * The action schema of ChatAgent's replies: one JSON object per reply, validated strictly with zod
 * and turned into a trace step (`{ action, params }`, snake_case, screen pixels).
 *
 * ```jsonc
 * {"action": "click",        "coordinate": [x, y], "button"?: "left" | "right" | "middle"}
 * {"action": "double_click", "coordinate": [x, y]}
 * {"action": "triple_click", "coordinate": [x, y]}
 * {"action": "right_click",  "coordinate": [x, y]}
 * {"action": "move",         "coordinate": [x, y]}
 * {"action": "drag",         "start": [x, y], "end": [x, y]}
 * {"action": "scroll",       "coordinate": [x, y], "direction": "up" | "down" | "left" | "right", "amount"?: 1..100 (wheel notches, default 3)}
 * {"action": "type",         "text": "..."}
 * {"action": "keys",         "keys": "ctrl+a"}            // one key or chord: Enter, Tab, Escape, BackSpace, ctrl+shift+p, alt+Left
 * {"action": "navigate",     "direction": "back" | "forward"}
 * {"action": "wait",         "seconds": 0..60}
 * {"action": "finish",       "answer"?: "...", "status"?: "finished" | "ambiguity" | "needs_human" | "sensitive_action" | "problem", "reason"?: "..."}
 * ```
 * `finish` with a status other than "finished" stops the run without the task done, for the reason given
 * (Agent.finish: result.json's status and reason).
 * Every action may also carry `"thought": "..."` (kept in the trace entry's meta). Other keys are
 * rejected, as are coordinates outside the coordinate space (see coordinates.ts), unknown key
 * names and text that cannot be typed; the error text goes back to the model.
 */
import { z } from 'zod';
import type { ActionStep } from '../../harness/agent/index.ts';
import { MAX_SCROLL_REPEAT } from '../../harness/agent/index.ts';
import { FINISH_STATUSES } from '../../harness/trace/schema.ts';
import { parseKeys, planTypeText } from '../../harness/keys/index.ts';
import { coordinateProblem, toScreen, type CoordinateFrame } from './coordinates.ts';

/** Action names a reply may use. */
export const CHAT_ACTIONS = ['click', 'double_click', 'triple_click', 'right_click', 'move', 'drag', 'scroll', 'type', 'keys', 'navigate', 'wait', 'finish'] as const;

/** Longest wait a reply may ask for, in seconds. */
export const MAX_CHAT_WAIT_SECONDS = 60;
/** Wheel notches of a scroll without `amount`. */
export const DEFAULT_SCROLL_AMOUNT = 3;

const coordinate = z.tuple([z.number(), z.number()], { error: 'must be [x, y], two numbers' });
const thought = z.string().optional();

/** Schema of one reply (strict: unknown keys are rejected). */
export const chatActionSchema = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('click'), coordinate, button: z.enum(['left', 'right', 'middle']).optional(), thought }),
  z.strictObject({ action: z.literal('double_click'), coordinate, thought }),
  z.strictObject({ action: z.literal('triple_click'), coordinate, thought }),
  z.strictObject({ action: z.literal('right_click'), coordinate, thought }),
  z.strictObject({ action: z.literal('move'), coordinate, thought }),
  z.strictObject({ action: z.literal('drag'), start: coordinate, end: coordinate, thought }),
  z.strictObject({
    action: z.literal('scroll'),
    coordinate,
    direction: z.enum(['up', 'down', 'left', 'right']),
    amount: z.number().int().min(1).max(MAX_SCROLL_REPEAT).optional(),
    thought,
  }),
  z.strictObject({ action: z.literal('type'), text: z.string().min(1), thought }),
  z.strictObject({ action: z.literal('keys'), keys: z.string().min(1), thought }),
  z.strictObject({ action: z.literal('navigate'), direction: z.enum(['back', 'forward']), thought }),
  z.strictObject({ action: z.literal('wait'), seconds: z.number().min(0).max(MAX_CHAT_WAIT_SECONDS), thought }),
  z.strictObject({ action: z.literal('finish'), answer: z.string().optional(), status: z.enum(FINISH_STATUSES).optional(), reason: z.string().optional(), thought }),
]);

/** One validated reply. */
export type ChatAction = z.infer<typeof chatActionSchema>;

/** A validated reply as a trace step, plus the model's thought if it gave one. */
export type ValidatedAction = { ok: true; action: ChatAction; step: ActionStep; thought?: string } | { ok: false; error: string };

/** zod issues as one line: `field: problem; field: problem`. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map(String).join('.');
      if (i.code === 'unrecognized_keys') return `unknown key${i.keys.length > 1 ? 's' : ''} ${i.keys.map((k) => `"${k}"`).join(', ')}`;
      return path ? `${path}: ${i.message}` : i.message;
    })
    .join('; ');
}

/** Validate an extracted object against the schema, the coordinate space and the key/text rules, and map it to a trace step. */
export function validateChatAction(value: Record<string, unknown>, frame: CoordinateFrame): ValidatedAction {
  const name = value.action;
  if (typeof name !== 'string' || !(CHAT_ACTIONS as readonly string[]).includes(name)) {
    return { ok: false, error: `"action" must be one of ${CHAT_ACTIONS.map((a) => `"${a}"`).join(', ')}; got ${JSON.stringify(name) ?? 'nothing'}` };
  }
  const parsed = chatActionSchema.safeParse(value);
  if (!parsed.success) return { ok: false, error: `${name}: ${formatIssues(parsed.error)}` };
  const a = parsed.data;
  const at = (field: string, c: readonly [number, number]) => {
    const problem = coordinateProblem(frame, c[0], c[1]);
    if (problem) throw new Error(`${name}: ${field} ${problem}`);
    return toScreen(frame, c[0], c[1]);
  };
  let step: ActionStep;
  try {
    step = toStep(a, at);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  return a.thought !== undefined ? { ok: true, action: a, step, thought: a.thought } : { ok: true, action: a, step };
}

function toStep(a: ChatAction, at: (field: string, c: readonly [number, number]) => { x: number; y: number }): ActionStep {
  switch (a.action) {
    case 'click':
      return { action: 'mouse_click', params: { position: at('coordinate', a.coordinate), button: a.button ?? 'left', click_type: 'single' } };
    case 'double_click':
      return { action: 'mouse_click', params: { position: at('coordinate', a.coordinate), button: 'left', click_type: 'double' } };
    case 'triple_click':
      return { action: 'mouse_click', params: { position: at('coordinate', a.coordinate), button: 'left', click_type: 'triple' } };
    case 'right_click':
      return { action: 'mouse_click', params: { position: at('coordinate', a.coordinate), button: 'right', click_type: 'single' } };
    case 'move':
      return { action: 'mouse_move', params: { position: at('coordinate', a.coordinate) } };
    case 'drag':
      return { action: 'mouse_drag', params: { start: at('start', a.start), end: at('end', a.end), button: 'left' } };
    case 'scroll':
      return { action: 'mouse_scroll', params: { position: at('coordinate', a.coordinate), direction: a.direction, repeat: a.amount ?? DEFAULT_SCROLL_AMOUNT } };
    case 'type':
      try {
        planTypeText(a.text, { prime: false });
      } catch (e) {
        throw new Error(`type: text cannot be typed: ${(e as Error).message}`);
      }
      return { action: 'type_text', params: { text: a.text } };
    case 'keys':
      try {
        parseKeys(a.keys);
      } catch (e) {
        throw new Error(`keys: ${(e as Error).message}`);
      }
      return { action: 'press_keys', params: { keys: a.keys } };
    case 'navigate':
      return { action: 'page_navigation', params: { direction: a.direction } };
    case 'wait':
      return { action: 'wait', params: { seconds: a.seconds } };
    case 'finish':
      return {
        action: 'finish',
        params: {
          ...(a.answer !== undefined ? { answer: a.answer } : {}),
          ...(a.status !== undefined ? { status: a.status } : {}),
          ...(a.reason !== undefined ? { reason: a.reason } : {}),
        },
      };
  }
}
