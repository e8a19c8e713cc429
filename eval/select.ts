/**
 * `--only ID[,ID...]`: run a subset of a task file. Each pattern is a task id or a glob (`*` any run of
 * characters, `?` one character; matched against the whole id, case-sensitive). The selection keeps the
 * file's order. A pattern that matches no task is an error (EVAL_ERR_NO_TASKS), so a typo never
 * silently runs less than asked.
 */
import { VncuaError } from '../harness/errors.ts';
import type { EvalTask } from './tasks.ts';

/** Split `a,b*` lists (from one or more --only flags) into patterns; empty items are dropped. */
export function parseOnly(lists: readonly string[]): string[] {
  return lists
    .flatMap((l) => l.split(','))
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
}

/** A glob as an anchored regular expression (`*` → `.*`, `?` → `.`, everything else literal). */
export function globRegExp(pattern: string): RegExp {
  const body = [...pattern].map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`);
}

/** The tasks matching any pattern, in file order; EVAL_ERR_NO_TASKS naming every pattern that matches none. */
export function selectTasks<T extends Pick<EvalTask, 'id'>>(tasks: readonly T[], patterns: readonly string[]): T[] {
  if (patterns.length === 0) return [...tasks];
  const res = patterns.map((p) => ({ pattern: p, re: globRegExp(p) }));
  const unmatched = res.filter((r) => !tasks.some((t) => r.re.test(t.id))).map((r) => r.pattern);
  if (unmatched.length > 0) {
    const ids = tasks.map((t) => t.id);
    const sample = ids.slice(0, 8).join(', ') + (ids.length > 8 ? `, … (${ids.length} in all)` : '');
    throw new VncuaError(
      'EVAL_ERR_NO_TASKS',
      `--only ${unmatched.map((p) => `"${p}"`).join(', ')} ${unmatched.length === 1 ? 'matches' : 'match'} no task id in the task file (ids: ${sample}); nothing was run. Patterns are ids or globs with * and ?, comma-separated.`,
      { details: { patterns: unmatched, ids } },
    );
  }
  return tasks.filter((t) => res.some((r) => r.re.test(t.id)));
}
