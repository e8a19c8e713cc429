import { describe, expect, it } from 'vitest';
import { excerptOf, fromConsoleApi, fromException, fromLoadingFailed, fromLogEntry, fromResponse, isReportedStatus, oneLine } from './classify.ts';

const page = 'http://app.test/index.html';

describe('CDP events → findings', () => {
  it('console.error with its arguments and stack; other console levels are nothing', () => {
    const f = fromConsoleApi(
      {
        type: 'error',
        args: [
          { type: 'string', value: 'boom' },
          { type: 'number', value: 42 },
          { type: 'object', description: 'Object' },
        ],
        stackTrace: { callFrames: [{ functionName: 'f', url: 'http://app.test/a.js', lineNumber: 9, columnNumber: 4 }] },
      },
      page,
    );
    expect(f).toEqual({
      kind: 'console_error',
      key: 'console|boom 42 Object',
      url: page,
      message: 'boom 42 Object',
      excerpt: 'boom 42 Object\n    at f (http://app.test/a.js:10:5)',
    });
    expect(fromConsoleApi({ type: 'log', args: [{ type: 'string', value: 'x' }] }, page)).toBeNull();
    expect(fromConsoleApi({ type: 'warning', args: [] }, page)).toBeNull();
  });

  it("Log errors count, except the network source's (http_error / request_failed say it)", () => {
    expect(fromLogEntry({ entry: { level: 'error', source: 'javascript', text: 'Refused to execute script' } }, page)).toMatchObject({
      kind: 'console_error',
      message: '[javascript] Refused to execute script',
    });
    expect(fromLogEntry({ entry: { level: 'error', source: 'network', text: 'Failed to load resource' } }, page)).toBeNull();
    expect(fromLogEntry({ entry: { level: 'warning', source: 'javascript', text: 'x' } }, page)).toBeNull();
  });

  it('an uncaught exception: "Uncaught TypeError: ..." and its stack', () => {
    const f = fromException({ exceptionDetails: { text: 'Uncaught', exception: { description: 'TypeError: x is null\n    at g (http://app.test/a.js:3:1)' } } }, page);
    expect(f).toMatchObject({ kind: 'uncaught_exception', message: 'Uncaught TypeError: x is null', excerpt: 'TypeError: x is null\n    at g (http://app.test/a.js:3:1)' });
    const thrownString = fromException(
      {
        exceptionDetails: {
          text: 'Uncaught',
          exception: { type: 'string', value: 'oops' },
          stackTrace: { callFrames: [{ url: 'http://app.test/b.js', lineNumber: 0, columnNumber: 0 }] },
        },
      },
      page,
    );
    expect(thrownString).toMatchObject({ message: 'Uncaught oops', excerpt: 'oops\n    at (anonymous) (http://app.test/b.js:1:1)' });
  });

  it('failed requests: cancelled and aborted ones are nothing; the guard blocks are blocked_navigation', () => {
    const req = { url: 'http://api.test/x', method: 'POST' };
    expect(fromLoadingFailed({ errorText: 'net::ERR_CONNECTION_REFUSED', type: 'Fetch' }, req, page)).toMatchObject({
      kind: 'request_failed',
      message: 'Fetch http://api.test/x failed: net::ERR_CONNECTION_REFUSED',
      excerpt: 'POST http://api.test/x\nnet::ERR_CONNECTION_REFUSED',
    });
    expect(fromLoadingFailed({ errorText: 'net::ERR_ABORTED', type: 'Document' }, req, page)).toBeNull();
    expect(fromLoadingFailed({ errorText: 'net::ERR_FAILED', canceled: true }, req, page)).toBeNull();
    expect(fromLoadingFailed({ errorText: 'net::ERR_BLOCKED_BY_CLIENT', type: 'Document' }, { url: 'http://evil.test/' }, page)).toMatchObject({
      kind: 'blocked_navigation',
      message: 'blocked navigation to http://evil.test/',
    });
    expect(fromLoadingFailed({ errorText: 'net::ERR_BLOCKED_BY_CLIENT', type: 'Image' }, { url: 'http://evil.test/a.png' }, page)).toMatchObject({
      kind: 'blocked_navigation',
      message: 'blocked request (Image) to http://evil.test/a.png',
    });
  });

  it("HTTP statuses: ≥ 500 always, 404 / 410 of documents only; a document's finding is at its own URL", () => {
    expect(fromResponse({ type: 'XHR', response: { url: 'http://app.test/api', status: 502 } }, page)).toMatchObject({
      url: page,
      message: 'HTTP 502 for XHR http://app.test/api',
    });
    expect(isReportedStatus(500, 'XHR')).toBe(true);
    expect(isReportedStatus(503, 'Image')).toBe(true);
    expect(isReportedStatus(404, 'Document')).toBe(true);
    expect(isReportedStatus(410, 'Document')).toBe(true);
    expect(isReportedStatus(404, 'Image')).toBe(false);
    expect(isReportedStatus(403, 'Document')).toBe(false);
    expect(isReportedStatus(200, 'Document')).toBe(false);
    expect(fromResponse({ type: 'Document', response: { url: 'http://app.test/broken', status: 500, statusText: 'Internal Server Error' } }, page)).toEqual({
      kind: 'http_error',
      key: 'http|500|http://app.test/broken',
      url: 'http://app.test/broken',
      message: 'HTTP 500 Internal Server Error for Document http://app.test/broken',
      excerpt: 'HTTP 500 Internal Server Error\nhttp://app.test/broken',
    });
  });

  it('messages are one line and cut; excerpts are cut with a note', () => {
    expect(oneLine('a\n  b\tc', 100)).toBe('a b c');
    expect(oneLine('x'.repeat(10), 5)).toBe('xxxx…');
    expect(excerptOf('y'.repeat(12), 10)).toBe(`${'y'.repeat(10)}\n… (2 more characters)`);
  });
});
