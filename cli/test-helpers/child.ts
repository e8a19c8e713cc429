/**
 * Test-only: the `vncua` CLI in a child process (bin/vncua.js, as a user runs it), its output and exit
 * code, the one coded stderr line of a bad-input exit, and the argument an eval command line is refused for.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { isVncuaError } from '../../harness/errors.ts';
import { parseEvalArgs } from '../eval.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/vncua.js');

/** What a finished `vncua` child printed, and its exit code. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `vncua COMMAND ARGS` in a child from the repository root; SIGKILLed (and the test failed) after `deadlineMs` (default 60 s). */
export function runVncua(command: string, args: string[], opts: { deadlineMs?: number; runAs?: { uid: number; gid: number }; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, command, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env }, ...opts.runAs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = opts.deadlineMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vncua ${command} ${args.join(' ')} did not exit within ${deadline} ms:\n${stdout}\n${stderr}`));
    }, deadline);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

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
