import { describe, expect, it } from 'vitest';
import { sampleDraw, unsure } from './judge.ts';
import { parseLlmAnswer } from './llm.ts';
import { disagrees } from './record.ts';

describe('LLM answers, sampling, agreement', () => {
  it('parses the verdict JSON, fenced or with text around it; anything else is a problem', () => {
    expect(parseLlmAnswer('{"verdict":"pass","reason":"the form shows Thanks"}')).toEqual({ ok: { verdict: 'pass', reason: 'the form shows Thanks' } });
    expect(parseLlmAnswer('Sure.\n```json\n{"verdict": "fail", "reason": "nothing was submitted"}\n```')).toEqual({ ok: { verdict: 'fail', reason: 'nothing was submitted' } });
    for (const bad of ['I think it passed', '{"verdict":"maybe","reason":"x"}', '{"verdict":"pass"}', '{"verdict":"pass","reason":"x"', '[]', '']) {
      expect('problem' in parseLlmAnswer(bad), bad).toBe(true);
    }
  });

  it('a seeded sample draws the same runs every time, about the fraction asked', () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `task-${i}@1280x800#1`);
    const picked = keys.filter((k) => sampleDraw(42, k) < 0.25);
    expect(keys.filter((k) => sampleDraw(42, k) < 0.25)).toEqual(picked);
    expect(picked.length).toBeGreaterThan(400);
    expect(picked.length).toBeLessThan(600);
    expect(keys.filter((k) => sampleDraw(43, k) < 0.25)).not.toEqual(picked);
  });

  it('unsure: the cheap verdicts disagree or none is pass/fail; disagreement ignores unknown and skipped', () => {
    expect(unsure(['pass', 'unknown'])).toBe(false);
    expect(unsure(['fail', 'fail'])).toBe(false);
    expect(unsure(['pass', 'fail'])).toBe(true);
    expect(unsure(['unknown'])).toBe(true);
    expect(unsure([])).toBe(true);
    expect(
      disagrees([
        { verdict: 'pass', skipped: false },
        { verdict: 'unknown', skipped: false },
      ]),
    ).toBe(false);
    expect(
      disagrees([
        { verdict: 'pass', skipped: false },
        { verdict: 'fail', skipped: false },
      ]),
    ).toBe(true);
  });
});
