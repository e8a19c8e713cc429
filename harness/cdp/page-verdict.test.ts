import { describe, expect, it } from 'vitest';
import { blankError, httpStatusError, judgePage, notSettledError, unreachableError, type PageProbe } from './page-verdict.ts';

const URL_ = 'http://127.0.0.1:8080/task.html';
const probe = (p: Partial<PageProbe>): PageProbe => ({ href: URL_, readyState: 'complete', status: 200, content: true, ...p });

describe('judgePage', () => {
  it('a loaded page that shows something is loaded', () => {
    expect(judgePage(probe({}), URL_)).toEqual({ kind: 'loaded' });
    // A redirect elsewhere, or a file:/data: page without a status, is loaded too.
    expect(judgePage(probe({ href: 'http://127.0.0.1:8080/login' }), URL_)).toEqual({ kind: 'loaded' });
    expect(judgePage(probe({ href: 'file:///tmp/t.html', status: 0 }), 'file:///tmp/t.html')).toEqual({ kind: 'loaded' });
  });

  it("an HTTP status >= 400 is an error, on the page itself or on Chromium's error page for an empty body", () => {
    expect(judgePage(probe({ status: 404 }), URL_)).toEqual({ kind: 'http-status', status: 404 });
    expect(judgePage(probe({ status: 503, href: 'chrome-error://chromewebdata/' }), URL_)).toEqual({ kind: 'http-status', status: 503 });
    expect(judgePage(probe({ status: 399 }), URL_)).toEqual({ kind: 'loaded' });
  });

  it("Chromium's error page without a status means a network error", () => {
    expect(judgePage(probe({ href: 'chrome-error://chromewebdata/', status: 0 }), URL_)).toEqual({ kind: 'error-page' });
  });

  it('about:blank (the task document has not come) and a document still loading are loading', () => {
    expect(judgePage(probe({ href: 'about:blank', status: 0, content: false }), URL_)).toEqual({ kind: 'loading' });
    expect(judgePage(probe({ readyState: 'interactive' }), URL_)).toEqual({ kind: 'loading' });
    expect(judgePage(probe({ readyState: 'loading', content: false }), URL_)).toEqual({ kind: 'loading' });
    // ...unless about:blank is the task and we navigated there ourselves.
    expect(judgePage(probe({ href: 'about:blank', status: 0, content: false }), 'about:blank', true)).toEqual({ kind: 'loaded' });
    // A desktop asked for about:blank: Chromium's initial about:blank comes before start.sh's data: page.
    expect(judgePage(probe({ href: 'about:blank', status: 0, content: false }), 'about:blank')).toEqual({ kind: 'loading' });
    // A desktop shows about:blank as an empty data: page (start.sh), loaded with nothing in it: ready.
    expect(judgePage(probe({ href: 'data:text/html,', status: 200, content: false }), 'about:blank')).toEqual({ kind: 'loaded' });
    expect(judgePage(probe({ href: 'data:text/html,', readyState: 'loading', content: false }), 'about:blank')).toEqual({ kind: 'loading' });
    expect(judgePage(probe({ href: 'http://127.0.0.1:1/other' }), 'about:blank')).toEqual({ kind: 'loading' });
  });

  it('a loaded page that shows nothing is empty', () => {
    expect(judgePage(probe({ content: false }), URL_)).toEqual({ kind: 'empty' });
  });
});

describe('PAGE_ERR_* errors', () => {
  it('name the URL and the cause in message and details, with a hint for the cause', () => {
    const u = unreachableError(URL_, 'net::ERR_CONNECTION_REFUSED');
    expect([u.code, u.details]).toEqual(['PAGE_ERR_UNREACHABLE', { url: URL_, netError: 'net::ERR_CONNECTION_REFUSED' }]);
    expect(u.message).toContain(URL_);
    expect(u.message).toContain('net::ERR_CONNECTION_REFUSED');
    expect(u.message).toContain('task server up');
    expect(unreachableError(URL_, 'net::ERR_NAME_NOT_RESOLVED').message).toContain('does not resolve');
    expect(unreachableError(URL_, 'net::ERR_SSL_PROTOCOL_ERROR').message).toContain('TLS');

    const h = httpStatusError(URL_, 404);
    expect([h.code, h.details]).toEqual(['PAGE_ERR_HTTP_STATUS', { url: URL_, status: 404 }]);
    expect(h.message).toContain('HTTP 404');
    expect(h.message).toContain('single-page app');
    expect(httpStatusError(URL_, 500).message).toContain('HTTP 500');

    expect(blankError(URL_, 20_000, null).details).toMatchObject({ url: URL_, timeoutMs: 20_000, href: null });
    expect(blankError(URL_, 20_000, probe({ href: 'about:blank' })).message).toContain('about:blank');
    expect(blankError(URL_, 20_000, probe({ readyState: 'loading' })).message).toContain('still loading');
    expect(blankError(URL_, 20_000, probe({ content: false })).message).toContain('showed nothing (no text');

    const n = notSettledError(URL_, 5000, 100);
    expect([n.code, n.details]).toEqual(['PAGE_ERR_NOT_SETTLED', { url: URL_, timeoutMs: 5000, quietMs: 100 }]);
  });
});
