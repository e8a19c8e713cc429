import { describe, expect, it } from 'vitest';
import { isCheckableUrl, pageRank, pickActive } from './active-page.ts';

describe('isCheckableUrl', () => {
  it('keeps web pages and about:blank, skips browser UI, devtools and extensions', () => {
    expect(isCheckableUrl('http://127.0.0.1:8080/task')).toBe(true);
    expect(isCheckableUrl('https://example.test/')).toBe(true);
    expect(isCheckableUrl('file:///tmp/page.html')).toBe(true);
    expect(isCheckableUrl('about:blank')).toBe(true);
    expect(isCheckableUrl('chrome://omnibox-popup.top-chrome/')).toBe(false);
    expect(isCheckableUrl('chrome://newtab/')).toBe(false);
    expect(isCheckableUrl('CHROME://version')).toBe(false);
    expect(isCheckableUrl('chrome-untrusted://print/')).toBe(false);
    expect(isCheckableUrl('chrome-extension://abcdef/popup.html')).toBe(false);
    expect(isCheckableUrl('devtools://devtools/bundled/inspector.html')).toBe(false);
  });
});

describe('pickActive', () => {
  const v = (seq: number, visible: boolean, focused: boolean) => ({ seq, visible, focused });

  it('ranks visible+focused over visible over hidden', () => {
    expect(pageRank(v(0, true, true))).toBe(3);
    expect(pageRank(v(0, true, false))).toBe(2);
    expect(pageRank(v(0, false, true))).toBe(1);
    expect(pageRank(v(0, false, false))).toBe(0);
    expect(pickActive([v(0, true, true), v(1, true, false), v(2, false, false)])?.seq).toBe(0);
    expect(pickActive([v(0, false, false), v(1, true, false), v(2, false, false)])?.seq).toBe(1);
  });

  it('breaks ties by the most recently opened page, whatever the list order', () => {
    expect(pickActive([v(0, true, false), v(3, true, false), v(1, true, false)])?.seq).toBe(3);
    expect(pickActive([v(5, false, false), v(2, false, false)])?.seq).toBe(5);
  });

  it('returns undefined for no pages', () => {
    expect(pickActive([])).toBeUndefined();
  });
});
