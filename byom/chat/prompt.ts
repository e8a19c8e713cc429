/**
 * ChatAgent's default system prompt: the action schema (actions.ts) and the coordinate space.
 * Override it with the `systemPrompt` option (a string, or a function of these same inputs).
 */
import { KEY_NAMES_SUMMARY } from '../../harness/keys/names.ts';
import { DEFAULT_SCROLL_AMOUNT, MAX_CHAT_WAIT_SECONDS } from './actions.ts';
import { describeSpace, type CoordinateFrame } from './coordinates.ts';

/** What a system prompt is built from. */
export interface PromptInputs {
  /** The task (may be undefined: then the first user message says so). */
  task: string | undefined;
  /** The coordinate frame of the screenshots the model gets. */
  frame: CoordinateFrame;
  /** How many of the latest screenshots stay in the conversation. */
  historyScreens: number;
}

/** The default system prompt for `inputs`. */
export function defaultSystemPrompt(inputs: PromptInputs): string {
  const { frame } = inputs;
  const ex = example(frame);
  return [
    'You operate a computer through its screen. A web browser fills the whole screen.',
    'After each of your replies the action is performed and you get a new screenshot.',
    `Only the latest ${inputs.historyScreens} screenshot${inputs.historyScreens === 1 ? '' : 's'} stay in the conversation; older ones are replaced by a placeholder.`,
    '',
    `Screenshots: ${frame.image.width}x${frame.image.height} pixels. Coordinates: ${describeSpace(frame)}.`,
    '',
    'Reply with exactly ONE JSON object (one action per reply). You may think first, but the reply must contain the JSON object, for example:',
    `{"thought": "The Submit button is at the bottom.", "action": "click", "coordinate": [${ex.x}, ${ex.y}]}`,
    '',
    'Actions ("thought" is optional on every action; no other keys are allowed):',
    '- {"action": "click", "coordinate": [x, y], "button": "left"}  (button: "left" (default), "right" or "middle")',
    '- {"action": "double_click", "coordinate": [x, y]}',
    '- {"action": "triple_click", "coordinate": [x, y]}  (selects a line or paragraph)',
    '- {"action": "right_click", "coordinate": [x, y]}',
    '- {"action": "move", "coordinate": [x, y]}  (hover)',
    '- {"action": "drag", "start": [x, y], "end": [x, y]}  (press at start, move, release at end: drag-and-drop, sliders)',
    `- {"action": "scroll", "coordinate": [x, y], "direction": "down", "amount": ${DEFAULT_SCROLL_AMOUNT}}  (direction up/down/left/right; amount = wheel notches, 1..100, default ${DEFAULT_SCROLL_AMOUNT}; scrolls what is under the coordinate)`,
    '- {"action": "type", "text": "hello"}  (types into the focused field; click the field first; "\\n" presses Enter)',
    '- {"action": "keys", "keys": "ctrl+a"}  (one key or chord: "Enter", "Tab", "Escape", "BackSpace", "ctrl+a", "ctrl+shift+p", "alt+Left")',
    '- {"action": "navigate", "direction": "back"}  (browser history: "back" or "forward")',
    `- {"action": "wait", "seconds": 1}  (0..${MAX_CHAT_WAIT_SECONDS}; for content that loads late)`,
    '- {"action": "finish", "answer": "..."}  (the task is done; answer is optional)',
    '- {"action": "finish", "status": "needs_human", "reason": "..."}  (stop without doing the task, and say why: status "ambiguity" (the task cannot be done as stated), "needs_human" (a login, a CAPTCHA, a confirmation only a person may give), "sensitive_action" (you will not do it without approval) or "problem" (the page or computer is broken))',
    '',
    `Key names: ${KEY_NAMES_SUMMARY}.`,
    'If a reply cannot be used you are told why; answer again with a corrected JSON object.',
  ].join('\n');
}

/** A coordinate in the middle of the space, for the prompt's example. */
function example(frame: CoordinateFrame): { x: number; y: number } {
  switch (frame.space) {
    case 'absolute':
      return { x: Math.round(frame.screen.width / 2), y: Math.round(frame.screen.height * 0.75) };
    case 'normalized1000':
      return { x: 500, y: 750 };
    case 'resized':
      return { x: Math.round(frame.image.width / 2), y: Math.round(frame.image.height * 0.75) };
  }
}
