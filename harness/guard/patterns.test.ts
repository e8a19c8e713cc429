import { describe, expect, it } from 'vitest';
import { isVncuaError } from '../errors.ts';
import { allowStartPage, checkUrl, compileDomainPolicy, interceptPatterns, mergeDomainLists, originPattern, parseDomainPattern, type AllowedDomains } from './patterns.ts';

/** true when `url` is allowed under the lists. */
function allows(lists: { allowedDomains?: AllowedDomains; blockedDomains?: string[] }, url: string): boolean {
  const policy = compileDomainPolicy(lists);
  if (!policy) return true;
  return checkUrl(policy, url).allowed;
}

const allow = (patterns: string[], url: string) => allows({ allowedDomains: patterns }, url);
const block = (patterns: string[], url: string) => !allows({ blockedDomains: patterns }, url);

describe('parseDomainPattern', () => {
  it('parses hosts, wildcards, schemes, ports and IP literals into canonical form', () => {
    expect(parseDomainPattern('Example.COM.')).toMatchObject({ kind: 'host', host: 'example.com', wildcard: false, scheme: null, port: null });
    expect(parseDomainPattern('*.example.com')).toMatchObject({ kind: 'host', host: 'example.com', wildcard: true });
    expect(parseDomainPattern('HTTPS://*.example.com/')).toMatchObject({ scheme: 'https', host: 'example.com', wildcard: true });
    expect(parseDomainPattern('example.com:8443')).toMatchObject({ host: 'example.com', port: 8443 });
    expect(parseDomainPattern('bücher.example')).toMatchObject({ host: 'xn--bcher-kva.example' });
    expect(parseDomainPattern('[::1]:8080')).toMatchObject({ host: '[::1]', port: 8080 });
    expect(parseDomainPattern('[0:0:0:0:0:0:0:1]')).toMatchObject({ host: '[::1]', port: null });
    expect(parseDomainPattern('127.0.0.1')).toMatchObject({ host: '127.0.0.1' });
    expect(parseDomainPattern('file:')).toMatchObject({ kind: 'scheme', scheme: 'file' });
    expect(parseDomainPattern('file:///')).toMatchObject({ kind: 'scheme', scheme: 'file' });
    expect(parseDomainPattern('DATA:')).toMatchObject({ kind: 'scheme', scheme: 'data' });
    expect(parseDomainPattern('*')).toMatchObject({ kind: 'any', scheme: null });
    expect(parseDomainPattern('https://*')).toMatchObject({ kind: 'any', scheme: 'https' });
    expect(parseDomainPattern('*:8080')).toMatchObject({ kind: 'host', host: '*', port: 8080 });
  });

  const BAD: Array<[string, string]> = [
    ['', 'empty'],
    ['   ', 'empty'],
    ['ex*ample.com', 'wildcard'],
    ['*example.com', 'wildcard'],
    ['a.*.example.com', 'wildcard'],
    ['**.example.com', 'wildcard'],
    ['*.', 'host'],
    ['example..com', 'host'],
    ['.example.com', 'host'],
    ['example.com/path', 'path'],
    ['https://example.com/login', 'path'],
    ['user@example.com', 'credentials'],
    ['https://a.com@evil.com', 'credentials'],
    ['example.com:0', 'port'],
    ['example.com:99999', 'port'],
    ['example.com:http', 'port'],
    ['exa mple.com', 'whitespace'],
    ['example.com?x=1', 'query'],
    ['[::1', 'IPv6'],
    ['[::1]x', 'IPv6'],
    ['*.127.0.0.1', 'IP'],
    ['1http://example.com', 'scheme'],
    ['file://host', 'host'],
    ['-bad-.com', 'host'],
    ['exa$mple.com', 'host'],
  ];
  for (const [pattern] of BAD) {
    it(`refuses ${JSON.stringify(pattern)} with GUARD_ERR_BAD_PATTERN naming it on one line`, () => {
      let err: unknown;
      try {
        parseDomainPattern(pattern, 'blockedDomains');
      } catch (e) {
        err = e;
      }
      expect(isVncuaError(err, 'GUARD_ERR_BAD_PATTERN')).toBe(true);
      const msg = (err as Error).message;
      expect(msg).toContain(`blockedDomains pattern ${JSON.stringify(pattern)}`);
      expect(msg).toContain('*.example.com');
      expect(msg).not.toContain('\n');
      expect((err as { details?: unknown }).details).toEqual({ list: 'blockedDomains', pattern });
    });
  }

  it('compileDomainPolicy names the first bad pattern and its list', () => {
    expect(() => compileDomainPolicy({ allowedDomains: ['ok.com', 'b*d.com'] })).toThrow(/allowedDomains pattern "b\*d\.com"/);
    expect(compileDomainPolicy({})).toBeNull();
    expect(compileDomainPolicy({ allowedDomains: [], blockedDomains: [] })).toBeNull();
  });
});

describe('checkUrl: exact hosts', () => {
  it('matches the host on any scheme with a host and any port', () => {
    for (const url of ['https://example.com/', 'http://example.com:8080/x', 'wss://example.com/socket', 'ftp://example.com/f']) expect(allow(['example.com'], url)).toBe(true);
    expect(allow(['example.com'], 'https://www.example.com/')).toBe(false);
    expect(allow(['example.com'], 'https://example.com.evil.net/')).toBe(false);
    expect(allow(['example.com'], 'https://notexample.com/')).toBe(false);
  });
  it('ignores case and trailing dots on both sides', () => {
    expect(allow(['EXAMPLE.com'], 'https://example.COM./a')).toBe(true);
    expect(allow(['example.com.'], 'https://Example.Com/a')).toBe(true);
    expect(block(['example.com'], 'HTTPS://EXAMPLE.COM./')).toBe(true);
  });
  it('compares IDN hosts in punycode, whichever form each side uses', () => {
    expect(allow(['bücher.example'], 'https://xn--bcher-kva.example/')).toBe(true);
    expect(allow(['xn--bcher-kva.example'], 'https://BÜCHER.example/')).toBe(true);
    expect(allow(['*.bücher.example'], 'https://shop.xn--bcher-kva.example/')).toBe(true);
    // a look-alike (Cyrillic "е") is another host
    expect(allow(['example.com'], 'https://\u0435xample.com/')).toBe(false);
  });
  it('uses the real host, not userinfo or look-alike URL tricks', () => {
    expect(allow(['allowed.com'], 'https://allowed.com@evil.com/')).toBe(false);
    expect(allow(['allowed.com'], 'https://allowed.com:pw@evil.com/')).toBe(false);
    expect(block(['evil.com'], 'https://allowed.com@evil.com/')).toBe(true);
    expect(allow(['allowed.com'], 'https://evil.com/?https://allowed.com/')).toBe(false);
    expect(allow(['allowed.com'], 'https://evil.com/#@allowed.com')).toBe(false);
    expect(allow(['allowed.com'], 'https://evil.com\\@allowed.com/')).toBe(false);
    expect(allow(['allowed.com'], 'https://allowed.com.evil.com/')).toBe(false);
    expect(allow(['evil.com'], 'https://user@evil.com/')).toBe(true);
  });
  it('matches IPv4 in any spelling the URL parser accepts, and IPv6 literals', () => {
    expect(allow(['127.0.0.1'], 'http://127.0.0.1:3000/')).toBe(true);
    expect(allow(['127.0.0.1'], 'http://2130706433/')).toBe(true);
    expect(allow(['127.0.0.1'], 'http://0x7f.1/')).toBe(true);
    expect(allow(['127.0.0.1'], 'http://127.0.0.2/')).toBe(false);
    expect(allow(['[::1]'], 'http://[0:0::1]:8080/')).toBe(true);
    expect(allow(['[::1]:8080'], 'http://[::1]:8081/')).toBe(false);
    expect(allow(['[::1]'], 'http://127.0.0.1/')).toBe(false);
    expect(block(['[2001:db8::1]'], 'https://[2001:DB8:0:0:0:0:0:1]/')).toBe(true);
  });
});

describe('checkUrl: wildcards', () => {
  it('*.example.com matches the apex and every subdomain, nothing else', () => {
    expect(allow(['*.example.com'], 'https://example.com/')).toBe(true);
    expect(allow(['*.example.com'], 'https://a.example.com/')).toBe(true);
    expect(allow(['*.example.com'], 'https://a.b.example.com/')).toBe(true);
    expect(allow(['*.example.com'], 'https://badexample.com/')).toBe(false);
    expect(allow(['*.example.com'], 'https://example.com.evil.com/')).toBe(false);
    expect(allow(['*.example.com'], 'https://example.co/')).toBe(false);
  });
  it('* and scheme wildcards', () => {
    expect(allow(['*'], 'https://anything.net/')).toBe(true);
    expect(allow(['https://*'], 'https://anything.net/')).toBe(true);
    expect(allow(['https://*'], 'http://anything.net/')).toBe(false);
    expect(allow(['*:8080'], 'http://a.net:8080/')).toBe(true);
    expect(allow(['*:8080'], 'http://a.net:8081/')).toBe(false);
  });
});

describe('checkUrl: schemes and ports', () => {
  it('a scheme in a pattern restricts it', () => {
    expect(allow(['https://*.example.com'], 'https://a.example.com/')).toBe(true);
    expect(allow(['https://*.example.com'], 'http://a.example.com/')).toBe(false);
    expect(allow(['https://*.example.com'], 'wss://a.example.com/')).toBe(false);
    expect(block(['http://example.com'], 'https://example.com/')).toBe(false);
    expect(block(['http:'], 'http://anything.org/')).toBe(true);
    expect(block(['http:'], 'https://anything.org/')).toBe(false);
  });
  it('a port restricts it; the default port of the scheme counts', () => {
    expect(allow(['example.com:8443'], 'https://example.com:8443/')).toBe(true);
    expect(allow(['example.com:8443'], 'https://example.com/')).toBe(false);
    expect(allow(['example.com:443'], 'https://example.com/')).toBe(true);
    expect(allow(['https://example.com:443'], 'https://example.com:443/')).toBe(true);
    expect(allow(['example.com:80'], 'http://example.com/')).toBe(true);
    expect(allow(['example.com:80'], 'https://example.com/')).toBe(false);
  });
  it('about:, data:, blob: and browser-internal URLs pass unless a blocked scheme names them', () => {
    for (const url of ['about:blank', 'about:srcdoc', 'data:text/html,hi', 'blob:https://example.com/1234', 'javascript:void(0)', 'chrome://settings']) {
      expect(allow(['example.com'], url)).toBe(true);
      expect(block(['*'], url)).toBe(false);
    }
    expect(block(['data:'], 'data:text/html,hi')).toBe(true);
    expect(block(['about:'], 'about:blank')).toBe(true);
    expect(block(['blob:'], 'blob:https://example.com/1234')).toBe(true);
  });
  it('file: needs allowing when an allow list exists, and can be blocked', () => {
    expect(allow(['example.com'], 'file:///etc/passwd')).toBe(false);
    expect(allow(['example.com', 'file:'], 'file:///etc/passwd')).toBe(true);
    expect(allows({}, 'file:///etc/passwd')).toBe(true);
    expect(block(['file:'], 'file:///etc/passwd')).toBe(true);
    expect(block(['*'], 'file:///etc/passwd')).toBe(true);
    expect(allow(['*'], 'file:///etc/passwd')).toBe(true);
    // a host pattern never matches a host-less URL
    expect(allow(['*.example.com'], 'file:///example.com')).toBe(false);
    // other host-less schemes follow file:'s rule
    expect(allow(['example.com'], 'mailto:a@example.com')).toBe(false);
  });
  it('an unparsable URL is not allowed under an allow list', () => {
    expect(allow(['example.com'], 'not a url')).toBe(false);
    expect(allows({ blockedDomains: ['evil.com'] }, 'not a url')).toBe(true);
  });
});

describe('checkUrl: precedence', () => {
  it('blocked always wins, with the rule that matched', () => {
    const policy = compileDomainPolicy({ allowedDomains: ['*.example.com'], blockedDomains: ['ads.example.com', 'https://*.evil.com'] })!;
    expect(checkUrl(policy, 'https://www.example.com/')).toEqual({ allowed: true });
    expect(checkUrl(policy, 'https://ads.example.com/x')).toEqual({ allowed: false, list: 'blockedDomains', pattern: 'ads.example.com', rule: 'blockedDomains: ads.example.com' });
    expect(checkUrl(policy, 'https://x.evil.com/')).toMatchObject({ allowed: false, pattern: 'https://*.evil.com' });
    expect(checkUrl(policy, 'https://other.org/')).toEqual({ allowed: false, list: 'allowedDomains', pattern: null, rule: 'allowedDomains: no pattern matches' });
  });
  it('an empty allow list allows everything not blocked', () => {
    expect(allows({ allowedDomains: [], blockedDomains: ['evil.com'] }, 'https://anything.org/')).toBe(true);
    expect(allows({ allowedDomains: [], blockedDomains: ['evil.com'] }, 'https://evil.com/')).toBe(false);
  });
  it('allow layers narrow: a URL must pass each; blocked lists are united', () => {
    const merged = mergeDomainLists({ allowedDomains: ['*.example.com'], blockedDomains: ['a.example.com'] }, undefined, {
      allowedDomains: ['shop.example.com', 'other.org'],
      blockedDomains: ['b.example.com'],
    });
    expect(merged).toEqual({ allowedDomains: [['*.example.com'], ['shop.example.com', 'other.org']], blockedDomains: ['a.example.com', 'b.example.com'] });
    expect(allows(merged, 'https://shop.example.com/')).toBe(true);
    expect(allows(merged, 'https://other.org/')).toBe(false); // the outer layer does not allow it
    expect(allows(merged, 'https://www.example.com/')).toBe(false); // the inner layer does not
    expect(mergeDomainLists({ allowedDomains: [] }, { blockedDomains: ['x.com', 'x.com'] })).toEqual({ allowedDomains: [], blockedDomains: ['x.com'] });
  });
});

describe('start page origin', () => {
  it('originPattern names the origin as a pattern', () => {
    expect(originPattern('http://127.0.0.1:8080/pages/a.html?x')).toBe('http://127.0.0.1:8080');
    expect(originPattern('https://Example.com/')).toBe('https://example.com');
    expect(originPattern('http://[::1]:9000/')).toBe('http://[::1]:9000');
    expect(originPattern('file:///tmp/a.html')).toBe('file:');
    expect(originPattern('about:blank')).toBeNull();
    expect(originPattern('nope')).toBeNull();
    for (const u of ['http://127.0.0.1:8080/x', 'https://example.com/', 'http://[::1]:9000/']) expect(allow([originPattern(u)!], u)).toBe(true);
  });
  it('allowStartPage adds it to every allow layer, and blocked still wins', () => {
    const lists = allowStartPage({ allowedDomains: [['a.com'], ['a.com', 'b.com']], blockedDomains: ['127.0.0.1'] }, 'http://127.0.0.1:5000/t.html');
    expect(lists.allowedDomains).toEqual([
      ['a.com', 'http://127.0.0.1:5000'],
      ['a.com', 'b.com', 'http://127.0.0.1:5000'],
    ]);
    expect(allows(lists, 'http://127.0.0.1:5000/other.html')).toBe(false);
    expect(allowStartPage({ allowedDomains: [], blockedDomains: [] }, 'http://x.com/')).toEqual({ allowedDomains: [], blockedDomains: [] });
  });
});

describe('interceptPatterns', () => {
  /** Chromium's Fetch pattern as a RegExp: `*` any run, `?` one character, `\` escapes. */
  const glob = (p: string) =>
    new RegExp(
      `^${p.replace(/\\(.)|([*?])|([^*?\\])/g, (_m, esc: string, wild: string, lit: string) => (wild === '*' ? '.*' : wild === '?' ? '.' : (esc ?? lit).replace(/[.+^${}()|[\]\\/-]/g, '\\$&')))}$`,
      's',
    );
  const URLS = [
    'https://evil.com/',
    'https://EVIL.com./x',
    'https://a.b.evil.com:8443/p?q',
    'https://user:pw@evil.com/',
    'https://allowed.com@evil.com/',
    'http://xn--bcher-kva.example/',
    'https://shop.xn--bcher-kva.example/',
    'http://[::1]:8080/',
    'http://[2001:db8::1]/',
    'http://127.0.0.1:9/',
    'http://127.0.0.1:9/x',
    'https://user@127.0.0.1:9/',
    'https://a.evil.com:8443/',
    'https://evil.com:443/',
    'http://2130706433/',
    'file:///etc/passwd',
    'https://notevil.com/',
    'https://example.org/?ref=evil.com',
    'wss://evil.com/socket',
  ];
  /** Every URL the policy blocks is caught by some pattern (a URL as Chromium gives it: canonical). */
  function covers(lists: { allowedDomains?: string[]; blockedDomains?: string[] }): string[] {
    const policy = compileDomainPolicy(lists)!;
    const patterns = interceptPatterns(policy).map(glob);
    for (const raw of URLS) {
      const url = new URL(raw).href;
      if (!checkUrl(policy, url).allowed)
        expect(
          patterns.some((g) => g.test(url)),
          `${url} under ${JSON.stringify(lists)}`,
        ).toBe(true);
    }
    return interceptPatterns(policy);
  }

  it('an allow list pauses everything', () => {
    expect(covers({ allowedDomains: ['example.org'], blockedDomains: ['evil.com'] })).toEqual(['*']);
  });
  it('only blocked patterns: host substrings and schemes, covering every URL they block', () => {
    expect(covers({ blockedDomains: ['evil.com', '*.bücher.example', '[::1]:8080', '127.0.0.1', 'file:', 'https://*.evil.com'] })).toEqual([
      '*evil.com*',
      '*xn--bcher-kva.example*',
      '*[::1]:8080*',
      '*127.0.0.1*',
      'file:*',
    ]);
    expect(covers({ blockedDomains: ['[2001:db8::1]'] })).toEqual(['*[2001:db8::1]*']);
    expect(covers({ blockedDomains: ['evil.com:443', '127.0.0.1:9', 'a.evil.com:8443'] })).toEqual(['*evil.com*', '*127.0.0.1:9*', '*a.evil.com:8443*']);
    expect(covers({ blockedDomains: ['*'] })).toEqual(['*']);
    expect(covers({ blockedDomains: ['*:8080'] })).toEqual(['*']);
    expect(glob('*evil.com*').test('https://notevil.com/')).toBe(true); // over-matched: paused, then allowed
    expect(glob('*evil.com*').test('https://example.org/')).toBe(false);
  });
});
