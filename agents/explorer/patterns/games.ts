/**
 * Game patterns, for a page that is mostly a canvas: a clicker (click the canvas centre, then points around it), a
 * platformer (bursts of an arrow key with a jump, toward the side of the screen less explored) and a keyboard puzzle
 * (the arrow keys in turn). The player tries each pattern while it makes progress (the frame changes) and moves to
 * the next after `patience` steps without any. Choices come from the seeded generator only.
 */
import type { ChangedRegion } from '../progress.ts';
import type { Box } from '../types.ts';
import type { Move } from './move.ts';

/** The game patterns, in the order they are tried. */
export const GAME_PATTERNS = ['platformer', 'puzzle', 'clicker'] as const;
/** One game pattern. */
export type GamePattern = (typeof GAME_PATTERNS)[number];

const key = (keys: string, strategy: string): Move => ({ step: { action: 'press_keys', params: { keys } }, strategy });

/** Plays the game patterns over a canvas (see the file comment). */
export class GamePlayer {
  #pattern = 0;
  #stale = 0;
  #burst: Move[] = [];
  #dir: 'Right' | 'Left' = 'Right';
  #dirStale = 0;
  #puzzle = 0;
  #clicks = 0;
  /** Columns of the screen where changes were seen (a coarse map of what was explored). */
  readonly #seenCols = new Set<number>();
  #lastX: number | null = null;

  constructor(
    readonly patience: number,
    readonly rand: () => number,
  ) {}

  /** The pattern in use. */
  get pattern(): GamePattern {
    return GAME_PATTERNS[this.#pattern % GAME_PATTERNS.length]!;
  }

  /** Every pattern was tried without progress since the last progress (the caller unsticks). */
  get exhausted(): boolean {
    return this.#pattern >= GAME_PATTERNS.length;
  }

  /** Tell the player what the last move did: whether it made progress, and the screen regions that changed. */
  observe(progress: boolean, changed: readonly ChangedRegion[]): void {
    for (const c of changed) this.#seenCols.add(c.col);
    if (changed.length) this.#lastX = changed.reduce((s, c) => s + c.col, 0) / changed.length;
    if (progress) {
      this.#stale = 0;
      this.#dirStale = 0;
      if (this.#pattern >= GAME_PATTERNS.length) this.#pattern = 0;
      return;
    }
    this.#dirStale++;
    if (++this.#stale >= this.patience) {
      this.#stale = 0;
      this.#burst = [];
      this.#pattern++;
    }
  }

  /** Start over with the first pattern (after an unstick). */
  reset(): void {
    this.#pattern = 0;
    this.#stale = 0;
    this.#burst = [];
  }

  /** The next move on the canvas `box` (screen pixels) of a screen with `cols` region columns. */
  next(box: Box, cols: number): Move {
    switch (this.pattern) {
      case 'platformer':
        return this.#platformer(cols);
      case 'puzzle':
        return key(['Up', 'Right', 'Down', 'Left'][this.#puzzle++ % 4]!, 'game.puzzle');
      default:
        return this.#clicker(box);
    }
  }

  #platformer(cols: number): Move {
    if (this.#burst.length === 0) {
      if (this.#dirStale >= this.patience) {
        this.#dir = this.#dir === 'Right' ? 'Left' : 'Right';
        this.#dirStale = 0;
      } else if (this.#lastX !== null && this.#dirStale > 0) {
        // Toward the side less explored.
        let left = 0;
        let right = 0;
        for (let c = 0; c < cols; c++) if (!this.#seenCols.has(c)) c < this.#lastX ? left++ : right++;
        if (left > right) this.#dir = 'Left';
        else if (right > left) this.#dir = 'Right';
      }
      const s = 'game.platformer';
      const jumpFirst = this.rand() < 0.5;
      const run = 2 + Math.floor(this.rand() * 3);
      this.#burst = jumpFirst
        ? [key('space', s), ...Array.from({ length: run }, () => key(this.#dir, s))]
        : [...Array.from({ length: run }, () => key(this.#dir, s)), key('space', s)];
    }
    return this.#burst.shift()!;
  }

  #clicker(box: Box): Move {
    const n = this.#clicks++;
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const at =
      n % 3 === 0
        ? { x: Math.round(cx), y: Math.round(cy) }
        : { x: Math.round(box.x + box.width * (0.1 + 0.8 * this.rand())), y: Math.round(box.y + box.height * (0.1 + 0.8 * this.rand())) };
    return { step: { action: 'mouse_click', params: { position: at, button: 'left', click_type: 'single' } }, strategy: 'game.clicker' };
  }
}
