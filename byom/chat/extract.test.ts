import { describe, expect, it } from 'vitest';
import { balancedObjects, extractJsonObject } from './extract.ts';

describe('extractJsonObject', () => {
  const click = { action: 'click', coordinate: [10, 20] };

  it('takes the whole reply when it is an object', () => {
    expect(extractJsonObject(' {"action":"click","coordinate":[10,20]}\n')).toEqual({ ok: true, value: click });
  });

  it('takes the object inside a ```json fence, or a bare fence, with prose around', () => {
    expect(extractJsonObject('Thinking... the button is there.\n```json\n{"action": "click", "coordinate": [10, 20]}\n```\nDone.')).toEqual({ ok: true, value: click });
    expect(extractJsonObject('```\n{"action": "click", "coordinate": [10, 20]}\n```')).toEqual({ ok: true, value: click });
    expect(extractJsonObject('```json {"action": "click", "coordinate": [10, 20]} ```')).toEqual({ ok: true, value: click });
  });

  it('finds an object in prose, ignoring braces inside strings and preferring one with an "action" key', () => {
    const r = extractJsonObject('I see {curly} text. Plan: {"note": "x"} then {"action": "type", "text": "a } b { \\" c"} ok');
    expect(r).toEqual({ ok: true, value: { action: 'type', text: 'a } b { " c' } });
    expect(extractJsonObject('Answer: {"action": "click", "coordinate": [10, 20], "thought": "{not json}"}.')).toEqual({
      ok: true,
      value: { ...click, thought: '{not json}' },
    });
  });

  it('explains what is wrong when nothing usable is found', () => {
    for (const reply of ['', null, 'I will click the button.', "{'action': 'click'}", '{"action": "click",}', '[{"action": "click"}]']) {
      const r = extractJsonObject(reply);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.length).toBeGreaterThan(10);
    }
    const arr = extractJsonObject('[{"action": "click"}]');
    expect(!arr.ok && arr.error).toMatch(/array/);
  });

  it('balancedObjects lists top-level objects only', () => {
    expect(balancedObjects('a {"x": {"y": 1}} b {"z": "}"} c {')).toEqual(['{"x": {"y": 1}}', '{"z": "}"}']);
  });
});
