/**
 * A tiny typed event emitter. Unlike node:events, an 'error' event with no
 * listener is not thrown, and a listener that throws cannot break the protocol
 * loop that emitted it: its exception is re-raised on the next tick instead
 * (so it still surfaces as an uncaught exception, like any other bug).
 */

type Listener<A extends unknown[]> = (...args: A) => void;

/** Typed on/off/once/emit over an event map `{ name: [args] }`. */
export class TypedEmitter<Events extends Record<string, unknown[]>> {
  private listeners: { [K in keyof Events]?: Array<Listener<Events[K]>> } = {};

  /** Add a listener. */
  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    (this.listeners[event] ??= []).push(listener);
    return this;
  }

  /** Remove a listener added with on() or once(). */
  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    const list = this.listeners[event];
    if (list) {
      const i = list.findIndex((l) => l === listener || (l as { original?: unknown }).original === listener);
      if (i >= 0) list.splice(i, 1);
    }
    return this;
  }

  /** Add a listener that runs at most once. */
  once<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    const wrapped: Listener<Events[K]> & { original?: unknown } = (...args) => {
      this.off(event, wrapped);
      listener(...args);
    };
    wrapped.original = listener;
    return this.on(event, wrapped);
  }

  /** Number of listeners for `event`. */
  listenerCount<K extends keyof Events>(event: K): number {
    return this.listeners[event]?.length ?? 0;
  }

  /** Call every listener of `event` with `args`. */
  protected emit<K extends keyof Events>(event: K, ...args: Events[K]): void {
    const list = this.listeners[event];
    if (!list) return;
    for (const l of [...list]) {
      try {
        l(...args);
      } catch (e) {
        process.nextTick(() => {
          throw e;
        });
      }
    }
  }

  /** Drop every listener. */
  protected removeAllListeners(): void {
    this.listeners = {};
  }
}
