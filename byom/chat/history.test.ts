import { describe, expect, it } from 'vitest';
import { Conversation, omittedScreenshot } from './history.ts';

describe('Conversation', () => {
  it('sends the system prompt, every turn in order, and only the last K screenshots', () => {
    const c = new Conversation('SYSTEM', 2);
    for (let i = 1; i <= 4; i++) {
      c.addUser(`turn ${i}`, { base64: `IMG${i}`, mimeType: 'image/png' });
      c.addAssistant(`reply ${i}`);
    }
    c.addUser('plain text');
    const m = c.messages();
    expect(m[0]).toEqual({ role: 'system', content: 'SYSTEM' });
    expect(m.length).toBe(1 + 8 + 1);
    const images = JSON.stringify(m).match(/data:image\/png;base64,IMG\d/g);
    expect(images).toEqual(['data:image/png;base64,IMG3', 'data:image/png;base64,IMG4']);
    expect(m[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'turn 1' },
        { type: 'text', text: omittedScreenshot(1) },
      ],
    });
    expect(m[7]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'turn 4' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,IMG4' } },
      ],
    });
    expect(m[8]).toEqual({ role: 'assistant', content: 'reply 4' });
    expect(m[9]).toEqual({ role: 'user', content: 'plain text' });
    expect(c.screenshots).toBe(4);
  });
});
