/**
 * The Messages API conversation of one run: the task and first screenshot, each assistant reply
 * (sent back as it came), and the user turns of tool results. Screenshots dominate the tokens,
 * so `trimImages` keeps the newest K image blocks (top level or inside tool results) and replaces
 * each older one by a short text block, in place: the conversation stays valid (every tool_use
 * still has its tool_result) and its size stays bounded.
 */
import type {
  BetaContentBlock,
  BetaContentBlockParam,
  BetaImageBlockParam,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';

/** The text an image block is replaced by when trimmed. */
export const TRIMMED_IMAGE_TEXT = '[older screenshot removed to save tokens]';

/** A base64 image block. */
export function imageBlock(base64: string, mimeType: 'image/png' | 'image/jpeg'): BetaImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: mimeType, data: base64 } };
}

/** A text block. */
export function textBlock(text: string): BetaTextBlockParam {
  return { type: 'text', text };
}

/** A tool_result block: `content` as given (text and images), `is_error` when set. */
export function toolResult(toolUseId: string, content: Array<BetaTextBlockParam | BetaImageBlockParam>, isError = false): BetaToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: toolUseId, ...(content.length > 0 ? { content } : {}), ...(isError ? { is_error: true } : {}) };
}

/** An assistant reply's content blocks as request params (what the API expects back in the next request). */
export function assistantParams(content: readonly BetaContentBlock[]): BetaContentBlockParam[] {
  return content.map((b): BetaContentBlockParam => {
    switch (b.type) {
      case 'text':
        return { type: 'text', text: b.text };
      case 'tool_use':
        return { type: 'tool_use', id: b.id, name: b.name, input: b.input };
      case 'thinking':
        return { type: 'thinking', thinking: b.thinking, signature: b.signature };
      case 'redacted_thinking':
        return { type: 'redacted_thinking', data: b.data };
      default:
        // Server tool blocks and the like go back exactly as they came.
        return b as unknown as BetaContentBlockParam;
    }
  });
}

/** Number of image blocks in `messages` (top level and inside tool results). */
export function countImages(messages: readonly BetaMessageParam[]): number {
  let n = 0;
  visitImages(messages, () => {
    n++;
    return false;
  });
  return n;
}

/**
 * Keep the newest `keep` image blocks of `messages`; replace each older one by a text block
 * (TRIMMED_IMAGE_TEXT). Modifies `messages` in place; returns the number of images replaced.
 */
export function trimImages(messages: BetaMessageParam[], keep: number): number {
  const total = countImages(messages);
  let drop = total - Math.max(0, keep);
  if (drop <= 0) return 0;
  let replaced = 0;
  visitImages(messages, () => {
    if (drop <= 0) return false;
    drop--;
    replaced++;
    return true;
  });
  return replaced;
}

/** Visit every image block from the oldest; where `replace()` returns true the block becomes a text block. */
function visitImages(messages: readonly BetaMessageParam[], replace: () => boolean): void {
  for (const m of messages) {
    const blocks = m.content;
    if (!Array.isArray(blocks)) continue;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i]!;
      if (b.type === 'image') {
        if (replace()) blocks[i] = textBlock(TRIMMED_IMAGE_TEXT);
      } else if (b.type === 'tool_result' && Array.isArray(b.content)) {
        const inner = b.content;
        for (let j = 0; j < inner.length; j++) {
          if (inner[j]!.type === 'image' && replace()) inner[j] = textBlock(TRIMMED_IMAGE_TEXT);
        }
      }
    }
  }
}
