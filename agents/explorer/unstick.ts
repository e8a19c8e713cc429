/**
 * Unstick strategies, used after `stuckAfter` steps without progress, in this order and cycling: Escape, scroll down,
 * click somewhere empty, go back (only when there is a page of the app to go back to), reload (F5, after any script
 * running on the page was stopped over CDP). A whole cycle without progress means nothing new is reachable. Pure:
 * the choice depends only on the history of the cycle and the seeded generator.
 */
import type { Box, UnstickStrategy } from './types.ts';
import type { Move } from './patterns/move.ts';

/** The strategies in the order they are tried. */
export const UNSTICK_ORDER: readonly UnstickStrategy[] = ['escape', 'scroll', 'click_elsewhere', 'go_back', 'reload'];

/** What the unsticker needs to know about the page now. */
export interface UnstickContext {
  screen: { width: number; height: number };
  /** Boxes of the targets on screen (click_elsewhere avoids them). */
  occupied: readonly Box[];
  /** There is a previous page of the app in the history (go_back is skipped otherwise). */
  canGoBack: boolean;
}

const inside = (p: { x: number; y: number }, b: Box) => p.x >= b.x && p.x < b.x + b.width && p.y >= b.y && p.y < b.y + b.height;

/** A point of the screen inside none of `occupied`, drawn from `rand` (the screen's centre band first); null if none of 16 draws is free. */
export function emptySpot(screen: { width: number; height: number }, occupied: readonly Box[], rand: () => number): { x: number; y: number } | null {
  for (let i = 0; i < 16; i++) {
    const p = { x: Math.round(screen.width * (0.05 + 0.9 * rand())), y: Math.round(screen.height * (0.05 + 0.9 * rand())) };
    if (!occupied.some((b) => inside(p, b))) return p;
  }
  return null;
}

/** Cycles through the strategies (see the file comment). */
export class Unsticker {
  #next = 0;
  /** Strategies used since the last progress. */
  #sinceProgress = 0;

  constructor(readonly rand: () => number) {}

  /** Progress was made: a new cycle starts from the first strategy. */
  progressed(): void {
    this.#next = 0;
    this.#sinceProgress = 0;
  }

  /** A whole cycle was used without progress. */
  get exhausted(): boolean {
    return this.#sinceProgress >= UNSTICK_ORDER.length;
  }

  /** The next strategy and its move. */
  next(ctx: UnstickContext): { strategy: UnstickStrategy; move: Move } {
    for (;;) {
      const strategy = UNSTICK_ORDER[this.#next % UNSTICK_ORDER.length]!;
      this.#next++;
      this.#sinceProgress++;
      const move = this.#move(strategy, ctx);
      if (move) return { strategy, move };
    }
  }

  #move(strategy: UnstickStrategy, ctx: UnstickContext): Move | null {
    const s = `unstick.${strategy}`;
    switch (strategy) {
      case 'escape':
        return { step: { action: 'press_keys', params: { keys: 'Escape' } }, strategy: s };
      case 'scroll':
        return {
          step: { action: 'mouse_scroll', params: { position: { x: Math.round(ctx.screen.width / 2), y: Math.round(ctx.screen.height / 2) }, direction: 'down', repeat: 3 } },
          strategy: s,
        };
      case 'click_elsewhere': {
        const at = emptySpot(ctx.screen, ctx.occupied, this.rand);
        return at ? { step: { action: 'mouse_click', params: { position: at, button: 'left', click_type: 'single' } }, strategy: s } : null;
      }
      case 'go_back':
        return ctx.canGoBack ? { step: { action: 'page_navigation', params: { direction: 'back' } }, strategy: s } : null;
      case 'reload':
        return { step: { action: 'press_keys', params: { keys: 'F5' } }, strategy: s };
    }
  }
}
