import { describe, expect, it } from 'vitest';
import { closestNames, editDistance } from './suggest.ts';

describe('editDistance', () => {
  it('counts inserts, deletes and substitutions', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
    expect(editDistance('esacpe', 'escape')).toBe(2);
  });
});

describe('closestNames', () => {
  it('returns the nearest names first, ignoring case and separators, within the limit', () => {
    expect(closestNames('page-dwn', ['Page_Up', 'Page_Down', 'pagedown', 'Home'])).toEqual(['Page_Down', 'Page_Up']);
    expect(closestNames('zzzzzz', ['Return', 'Escape'])).toEqual([]);
    expect(closestNames('ret', ['Return', 'ret', 'Rat', 'Red', 'Set'], 2)).toEqual(['ret', 'Rat']);
  });
});
