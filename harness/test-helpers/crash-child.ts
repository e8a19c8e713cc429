/**
 * Test-only: a `node --import tsx` child process to kill -9 at a chosen moment (the crash tests of the
 * trace writer and the Agent): its output so far, a wait for what it prints, and SIGKILL. Children still
 * alive when this process exits are killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** A running crash-test child. */
export interface CrashChild {
  readonly child: ChildProcess;
  /** What it printed on stdout so far. */
  stdout(): string;
  /** Resolves once `ready(stdout)` holds; rejects if the child exits first (with its stderr). */
  until(ready: (stdout: string) => boolean): Promise<void>;
  /** SIGKILL it (if still running) and wait until it is gone; resolves with its signal (SIGKILL unless it had exited). */
  kill9(): Promise<NodeJS.Signals | null>;
}

/** Start `script` (a .ts file) with `args` under node --import tsx, from the repository root. */
export function startCrashChild(script: string, args: string[]): CrashChild {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  closed.then(() => live.delete(child));
  return {
    child,
    stdout: () => stdout,
    until: (ready) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!ready(stdout)) return;
          child.stdout!.off('data', check);
          child.off('close', early);
          resolve();
        };
        const early = (code: number | null): void => reject(new Error(`${script} exited (${code}) early: ${stderr}`));
        child.stdout!.on('data', check);
        child.once('close', early);
        check();
      }),
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
      return child.signalCode;
    },
  };
}
