import { describe, expect, it } from 'vitest';
import { redactSecretsIn, redactUrl } from './redact.ts';

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('redactUrl', () => {
  it('keeps scheme, host and port; drops credentials, path, query and fragment', () => {
    expect(redactUrl(`ws://127.0.0.1:41231/${TOKEN}`)).toBe('ws://127.0.0.1:41231/…');
    expect(redactUrl(`http://127.0.0.1:9222/${TOKEN}/`)).toBe('http://127.0.0.1:9222/…');
    expect(redactUrl('ws://me:hunter2@host.example:6080/websockify?token=x#y')).toBe('ws://…@host.example:6080/…');
    expect(redactUrl('tcp://127.0.0.1:5901')).toBe('tcp://127.0.0.1:5901');
    expect(redactUrl('http://127.0.0.1:9222')).toBe('http://127.0.0.1:9222');
    expect(redactUrl('unix:///tmp/vncua-desktop.x/rfb.sock')).toBe('unix:///tmp/vncua-desktop.x/rfb.sock');
  });

  it('never echoes a string that is not a URL (it may be a secret pasted in the wrong place)', () => {
    expect(redactUrl('hunter2')).not.toContain('hunter2');
  });
});

describe('redactSecretsIn', () => {
  it("removes the URL's token and password from a message, wherever they appear", () => {
    const url = `http://me:pa%24s@127.0.0.1:9222/${TOKEN}/`;
    const text = `connect ECONNREFUSED ws://127.0.0.1:9222/${TOKEN}/devtools/browser/x (pa$s, pa%24s)`;
    const out = redactSecretsIn(text, url);
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain('pa$s');
    expect(out).not.toContain('pa%24s');
    expect(out).toContain('ws://127.0.0.1:9222/…/devtools/browser/x');
  });

  it('leaves short path segments (not secrets) alone', () => {
    expect(redactSecretsIn('GET /json/version failed', 'http://127.0.0.1:9222/json/')).toBe('GET /json/version failed');
  });
});
