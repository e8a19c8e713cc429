/** The status the viewer lists and filters a run by: a stop status (needs_human, cost_cap…) is its own, not a failure. */
import { describe, expect, it } from 'vitest';
import { statusOf as appStatusOf } from './app/common.ts';
import { statusOf } from './runs.ts';

describe('statusOf', () => {
  const base = { status: 'finished', success: false, infra_error: false, invalid: null };
  // The server's statusOf takes a RunScore's fields; the page's any status string: both are called alike here.
  const fs = [statusOf as unknown as typeof appStatusOf, appStatusOf];
  it.each(fs)('names a stopped run by its stop status; success, failure, infra and invalid as before', (f) => {
    expect(f({ ...base, status: 'needs_human', stopped: 'needs_human' })).toBe('needs_human');
    expect(f({ ...base, status: 'cost_cap', stopped: 'cost_cap' })).toBe('cost_cap');
    expect(f({ ...base, stopped: null })).toBe('failure');
    expect(f({ ...base, success: true })).toBe('success');
    expect(f({ ...base, status: 'infra_error', infra_error: true, stopped: null })).toBe('infra_error');
    expect(f({ ...base, invalid: { code: 'X' }, stopped: 'problem' })).toBe('invalid');
  });
});
