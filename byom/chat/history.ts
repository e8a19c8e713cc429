/**
 * ChatAgent's conversation: the system prompt, then user turns (text + a screenshot) and
 * assistant turns (the raw replies). Only the last `keepScreens` screenshots are sent; older ones
 * become a one-line text placeholder, so the request stays small however long the run.
 */
import type { ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions';

/** One screenshot in the conversation. */
export interface ConversationImage {
  base64: string;
  mimeType: string;
}

type Turn = { role: 'user'; text: string; image?: { url: string; index: number } } | { role: 'assistant'; text: string };

/** The placeholder that replaces screenshot `index` (1-based) once it is older than the last K. */
export function omittedScreenshot(index: number): string {
  return `[screenshot ${index} omitted: only the latest screenshots are kept]`;
}

/** The messages of a chat with a screen-watching model, keeping the last K screenshots. */
export class Conversation {
  readonly #turns: Turn[] = [];
  #images = 0;

  constructor(
    /** The system prompt. */
    readonly system: string,
    /** How many of the latest screenshots are sent (at least 1). */
    readonly keepScreens: number,
  ) {}

  /** Number of screenshots added so far. */
  get screenshots(): number {
    return this.#images;
  }

  /** Add a user turn, with a screenshot if given. */
  addUser(text: string, image?: ConversationImage): void {
    if (image) this.#turns.push({ role: 'user', text, image: { url: `data:${image.mimeType};base64,${image.base64}`, index: ++this.#images } });
    else this.#turns.push({ role: 'user', text });
  }

  /** Add the model's reply. */
  addAssistant(text: string): void {
    this.#turns.push({ role: 'assistant', text });
  }

  /** The messages to send now. */
  messages(): ChatCompletionMessageParam[] {
    const firstKept = this.#images - this.keepScreens + 1;
    const out: ChatCompletionMessageParam[] = [{ role: 'system', content: this.system }];
    for (const t of this.#turns) {
      if (t.role === 'assistant') {
        out.push({ role: 'assistant', content: t.text });
        continue;
      }
      if (!t.image) {
        out.push({ role: 'user', content: t.text });
        continue;
      }
      const parts: ChatCompletionContentPart[] = [{ type: 'text', text: t.text }];
      if (t.image.index >= firstKept) {
        parts.push({ type: 'image_url', image_url: { url: t.image.url } });
      } else {
        parts.push({ type: 'text', text: omittedScreenshot(t.image.index) });
      }
      out.push({ role: 'user', content: parts });
    }
    return out;
  }
}
