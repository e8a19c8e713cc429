/**
 * The agent's framebuffer as the live endpoint's watchers see it: one observer on the current
 * Framebuffer (only while at least one watcher listens, so a run nobody watches pays nothing), whose
 * damage is gathered into one region and handed to every watcher once per event-loop turn (so a
 * drawing operation costs the same with one watcher or ten). A re-connection (control.onFramebuffer)
 * moves the observer to the new framebuffer and tells the watchers.
 */
import type { Framebuffer } from '../rfb/framebuffer.ts';
import type { LiveControl } from './control.ts';
import { DirtyRegion, type Rect } from './rfb-server/region.ts';

/** What a watcher hears from the feed. */
export interface FeedListener {
  /** These rectangles changed (the batch of one event-loop turn). */
  damage(rects: readonly Rect[]): void;
  /** The cursor shape changed. */
  cursor(): void;
  /** The agent's framebuffer is now `fb` (a re-connection; null: none for now). */
  framebuffer(fb: Framebuffer | null): void;
  /** A batch was delivered: send what can be sent. */
  flush(): void;
}

/** Bound on the rectangles gathered between two deliveries (past it, their bounding box). */
const FEED_RECTS = 64;

/** See the file comment. */
export class FramebufferFeed {
  private fb: Framebuffer | null;
  private unobserve: (() => void) | null = null;
  private readonly listeners = new Set<FeedListener>();
  private readonly region = new DirtyRegion(FEED_RECTS);
  private cursorChanged = false;
  private scheduled: NodeJS.Immediate | null = null;
  private readonly unsubscribe: () => void;

  constructor(control: LiveControl) {
    this.fb = control.framebuffer();
    this.unsubscribe = control.onFramebuffer((fb) => this.swap(fb));
  }

  /** The agent's framebuffer now (null before its first connection). */
  get current(): Framebuffer | null {
    return this.fb;
  }

  /** Watchers listening now. */
  get size(): number {
    return this.listeners.size;
  }

  /** Start telling `listener`; returns the function that stops. */
  add(listener: FeedListener): () => void {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.observe();
    return () => {
      if (!this.listeners.delete(listener) || this.listeners.size > 0) return;
      this.stopObserving();
    };
  }

  /** Stop following the control (the endpoint is closing). */
  close(): void {
    this.unsubscribe();
    this.listeners.clear();
    this.stopObserving();
  }

  private swap(fb: Framebuffer | null): void {
    if (fb === this.fb) return;
    this.stopObserving();
    this.fb = fb;
    if (this.listeners.size > 0) this.observe();
    for (const l of [...this.listeners]) {
      l.framebuffer(fb);
      l.flush();
    }
  }

  private observe(): void {
    const fb = this.fb;
    if (!fb || this.unobserve) return;
    this.unobserve = fb.observe({
      damage: (x, y, w, h) => {
        this.region.add(x, y, w, h);
        this.schedule();
      },
      resize: (w, h) => {
        this.region.add(0, 0, w, h);
        this.schedule();
      },
      cursor: () => {
        this.cursorChanged = true;
        this.schedule();
      },
    });
  }

  private stopObserving(): void {
    this.unobserve?.();
    this.unobserve = null;
    this.region.clear();
    this.cursorChanged = false;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
  }

  private schedule(): void {
    this.scheduled ??= setImmediate(() => this.deliver());
  }

  private deliver(): void {
    this.scheduled = null;
    const rects = this.region.rects;
    const cursor = this.cursorChanged;
    this.region.clear();
    this.cursorChanged = false;
    for (const l of [...this.listeners]) {
      if (rects.length > 0) l.damage(rects);
      if (cursor) l.cursor();
      l.flush();
    }
  }
}
