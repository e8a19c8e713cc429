/**
 * Test-only: `vncua COMMAND ARGS` in a child process (bin/vncua.js from the repository root, as a user runs it), its
 * output and exit code. Free of vitest, so benches reuse it too (cli/test-helpers/child.ts re-exports it for tests).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
