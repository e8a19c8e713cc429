import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../harness/errors.ts';
import { checkDomainFlags, parseDomainFlags } from './domains.ts';
import { parseEvalArgs } from './eval.ts';
import { parseRunArgs } from './run.ts';

describe('--allowed-domains / --blocked-domains', () => {
  it('split at commas, repeatable, blanks dropped', () => {
    expect(parseDomainFlags(['a.com, *.b.com', 'https://c.org:8443'], ['evil.com,'])).toEqual({
      allowedDomains: ['a.com', '*.b.com', 'https://c.org:8443'],
      blockedDomains: ['evil.com'],
    });
    expect(parseDomainFlags([], [])).toEqual({});
  });

  it('reach vncua eval and vncua run', () => {
    const e = parseEvalArgs(['--tasks', 't.json', '--agent', 'replay', '--out', 'o', '--allowed-domains', 'a.com,b.com', '--blocked-domains', 'ads.a.com']);
    expect(e).toMatchObject({ allowedDomains: ['a.com', 'b.com'], blockedDomains: ['ads.a.com'] });
    expect(parseRunArgs(['--agent', 'replay', '--blocked-domains', 'evil.com'])).toMatchObject({ blockedDomains: ['evil.com'] });
    expect(parseRunArgs(['--agent', 'replay'])).not.toHaveProperty('allowedDomains');
  });

  it('a malformed pattern is GUARD_ERR_BAD_PATTERN naming it on one line (checked before anything starts)', () => {
    const o = parseEvalArgs(['--tasks', 't.json', '--agent', 'replay', '--out', 'o', '--blocked-domains', 'ok.com,ev*l.com'])!;
    let err: unknown;
    try {
      checkDomainFlags(o);
    } catch (e) {
      err = e;
    }
    expect(isVncuaError(err, 'GUARD_ERR_BAD_PATTERN')).toBe(true);
    expect((err as Error).message).toMatch(/^blockedDomains pattern "ev\*l\.com" is not valid: .*\*\.example\.com/);
    expect((err as Error).message).not.toContain('\n');
    expect(() => checkDomainFlags(parseRunArgs(['--agent', 'replay', '--allowed-domains', 'https://x.com/path'])!)).toThrow(
      expect.objectContaining({ code: 'GUARD_ERR_BAD_PATTERN' }),
    );
    expect(() => checkDomainFlags(parseDomainFlags(['a.com'], ['*.b.com']))).not.toThrow();
  });
});
