/**
 * Test-only helpers for the live side of a run (pause, help, takeover): wait for a status, wait for a
 * condition, a promise settled by hand, and a person's raw input as a viewer sends it.
 */
import type { HumanInput, LiveControl, LiveStatus } from '../../live/control.ts';

/** Resolves with the first status (the current one included) for which `pred` holds; fails after `timeoutMs` naming `what`. */
export function statusWhere(control: LiveControl, pred: (s: LiveStatus) => boolean, what: string, timeoutMs = 15_000): Promise<LiveStatus> {
  return new Promise((resolve, reject) => {
    const now = control.status();
    if (pred(now)) return resolve(now);
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the status is ${JSON.stringify(control.status())}`));
    }, timeoutMs);
    const off = control.onStatus((s) => {
      if (!pred(s)) return;
      clearTimeout(timer);
      off();
      resolve(s);
    });
  });
}

/** Polls `cond` (every 20 ms) until it holds; fails after `timeoutMs` naming `what`. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A promise and the functions that settle it. */
export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
  settled: boolean;
}

/** A promise settled by hand. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const d: Deferred<T> = {
    promise: new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    }),
    resolve: (v) => {
      d.settled = true;
      resolve(v);
    },
    reject: (e) => {
      d.settled = true;
      reject(e);
    },
    settled: false,
  };
  return d;
}

/** True when `p` has settled by the time already-queued callbacks have run (no timer: it only lets pending microtasks and I/O callbacks go first). */
export async function hasSettled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

/** A pointer event as a viewer sends it. */
export const pointer = (x: number, y: number, buttonMask = 0): HumanInput => ({ type: 'pointer', x, y, buttonMask });

/** A key down or up (`key` a keysym, or a one-character string for its character). */
export const keyEvent = (key: number | string, down: boolean): HumanInput => ({ type: 'key', keysym: typeof key === 'string' ? key.codePointAt(0)! : key, down });
