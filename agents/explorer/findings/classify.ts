/**
 * CDP events → findings, free of I/O: each function takes an event's params (as the page socket delivers them) and
 * returns the finding it means, or null when it means none. What is reported:
 * - console_error: `console.error(...)` (Runtime.consoleAPICalled type 'error' or 'assert') and browser log entries
 *   of level 'error' (Log.entryAdded), except source 'network' ("Failed to load resource: ..."), which repeats what
 *   http_error / request_failed already say.
 * - uncaught_exception: Runtime.exceptionThrown (message and the first lines of the stack).
 * - request_failed: Network.loadingFailed, except requests cancelled or aborted (net::ERR_ABORTED: the page went
 *   away, a download, a fetch the page aborted itself); net::ERR_BLOCKED_BY_CLIENT (the navigation guard failed it)
 *   is a blocked_navigation instead.
 * - http_error: every response with status ≥ 500, and 404 / 410 for documents only (a page or frame the user
 *   navigated to: a broken link a demanding user would notice). Other 4xx (401, 403, 429, ...) and 404s of
 *   subresources (favicon.ico, a missing image) are not reported: they are too often expected or harmless.
 * - crash: Inspector.targetCrashed ("Aw, Snap").
 */
import type { Finding, FindingKind } from '../types.ts';

/** A finding before the monitor stamps its step and screenshot; `key` deduplicates repeats. */
export interface RawFinding {
  kind: FindingKind;
  /** Same key = same problem (counted once, with a count). */
  key: string;
  url: string | null;
  message: string;
  excerpt?: string;
}

/** Longest one-line message kept (characters). */
export const MAX_MESSAGE = 300;
/** Longest excerpt kept (characters). */
export const MAX_EXCERPT = 2000;
/** Stack lines kept in an excerpt. */
const STACK_LINES = 8;

/** First line of `s`, whitespace collapsed, cut to `max` characters with an ellipsis. */
export function oneLine(s: string, max = MAX_MESSAGE): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** `s` cut to `max` characters (with a note of how much was cut). */
export function excerptOf(s: string, max = MAX_EXCERPT): string {
  return s.length > max ? `${s.slice(0, max)}\n… (${s.length - max} more characters)` : s;
}

interface RemoteObject {
  type?: string;
  subtype?: string;
  value?: unknown;
  description?: string;
  unserializableValue?: string;
}
interface CallFrame {
  functionName?: string;
  url?: string;
  lineNumber?: number;
  columnNumber?: number;
}
interface StackTrace {
  callFrames?: CallFrame[];
}

/** A console argument as console.log would print it. */
function describe(o: RemoteObject): string {
  if (o.type === 'string') return String(o.value);
  if (o.value !== undefined) return typeof o.value === 'object' ? JSON.stringify(o.value) : String(o.value);
  return o.unserializableValue ?? o.description ?? o.type ?? '';
}

/** "    at f (url:line:col)" lines of a CDP stack trace (line and column 1-based, as DevTools shows them). */
export function stackLines(st: StackTrace | undefined, max = STACK_LINES): string[] {
  return (st?.callFrames ?? [])
    .slice(0, max)
    .map((f) => `    at ${f.functionName || '(anonymous)'} (${f.url || '<inline>'}:${(f.lineNumber ?? 0) + 1}:${(f.columnNumber ?? 0) + 1})`);
}

/** Runtime.consoleAPICalled → console_error for console.error / console.assert. */
export function fromConsoleApi(p: Record<string, unknown>, pageUrl: string | null): RawFinding | null {
  if (p.type !== 'error' && p.type !== 'assert') return null;
  const text = ((p.args as RemoteObject[] | undefined) ?? []).map(describe).join(' ') || (p.type === 'assert' ? 'console.assert failed' : 'console.error()');
  const stack = stackLines(p.stackTrace as StackTrace | undefined);
  return { kind: 'console_error', key: `console|${oneLine(text)}`, url: pageUrl, message: oneLine(text), excerpt: excerptOf([text, ...stack].join('\n')) };
}

/** Log.entryAdded → console_error for level 'error' (not source 'network': see the file comment). */
export function fromLogEntry(p: Record<string, unknown>, pageUrl: string | null): RawFinding | null {
  const e = (p.entry ?? {}) as { level?: string; source?: string; text?: string; url?: string; stackTrace?: StackTrace };
  if (e.level !== 'error' || e.source === 'network') return null;
  const text = e.text ?? '';
  const stack = stackLines(e.stackTrace);
  return {
    kind: 'console_error',
    key: `console|${oneLine(text)}`,
    url: pageUrl,
    message: oneLine(`${e.source ? `[${e.source}] ` : ''}${text}`),
    excerpt: excerptOf([text, e.url ? `(${e.url})` : '', ...stack].filter(Boolean).join('\n')),
  };
}

/** Runtime.exceptionThrown → uncaught_exception: its message, then the stack. */
export function fromException(p: Record<string, unknown>, pageUrl: string | null): RawFinding | null {
  const d = (p.exceptionDetails ?? {}) as { text?: string; url?: string; lineNumber?: number; exception?: RemoteObject; stackTrace?: StackTrace };
  const description = d.exception?.description ?? (d.exception ? describe(d.exception) : '');
  // description is "Error: msg\n    at ..." for Error objects; text is "Uncaught" (or "Uncaught (in promise)").
  const head = description.split('\n')[0] || d.text || 'exception';
  const prefix = d.text && !head.startsWith(d.text) ? `${d.text.replace(/:$/, '')} ` : '';
  const message = oneLine(`${prefix}${head}`);
  const stack = description.includes('\n    at ') ? description.split('\n').slice(0, STACK_LINES + 1) : [description || head, ...stackLines(d.stackTrace)];
  return { kind: 'uncaught_exception', key: `exception|${message}`, url: pageUrl, message, excerpt: excerptOf(stack.join('\n')) };
}

/** Network.loadingFailed → request_failed or blocked_navigation (null when cancelled or aborted). `request` is what Network.requestWillBeSent said. */
export function fromLoadingFailed(p: Record<string, unknown>, request: { url: string; method?: string } | undefined, pageUrl: string | null): RawFinding | null {
  const errorText = String(p.errorText ?? '');
  if (p.canceled === true || errorText === 'net::ERR_ABORTED') return null;
  const url = request?.url ?? '(unknown URL)';
  const type = String(p.type ?? 'Other');
  if (errorText === 'net::ERR_BLOCKED_BY_CLIENT' || p.blockedReason !== undefined) {
    const what = type === 'Document' ? 'navigation' : `request (${type})`;
    return {
      kind: 'blocked_navigation',
      key: `blocked|${url}`,
      url: pageUrl,
      message: oneLine(`blocked ${what} to ${url}`),
      excerpt: `${request?.method ?? 'GET'} ${url}\n${errorText}${p.blockedReason ? ` (${String(p.blockedReason)})` : ''}`,
    };
  }
  return {
    kind: 'request_failed',
    key: `failed|${url}|${errorText}`,
    url: pageUrl,
    message: oneLine(`${type} ${url} failed: ${errorText}`),
    excerpt: `${request?.method ?? 'GET'} ${url}\n${errorText}`,
  };
}

/** The statuses reported as http_error for a response of resource type `type` (see the file comment). */
export function isReportedStatus(status: number, type: string): boolean {
  return status >= 500 || (type === 'Document' && (status === 404 || status === 410));
}

/** Network.responseReceived → http_error (see isReportedStatus). */
export function fromResponse(p: Record<string, unknown>, pageUrl: string | null): RawFinding | null {
  const r = (p.response ?? {}) as { url?: string; status?: number; statusText?: string; protocol?: string };
  const type = String(p.type ?? 'Other');
  const status = Number(r.status ?? 0);
  if (!isReportedStatus(status, type)) return null;
  const url = r.url ?? '(unknown URL)';
  const statusLine = `HTTP ${status}${r.statusText ? ` ${r.statusText}` : ''}`;
  // A document's response comes before the page's URL changes to it: the finding's page is the document itself.
  return {
    kind: 'http_error',
    key: `http|${status}|${url}`,
    url: type === 'Document' ? (r.url ?? pageUrl) : pageUrl,
    message: oneLine(`${statusLine} for ${type} ${url}`),
    excerpt: `${statusLine}\n${url}`,
  };
}

/** Inspector.targetCrashed → crash. */
export function fromCrash(pageUrl: string | null): RawFinding {
  return {
    kind: 'crash',
    key: `crash|${pageUrl ?? ''}`,
    url: pageUrl,
    message: `the page's renderer crashed ("Aw, Snap!") at ${pageUrl ?? 'an unknown URL'}`,
    excerpt: 'Inspector.targetCrashed',
  };
}

/** A finding as the report keeps it, from a raw one stamped with its step. */
export function toFinding(raw: RawFinding, step: number): Finding {
  const f: Finding = { kind: raw.kind, step, url: raw.url, message: raw.message };
  if (raw.excerpt !== undefined) f.excerpt = raw.excerpt;
  return f;
}
