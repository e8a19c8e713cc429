/**
 * URL lists as task files: one absolute http(s) URL a line (blank lines and `# comments` skipped), for agents that
 * need only a start page (`vncua eval --agent explorer --urls apps.txt`). Each URL becomes a task: its id from the
 * host and path (letters, digits, '.', '_', '-'; a repeat gets -2, -3, ...), its group the host, the goal "Explore
 * URL", and the default success sentinel (an explorer run is scored by its findings and coverage, not by success).
 * A bad line is EVAL_ERR_BAD_TASKS with one issue per bad line (index = line number - 1), like a bad task entry.
 */
import { DEFAULT_SENTINEL } from '../harness/cdp/sentinel.ts';
import { VncuaError } from '../harness/errors.ts';
import type { EvalTask, TaskIssue } from './tasks.ts';

/** True when `text` reads as a URL list: not JSON, and its first line that is not blank or a comment starts with http(s)://. */
export function looksLikeUrlList(text: string): boolean {
  const first = text.split(/\r?\n/).find((l) => l.trim() !== '' && !l.trim().startsWith('#'));
  return first !== undefined && /^\s*https?:\/\//i.test(first);
}

/** The task id of `url`: host, port and path, each run of other characters a '-', at most 200 characters. */
export function urlTaskId(url: URL): string {
  const raw = `${url.hostname}${url.port ? `-${url.port}` : ''}${url.pathname === '/' ? '' : url.pathname}`;
  const id = raw
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+|-+$/g, '')
    .slice(0, 190);
  return id || 'app';
}

/** Parse a URL list (`source` names it in errors) into tasks; EVAL_ERR_BAD_TASKS when a line is not an absolute http(s) URL or there is none. */
export function parseUrlList(text: string, source: string): EvalTask[] {
  const issues: TaskIssue[] = [];
  const tasks: EvalTask[] = [];
  const ids = new Map<string, number>();
  text.split(/\r?\n/).forEach((line, index) => {
    const s = line.trim();
    if (s === '' || s.startsWith('#')) return;
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      issues.push({ index, field: '', problem: `line ${index + 1}: not an absolute URL: ${JSON.stringify(s.slice(0, 100))}` });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      issues.push({ index, field: '', problem: `line ${index + 1}: expected an http:// or https:// URL, got ${u.protocol}` });
      return;
    }
    const base = urlTaskId(u);
    const n = (ids.get(base) ?? 0) + 1;
    ids.set(base, n);
    tasks.push({ id: n === 1 ? base : `${base}-${n}`, goal: `Explore ${u.href}`, url: u.href, success: { sentinel: DEFAULT_SENTINEL }, group: u.host });
  });
  if (issues.length === 0 && tasks.length === 0) issues.push({ index: -1, field: '', problem: 'the list holds no URL' });
  if (issues.length > 0) {
    throw new VncuaError(
      'EVAL_ERR_BAD_TASKS',
      `${source}: ${issues.length} bad line${issues.length === 1 ? '' : 's'}. A URL list has one absolute http(s) URL a line (blank lines and # comments are skipped):\n${issues.map((i) => `  ${i.problem}`).join('\n')}`,
      {
        details: { source, issues },
      },
    );
  }
  return tasks;
}
