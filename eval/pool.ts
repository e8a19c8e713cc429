/** A fixed number of async workers pulling items from one queue, in order, until it is empty or the signal fires. */

/** Run `fn` over `items` with at most `workers` calls in flight; stops taking items once `signal` fires. Rejects with the first error, after every worker stopped. */
export async function runWorkers<T>(items: readonly T[], workers: number, fn: (item: T, worker: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  const n = Math.max(1, Math.min(workers, items.length));
  const errors: unknown[] = [];
  const loop = async (w: number) => {
    while (next < items.length && !signal?.aborted && errors.length === 0) {
      const item = items[next++]!;
      try {
        await fn(item, w);
      } catch (e) {
        errors.push(e);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, (_, w) => loop(w)));
  if (errors.length > 0) throw errors[0];
}
