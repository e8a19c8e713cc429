import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { parseTasks } from '../tasks.ts';
import { judgeNames, needsLivePage, parseJudgeArg, parseJudgeSpec, withSentinel } from './spec.ts';
import { globToRegExp, matchUrl } from './url-match.ts';

function specError(fn: () => unknown): { code: string; message: string; field: unknown } {
  try {
    fn();
  } catch (e) {
    if (isVncuaError(e)) return { code: e.code, message: e.message, field: e.details?.field };
    throw e;
  }
  throw new Error('no error');
}

describe('judge specs', () => {
  it('parses every type, bare names and llm:MODEL', () => {
    expect(parseJudgeArg('sentinel')).toEqual({ type: 'sentinel' });
    expect(parseJudgeArg('heuristic')).toEqual({ type: 'heuristic' });
    expect(parseJudgeArg('llm:gpt-4.1-mini')).toEqual({ type: 'llm', model: 'gpt-4.1-mini' });
    expect(parseJudgeArg('hybrid:m')).toEqual({ type: 'hybrid', llm: { model: 'm' } });
    expect(parseJudgeArg('{"type":"url","glob":"*/done*"}')).toEqual({ type: 'url', glob: '*/done*' });
    expect(parseJudgeSpec({ type: 'dom', selector: '#ok', visible: true }, 'x')).toEqual({ type: 'dom', selector: '#ok', visible: true });
    expect(parseJudgeSpec({ type: 'llm', model: 'm', when: 'sample', sample: 0.25, seed: 7 }, 'x')).toMatchObject({ when: 'sample', sample: 0.25 });
  });

  it('a bad spec is one JUDGE_ERR_BAD_SPEC naming the judge and the field', () => {
    const cases: Array<[string, string]> = [
      ['nope', 'type'],
      ['llm', 'model'],
      ['{"type":"url","regex":"(unclosed"}', 'regex'],
      ['{"type":"url","glob":"a","exact":"b"}', 'exact'],
      ['{"type":"dom"}', 'text'],
      ['{"type":"llm","model":"m","when":"sample"}', 'sample'],
      ['{"type":"llm","model":"m","when":"sample","sample":1.5}', 'sample'],
      ['{"type":"heuristic","stuckSteps":1}', 'stuckSteps'],
      ['{"type":"sentinel","extra":1}', 'extra'],
      ['{"type":"llm","model":"m","apiKeyEnv":"sk-123 secret"}', 'apiKeyEnv'],
      ['{not json', ''],
    ];
    for (const [arg, field] of cases) {
      const e = specError(() => parseJudgeArg(arg, '--judge #2'));
      expect(e.code, arg).toBe('JUDGE_ERR_BAD_SPEC');
      expect(e.field, arg).toBe(field);
      expect(e.message, arg).toContain('--judge #2');
      expect(e.message.split('\n')).toHaveLength(1);
    }
  });

  it('names: the type, numbered when it repeats; the sentinel always first; which judges need the page', () => {
    expect(
      judgeNames([
        { type: 'llm', model: 'a' },
        { type: 'llm', model: 'b' },
        { type: 'url', exact: 'x', name: 'done-url' },
      ]),
    ).toEqual(['llm', 'llm-2', 'done-url']);
    expect(withSentinel([{ type: 'heuristic' }]).map((s) => s.type)).toEqual(['sentinel', 'heuristic']);
    expect(withSentinel([{ type: 'heuristic' }, { type: 'sentinel' }]).map((s) => s.type)).toEqual(['heuristic', 'sentinel']);
    expect(needsLivePage({ type: 'url', exact: 'x' })).toBe(true);
    expect(needsLivePage({ type: 'heuristic' })).toBe(false);
    expect(needsLivePage({ type: 'hybrid', judges: [{ type: 'expression', expression: 'true' }], llm: { model: 'm' } })).toBe(true);
  });

  it('a task file takes judges per task and names a bad judge field', () => {
    const ok = parseTasks([{ id: 't', goal: 'g', url: 'p.html', success: { sentinel: 'x' }, judges: [{ type: 'url', glob: '*/p.html' }, { type: 'heuristic' }] }]);
    expect(ok.tasks[0]!.judges).toEqual([{ type: 'url', glob: '*/p.html' }, { type: 'heuristic' }]);
    let issues: unknown;
    try {
      parseTasks([{ id: 't', goal: 'g', url: 'p.html', success: { sentinel: 'x' }, judges: [{ type: 'heuristic' }, { type: 'url', regex: '(' }] }]);
    } catch (e) {
      expect(isVncuaError(e, 'EVAL_ERR_BAD_TASKS')).toBe(true);
      issues = (e as { details: { issues: unknown } }).details.issues;
    }
    expect(issues).toEqual([{ index: 0, field: 'judges.1.regex', problem: 'is not a valid regular expression' }]);
  });
});

describe('url match', () => {
  it('exact, glob and regex', () => {
    const u = 'http://127.0.0.1:4000/pages/form.html?done=1#top';
    expect(matchUrl({ type: 'url', exact: u }, u).match).toBe(true);
    expect(matchUrl({ type: 'url', exact: u }, `${u}x`).match).toBe(false);
    expect(matchUrl({ type: 'url', glob: '*/pages/form.html?done=?#*' }, u).match).toBe(true);
    expect(matchUrl({ type: 'url', glob: '*/pages/form.html' }, u).match).toBe(false);
    expect(matchUrl({ type: 'url', regex: 'done=\\d' }, u)).toEqual({ match: true, rule: 'regex done=\\d' });
    expect(matchUrl({ type: 'url', regex: '^https:' }, u).match).toBe(false);
    // Regex characters in a glob are literal.
    expect(globToRegExp('a.b(c)').test('a.b(c)')).toBe(true);
    expect(globToRegExp('a.b(c)').test('axb(c)')).toBe(false);
  });
});
