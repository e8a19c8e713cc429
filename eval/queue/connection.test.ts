import { describe, expect, it } from 'vitest';
import { connectError } from './connection.ts';
import { parseQueueUrl } from './url.ts';

const err = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

describe('connectError', () => {
  it('QUEUE_ERR_TLS for a certificate Node refuses on a rediss:// URL, with its code in the details', () => {
    const e = connectError(parseQueueUrl('rediss://:pw@redis.example:6380/2'), err('certificate has expired', 'CERT_HAS_EXPIRED'), 5000, false);
    expect(e.code).toBe('QUEUE_ERR_TLS');
    expect(e.message).toContain('NODE_EXTRA_CA_CERTS');
    expect(e.message).not.toContain('pw');
    expect(e.details).toMatchObject({ reason: 'certificate has expired', tlsCode: 'CERT_HAS_EXPIRED' });
    expect(connectError(parseQueueUrl('rediss://h:1/0'), err("Hostname/IP does not match certificate's altnames", 'ERR_TLS_CERT_ALTNAME_INVALID'), 5000, false).code).toBe(
      'QUEUE_ERR_TLS',
    );
  });

  it('QUEUE_ERR_UNREACHABLE naming the other scheme for the two mix-ups, and no hint for a refused port', () => {
    const reset = connectError(parseQueueUrl('redis://h:1/0'), err('read ECONNRESET', 'ECONNRESET'), 5000, false);
    expect(reset.code).toBe('QUEUE_ERR_UNREACHABLE');
    expect(reset.message).toMatch(/If that port speaks TLS, use rediss:\/\/\.$/);
    const silent = connectError(parseQueueUrl('rediss://h:1/0'), undefined, 5000, true);
    expect(silent.message).toMatch(/no answer within 5000 ms.*If that port does not speak TLS, use redis:\/\//);
    const refused = connectError(parseQueueUrl('redis://h:1/0'), err('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), 5000, false);
    expect(refused.message).not.toMatch(/TLS/);
  });

  it('QUEUE_ERR_AUTH before anything else', () => {
    expect(connectError(parseQueueUrl('rediss://:x@h:1/0'), err('WRONGPASS invalid username-password pair'), 5000, false).code).toBe('QUEUE_ERR_AUTH');
  });
});
