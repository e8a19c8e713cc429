/** `--only`: ids and globs over a task file, in file order; a pattern matching nothing is EVAL_ERR_NO_TASKS. */
import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { globRegExp, parseOnly, selectTasks } from './select.ts';

const tasks = ['click-1', 'click-2', 'click-10', 'form-1', 'form.v2-1', 'drag-1'].map((id) => ({ id }));
const ids = (patterns: string[]) => selectTasks(tasks, patterns).map((t) => t.id);

describe('--only', () => {
  it('splits comma-separated lists from several flags, dropping empty items', () => {
    expect(parseOnly(['click-*, form-1', 'drag-1,,'])).toEqual(['click-*', 'form-1', 'drag-1']);
    expect(parseOnly([' , '])).toEqual([]);
  });

  it('selects exact ids and globs (* any run, ? one character), whole-id matches, in file order', () => {
    expect(ids([])).toEqual(tasks.map((t) => t.id));
    expect(ids(['form-1'])).toEqual(['form-1']);
    expect(ids(['drag-1', 'click-?'])).toEqual(['click-1', 'click-2', 'drag-1']);
    expect(ids(['click-*'])).toEqual(['click-1', 'click-2', 'click-10']);
    expect(ids(['*-1'])).toEqual(['click-1', 'form-1', 'form.v2-1', 'drag-1']);
    // "." is literal, not "any character"; a match is of the whole id.
    expect(ids(['form.v2-*'])).toEqual(['form.v2-1']);
    expect(globRegExp('form.v2-1').test('formXv2-1')).toBe(false);
  });

  it('a pattern that matches nothing is EVAL_ERR_NO_TASKS naming it, even beside patterns that match', () => {
    for (const patterns of [['click'], ['form-1', 'nope-*'], ['CLICK-1']]) {
      let err: unknown;
      try {
        selectTasks(tasks, patterns);
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'EVAL_ERR_NO_TASKS'), patterns.join(',')).toBe(true);
      expect((err as { details: { patterns: string[] } }).details.patterns).toEqual(patterns.filter((p) => p !== 'form-1'));
    }
  });
});
