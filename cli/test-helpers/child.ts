/**
 * Test-only: the `vncua` CLI in a child process (bin/vncua.js, as a user runs it), its output and exit
 * code, the one coded stderr line of a bad-input exit, and the argument an eval command line is refused for.
 */
import { expect } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { parseEvalArgs } from '../eval.ts';

export { runVncua, type Ran } from './run-vncua.ts';
import type { Ran } from './run-vncua.ts';

/** The code of the one stderr line `vncua COMMAND: CODE: ...` of a bad-input exit (fails when there is more than one line). */
export function codeLine(r: Ran, command: string): string {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  return new RegExp(`^vncua ${command}: ([A-Z_]+): `).exec(lines[0]!)?.[1] ?? lines[0]!;
}

/** The argument `vncua eval ARGV` is refused for (CLI_ERR_BAD_ARGS details.argument), or undefined when it parses. */
export function evalArgError(argv: string[]): string | undefined {
  try {
    parseEvalArgs(argv);
  } catch (e) {
    if (isVncuaError(e, 'CLI_ERR_BAD_ARGS')) return (e.details as { argument?: string }).argument;
    throw e;
  }
  return undefined;
}
