import { describe, expect, it } from 'vitest';
import type { Finding } from '../types.ts';
import { blockedFromTrace } from './blocked.ts';

describe('blockedFromTrace', () => {
  const entries = [
    { meta: { domain_blocked: [{ url: 'http://evil.test/', rule: 'allowedDomains: no pattern matches', step: 3, resource_type: 'Document', at: 1 }] } },
    { meta: { model_calls: [] } },
    {},
    {
      meta: {
        domain_blocked: [
          { url: 'http://cdn.test/a.js', rule: 'blockedDomains: cdn.test', step: 4, resource_type: 'Script', at: 2 },
          { url: 'http://cdn.test/a.js', rule: 'blockedDomains: cdn.test', step: 5, resource_type: 'Script', at: 3 },
          { url: 'http://seen.test/', step: 4, resource_type: 'Document' },
        ],
      },
    },
  ];
  const known: Finding[] = [{ kind: 'blocked_navigation', step: 4, url: null, message: 'blocked navigation to http://seen.test/' }];

  it('adds one finding per blocked URL the monitor did not report, counting repeats', () => {
    expect(blockedFromTrace(entries, known)).toEqual([
      {
        kind: 'blocked_navigation',
        step: 3,
        url: null,
        message: 'blocked navigation to http://evil.test/',
        excerpt: 'DOMAIN_BLOCKED http://evil.test/\nallowedDomains: no pattern matches',
      },
      {
        kind: 'blocked_navigation',
        step: 4,
        url: null,
        message: 'blocked request (Script) to http://cdn.test/a.js',
        excerpt: 'DOMAIN_BLOCKED http://cdn.test/a.js\nblockedDomains: cdn.test',
        count: 2,
      },
    ]);
  });

  it('nothing when the trace has no blocked request', () => {
    expect(blockedFromTrace([{}, { meta: {} }], [])).toEqual([]);
  });
});
