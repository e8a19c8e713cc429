import { describe, expect, it } from 'vitest';
import { entryIssue, issueField } from './parse.ts';
import { ACTION_NAMES, ACTION_PARAMS, RUN_STATUSES, executionEntrySchema, failedEntrySchema, okEntrySchema, runResultSchema, type TraceEntryInput } from './schema.ts';
import { sampleEntry } from './test-fixtures/entries.ts';

/** A full entry as the writer would produce it. */
function full(index: number, input: TraceEntryInput = sampleEntry(index)): Record<string, unknown> {
  return { index, ...input, duration_ms: input.ended_at - input.started_at };
}

/** Dotted field of the first issue, or undefined when the entry is valid. */
function badField(entry: unknown): string | undefined {
  const issue = entryIssue(entry);
  return issue && issueField(issue);
}

describe('trace entry schema', () => {
  it('has a params schema for every action name', () => {
    expect(Object.keys(ACTION_PARAMS)).toEqual([...ACTION_NAMES]);
  });

  it('accepts every sample entry; ok entries strictly, failed ones only through the failed schema', () => {
    for (let i = 0; i < 63; i++) {
      const e = full(i);
      expect(executionEntrySchema.safeParse(e).success, `entry ${i}`).toBe(true);
      expect(badField(e), `entry ${i}`).toBeUndefined();
      expect(okEntrySchema.safeParse(e).success).toBe(!('error' in e));
      expect(failedEntrySchema.safeParse(e).success).toBe('error' in e);
    }
  });

  it('validates ok entries strictly, naming the field', () => {
    const click = full(0, { action: 'mouse_click', params: { button: 'right', click_type: 'double' }, task_marked_complete: null, started_at: 5, ended_at: 6 });
    expect(badField(click)).toBeUndefined(); // position is optional for clicks
    expect(badField({ ...click, params: { button: 'right', click_type: 'quadruple' } })).toBe('params.click_type');
    expect(badField({ ...click, params: { button: 'right', click_type: 'single', force: 1 } })).toBe('params.force');
    expect(badField({ ...click, params: { position: { x: 1, y: -2 }, button: 'left', click_type: 'single' } })).toBe('params.position.y');
    expect(badField({ ...click, extra: true })).toBe('extra');
    expect(badField({ ...click, action: 'teleport' })).toBe('action');
    expect(badField({ ...click, task_marked_complete: 'yes' })).toBe('task_marked_complete');
    expect(badField({ ...click, index: -1 })).toBe('index');
    expect(badField({ ...click, index: 1.5 })).toBe('index');
    const { started_at: _s, ...noStart } = click;
    expect(badField(noStart)).toBe('started_at');
    expect(badField({ ...click, duration_ms: -0.5 })).toBe('duration_ms');
    const wait = full(0, { action: 'wait', params: { seconds: 1.5 }, task_marked_complete: true, started_at: 1, ended_at: 2 });
    expect(badField(wait)).toBeUndefined();
    expect(badField({ ...wait, params: { seconds: -1 } })).toBe('params.seconds');
    expect(badField({ ...wait, action: 'mouse_scroll', params: { position: { x: 1, y: 1 }, direction: 'up', repeat: 0 } })).toBe('params.repeat');
    expect(badField({ ...wait, action: 'press_keys', params: { keys: '' } })).toBe('params.keys');
  });

  it('keeps finish params lenient and meta free-form', () => {
    const fin = full(0, {
      action: 'finish',
      params: { params: { answer: 42 }, status: 'success' },
      task_marked_complete: true,
      started_at: 1,
      ended_at: 1,
      meta: { model: { usage: { input_tokens: 10 } } },
    });
    expect(badField(fin)).toBeUndefined();
    expect(badField({ ...fin, params: {} })).toBeUndefined();
    expect(badField({ ...fin, meta: 'x' })).toBe('meta');
  });

  it('validates failed attempts leniently on params but strictly on the rest', () => {
    const failed = full(3, {
      action: 'wait',
      params: { seconds: -1, junk: [1, 2] },
      task_marked_complete: null,
      started_at: 1,
      ended_at: 2,
      error: { code: 'ACTION_ERR_BAD_ARGUMENT', message: 'negative wait' },
    });
    expect(badField(failed)).toBeUndefined();
    expect(badField({ ...failed, action: 'teleport' })).toBe('action');
    expect(badField({ ...failed, params: 'oops' })).toBe('params');
    expect(badField({ ...failed, error: { code: 'X' } })).toBe('error.message');
    expect(badField({ ...failed, error: { code: '', message: 'm' } })).toBe('error.code');
    expect(badField({ ...failed, error: { code: 'X', message: 'm', stack: 's' } })).toBe('error.stack');
    expect(badField({ ...failed, extra: 1 })).toBe('extra');
  });
});

describe('run result schema', () => {
  it('accepts every status, with or without error', () => {
    for (const status of RUN_STATUSES) {
      expect(runResultSchema.safeParse({ status, steps: 0, durationMs: 0 }).success).toBe(true);
      expect(runResultSchema.safeParse({ status, steps: 12, durationMs: 5.5, error: { code: 'E', message: 'm' } }).success).toBe(true);
    }
  });

  it('rejects an unknown status, negative or fractional steps, unknown keys', () => {
    const fields = (v: unknown): string[] => runResultSchema.safeParse(v).error?.issues.map((i) => issueField(i)) ?? [];
    expect(fields({ status: 'done', steps: 0, durationMs: 0 })).toEqual(['status']);
    expect(fields({ status: 'finished', steps: -1, durationMs: 0 })).toEqual(['steps']);
    expect(fields({ status: 'finished', steps: 1.5, durationMs: 0 })).toEqual(['steps']);
    expect(fields({ status: 'finished', steps: 1, durationMs: 0, why: 'x' })).toEqual(['why']);
    expect(fields({ status: 'needs_human', steps: 1, durationMs: 0, reason: 7 })).toEqual(['reason']);
    expect(fields({ status: 'finished', steps: 1 })).toEqual(['durationMs']);
  });

  it('takes success, success_at and the evidence (all optional, for older files), strictly', () => {
    const evidence = { rule: 'text', pattern: '>code#1</', snippet: '<b>code#1</b>', url: 'http://x/', at: 1700000000000.5, entry_index: 3, phase: 'grace' };
    const fields = (v: unknown): string[] => runResultSchema.safeParse(v).error?.issues.map((i) => issueField(i)) ?? [];
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: true, success_at: evidence.at, evidence })).toEqual([]);
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: null, success_at: null, evidence: null })).toEqual([]);
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: true, success_at: 1, evidence: { ...evidence, phase: 'late' } })).toEqual(['evidence.phase']);
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: true, success_at: 1, evidence: { ...evidence, rule: 'regex' } })).toEqual(['evidence.rule']);
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: true, success_at: 1, evidence: { ...evidence, extra: 1 } })).toEqual(['evidence.extra']);
    expect(fields({ status: 'finished', steps: 4, durationMs: 9, success: 'yes' })).toEqual(['success']);
  });
});
