/** The conversation helpers: history trimming keeps the newest K images, and replies go back as params. */
import type { BetaContentBlock, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import { TRIMMED_IMAGE_TEXT, assistantParams, countImages, imageBlock, textBlock, toolResult, trimImages } from './conversation.ts';

/** A conversation: task + image, then `turns` tool rounds each answered with an image (and a zoom image in round 2). */
function conversation(turns: number): BetaMessageParam[] {
  const msgs: BetaMessageParam[] = [{ role: 'user', content: [textBlock('task'), imageBlock('img0', 'image/png')] }];
  for (let t = 1; t <= turns; t++) {
    msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id: `tu${t}`, name: 'computer', input: { action: 'screenshot' } }] });
    const result = toolResult(`tu${t}`, t === 2 ? [imageBlock('zoom2', 'image/png')] : [textBlock('ok'), imageBlock(`img${t}`, 'image/png')]);
    msgs.push({ role: 'user', content: t === 2 ? [result, imageBlock('img2', 'image/png')] : [result] });
  }
  return msgs;
}

/** The data of every image left, oldest first. */
function imageData(msgs: BetaMessageParam[]): string[] {
  const out: string[] = [];
  for (const m of msgs) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'image' && b.source.type === 'base64') out.push(b.source.data);
      if (b.type === 'tool_result' && Array.isArray(b.content)) for (const c of b.content) if (c.type === 'image' && c.source.type === 'base64') out.push(c.source.data);
    }
  }
  return out;
}

describe('trimImages', () => {
  it('keeps the newest K images (top level and inside tool results) and replaces older ones by text, in place', () => {
    const msgs = conversation(4);
    expect(countImages(msgs)).toBe(6);
    expect(imageData(msgs)).toEqual(['img0', 'img1', 'zoom2', 'img2', 'img3', 'img4']);
    expect(trimImages(msgs, 3)).toBe(3);
    expect(imageData(msgs)).toEqual(['img2', 'img3', 'img4']);
    expect(msgs[0]!.content).toEqual([textBlock('task'), textBlock(TRIMMED_IMAGE_TEXT)]);
    expect(msgs[2]!.content).toEqual([toolResult('tu1', [textBlock('ok'), textBlock(TRIMMED_IMAGE_TEXT)])]);
    // Nothing more to do at the limit; a smaller limit trims further.
    expect(trimImages(msgs, 3)).toBe(0);
    expect(trimImages(msgs, 1)).toBe(2);
    expect(imageData(msgs)).toEqual(['img4']);
    // tool_result ids and the turn structure are untouched.
    expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
  });
});

describe('assistantParams', () => {
  it('turns reply blocks into the params the next request sends back', () => {
    const reply = [
      { type: 'text', text: 'I will click.', citations: null },
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'redacted_thinking', data: 'xyz' },
      { type: 'tool_use', id: 'toolu_1', name: 'computer', input: { action: 'left_click', coordinate: [1, 2] }, caller: { type: 'direct' } },
    ] as BetaContentBlock[];
    expect(assistantParams(reply)).toEqual([
      { type: 'text', text: 'I will click.' },
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'redacted_thinking', data: 'xyz' },
      { type: 'tool_use', id: 'toolu_1', name: 'computer', input: { action: 'left_click', coordinate: [1, 2] } },
    ]);
    expect(toolResult('x', [], true)).toEqual({ type: 'tool_result', tool_use_id: 'x', is_error: true });
  });
});
