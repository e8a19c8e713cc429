/** A move: one action the explorer plans, with the strategy that chose it and the target it acts on. */
import type { ActionStep } from '../../../harness/agent/index.ts';
import type { SeenTarget } from '../targets.ts';

/** One planned action (one act(), one trace entry). */
export interface Move {
  step: ActionStep;
  /** The heuristic, pattern or unstick strategy that chose it ('form.fill', 'game.platformer', 'unstick.reload'...). */
  strategy: string;
  target?: SeenTarget;
  /** The move continues the one before it (a field's typing after its click): it neither shows nor misses progress. */
  continues?: boolean;
}
