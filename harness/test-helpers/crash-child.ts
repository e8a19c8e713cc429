/**
 * Test-only: a child process to kill -9 at a chosen moment (the crash tests of the trace writer and the
 * Agent): its output so far, a wait for what it prints, and SIGKILL. Children still alive when this
 * process exits are killed. The script runs under `node --import tsx`, or (`bundle: true`) bundled once
 * by esbuild and run by plain node: a start in tens of ms instead of tsx's second, for tests that
 * start many children (its packages stay external; modules that find files beside themselves through
 * import.meta.url would look in the bundle's folder, so only for scripts that do not).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

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

const bundles = new Map<string, string>();

/** `script` bundled into one ESM file under node_modules/.cache (so its packages resolve from the repository), once per process. */
function bundled(script: string): string {
  let out = bundles.get(script);
  if (out === undefined) {
    const dir = join(REPO, 'node_modules', '.cache', 'vncua-crash-children');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${basename(script, '.ts')}-${process.pid}.mjs`);
    buildSync({ entryPoints: [script], outfile: file, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' });
    process.once('exit', () => rmSync(file, { force: true }));
    bundles.set(script, file);
    out = file;
  }
  return out;
}

/** Start `script` (a .ts file) with `args` from the repository root: under node --import tsx, or bundled (see the file comment). */
export function startCrashChild(script: string, args: string[], opts: { bundle?: boolean } = {}): CrashChild {
  const argv = opts.bundle ? [bundled(script), ...args] : ['--import', 'tsx', script, ...args];
  const child = spawn(process.execPath, argv, { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
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
