import { describe, expect, it } from 'vitest';
import { needsNewKeysym, splitForChecking } from './type-text.ts';

describe('splitForChecking', () => {
  it('keeps US-keymap runs (ASCII, newlines, tabs) whole and cuts out each character a server may drop', () => {
    expect(splitForChecking('hello\r\nworld\t!')).toEqual([{ text: 'hello\r\nworld\t!', check: false }]);
    expect(splitForChecking('aé€ÿb café')).toEqual([
      { text: 'a', check: false },
      { text: 'é', check: true },
      { text: '€', check: true },
      { text: 'ÿ', check: true },
      { text: 'b caf', check: false },
      { text: 'é', check: true },
    ]);
    // One code point at a time, never a UTF-16 unit: an emoji is one check.
    expect(splitForChecking('😀x')).toEqual([
      { text: '😀', check: true },
      { text: 'x', check: false },
    ]);
  });

  it('needsNewKeysym: off the US keymap only', () => {
    expect([...'aZ~ \n\t'].map(needsNewKeysym)).toEqual([false, false, false, false, false, false]);
    expect([...'éß中😀\u00a0'].map(needsNewKeysym)).toEqual([true, true, true, true, true]);
  });
});
