/**
 * A live run's steps as they are written: the run directory is watched (fs.watch, and a poll in case an event
 * is missed) and its trace re-read (harness/trace/reader.ts: execution.json when there, else the
 * partial_execution.json the TraceWriter replaces atomically on every append). Each listener gets the entries
 * that are new or changed (a late success check rewrites an earlier entry) since it last heard.
 */
import { type FSWatcher, watch } from 'node:fs';
import { isVncuaError } from '../../harness/errors.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import type { TraceEntry } from '../../harness/trace/schema.ts';

/** What a listener is told: entries new or changed (by index), or that the trace cannot be read now. */
export type StepsEvent = { type: 'steps'; entries: TraceEntry[] } | { type: 'trace-error'; code: string; message: string };

/** Options of StepsWatch. */
export interface StepsWatchOptions {
  /** Poll the trace this often too (default 1000 ms). */
  pollMs?: number;
  /** Coalesce change events within this many ms (default 15). */
  settleMs?: number;
}

/** Follows one run directory's trace for any number of listeners; stops watching when the last one leaves. */
export class StepsWatch {
  readonly abs: string;
  /** The entries read last, and each one's JSON (to tell a changed entry). */
  private entries: TraceEntry[] = [];
  private texts: string[] = [];
  private lastError: string | null = null;
  private readonly listeners = new Set<(e: StepsEvent) => void>();
  private watcher: FSWatcher | null = null;
  private poll: ReturnType<typeof setInterval> | null = null;
  private settle: ReturnType<typeof setTimeout> | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private readonly opts: Required<StepsWatchOptions>;

  constructor(abs: string, opts: StepsWatchOptions = {}) {
    this.abs = abs;
    this.opts = { pollMs: opts.pollMs ?? 1000, settleMs: opts.settleMs ?? 15 };
  }

  /** Every entry read so far. */
  get current(): readonly TraceEntry[] {
    return this.entries;
  }

  /** Whether the directory is being watched (some listener is there). */
  get watching(): boolean {
    return this.poll !== null;
  }

  /** Listen: `listener` first gets every entry read so far, then the changes. Returns the unsubscribe function. */
  subscribe(listener: (e: StepsEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.entries.length > 0) listener({ type: 'steps', entries: this.entries.slice() });
    if (this.listeners.size === 1) this.start();
    else void this.read();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Read the trace now (what a change event does); resolves once read. */
  refresh(): Promise<void> {
    return this.read();
  }

  private start(): void {
    try {
      this.watcher = watch(this.abs, { persistent: false }, (_ev, name) => {
        if (name === null || /execution\.json$/.test(String(name))) this.soon();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
    } catch {
      // the poll alone then
    }
    this.poll = setInterval(() => void this.read(), this.opts.pollMs);
    this.poll.unref();
    void this.read();
  }

  /** Stop watching (listeners stay registered but hear nothing more). */
  stop(): void {
    this.watcher?.close();
    this.watcher = null;
    if (this.poll) clearInterval(this.poll);
    if (this.settle) clearTimeout(this.settle);
    this.poll = null;
    this.settle = null;
  }

  private soon(): void {
    if (this.settle) return;
    this.settle = setTimeout(() => {
      this.settle = null;
      void this.read();
    }, this.opts.settleMs);
  }

  private read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.again = false;
        await this.readOnce();
      } while (this.again);
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    let entries: TraceEntry[];
    try {
      entries = (await readTrace(this.abs)).entries;
    } catch (e) {
      // No trace yet (before the first append) is no error: nothing to show.
      if (isVncuaError(e, 'TRACE_ERR_NOT_FOUND')) return;
      const code = isVncuaError(e) ? e.code : 'TRACE_ERR_INVALID';
      const message = (e as Error).message;
      if (message !== this.lastError) {
        this.lastError = message;
        this.emit({ type: 'trace-error', code, message });
      }
      return;
    }
    this.lastError = null;
    const changed: TraceEntry[] = [];
    const texts = entries.map((e) => JSON.stringify(e));
    for (let i = 0; i < entries.length; i++) if (texts[i] !== this.texts[i]) changed.push(entries[i]!);
    this.entries = entries;
    this.texts = texts;
    if (changed.length > 0) this.emit({ type: 'steps', entries: changed });
  }

  private emit(e: StepsEvent): void {
    for (const l of this.listeners) l(e);
  }
}
