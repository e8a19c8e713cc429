/**
 * `RandomAgent`: the floor of a benchmark. Each act() performs one random primitive inside the
 * screen, drawn from a seeded generator (the same seed and screen size give the same actions), and
 * after `actions` steps it calls `finish`. It never looks at the screen.
 *
 * What it may do: left clicks (single, double, triple), pointer moves, short left drags, wheel
 * scrolls in any direction, short lower-case typing, and harmless keys (Return, Tab, Escape,
 * arrows, paging, BackSpace, Delete, space), plus short waits. What it never does: modifier
 * chords (no Alt+F4, Ctrl+W, Ctrl+Q, Ctrl+P...), function keys (F11, F12), right or middle clicks
 * (browser context menus, pasting the selection, opening links in new windows), or history
 * navigation, so it cannot close, leave or reconfigure the desktop's browser.
 */
import { Agent, applyAction, type ActionStep, type AgentContext, type AgentOptions } from '../harness/agent/index.ts';
import { VncuaError } from '../harness/errors.ts';
import { mulberry32 } from '../harness/prng.ts';

/** Options of RandomAgent: the Agent's options plus the seed and the number of actions. */
export interface RandomAgentOptions extends AgentOptions {
  /** Seed of the generator: a number, or a string (e.g. the task id) hashed to one. Default: hashed from `task` (or 0). */
  seed?: number | string;
  /** Random actions before `finish` (default 15). The run's maxSteps may stop it earlier. */
  actions?: number;
}

/** Default number of random actions before finish. */
export const DEFAULT_RANDOM_ACTIONS = 15;

/** Keys the random agent may press: none closes, leaves or reconfigures the browser. */
export const RANDOM_KEYS: readonly string[] = Object.freeze([
  'Return',
  'Tab',
  'Escape',
  'space',
  'BackSpace',
  'Delete',
  'Up',
  'Down',
  'Left',
  'Right',
  'Page_Up',
  'Page_Down',
  'Home',
  'End',
]);

/** Words the random agent may type (lower-case ASCII, so typing never uses a spare keycode of the X server). */
const WORDS = ['hello', 'test', 'abc', 'lorem', 'ipsum', 'foo', 'bar', 'random', 'click', 'submit', 'yes', 'no', 'ok', 'cat', '42'];

/** A 32-bit seed from a number or a string (FNV-1a over its UTF-8 bytes). */
export function seedFrom(seed: number | string): number {
  if (typeof seed === 'number') return seed >>> 0;
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(seed)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Draws random actions for a screen of a given size; the sequence depends only on the seed and the sizes. */
export class RandomActionGenerator {
  readonly #rand: () => number;

  constructor(seed: number | string) {
    this.#rand = mulberry32(seedFrom(seed));
  }

  /** The next random action for a `width` x `height` screen (a trace step in snake_case). */
  next(size: { width: number; height: number }): ActionStep {
    const r = this.#rand;
    const int = (n: number) => Math.min(n - 1, Math.floor(r() * n));
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    const point = () => ({ x: int(size.width), y: int(size.height) });
    const roll = r();
    if (roll < 0.35) return { action: 'mouse_click', params: { position: point(), button: 'left', click_type: 'single' } };
    if (roll < 0.4) return { action: 'mouse_click', params: { position: point(), button: 'left', click_type: 'double' } };
    if (roll < 0.43) return { action: 'mouse_click', params: { position: point(), button: 'left', click_type: 'triple' } };
    if (roll < 0.53) return { action: 'mouse_move', params: { position: point() } };
    if (roll < 0.6) {
      const start = point();
      const clamp = (v: number, max: number) => Math.max(0, Math.min(max - 1, v));
      const end = { x: clamp(start.x + int(401) - 200, size.width), y: clamp(start.y + int(401) - 200, size.height) };
      return { action: 'mouse_drag', params: { start, end, button: 'left' } };
    }
    if (roll < 0.75) {
      return { action: 'mouse_scroll', params: { position: point(), direction: pick(['up', 'down', 'down', 'left', 'right'] as const), repeat: 1 + int(5) } };
    }
    if (roll < 0.85) return { action: 'type_text', params: { text: pick(WORDS) } };
    if (roll < 0.95) return { action: 'press_keys', params: { keys: pick(RANDOM_KEYS) } };
    return { action: 'wait', params: { seconds: Math.round((0.2 + r() * 0.8) * 10) / 10 } };
  }

  /** `count` actions for a fixed screen size (what an agent with this seed performs on that screen). */
  take(count: number, size: { width: number; height: number }): ActionStep[] {
    return Array.from({ length: count }, () => this.next(size));
  }
}

/** An agent that performs seeded random primitives, then finishes: the floor score of a suite. */
export class RandomAgent extends Agent {
  /** The seed in use (after hashing a string seed). */
  readonly seed: number;
  /** Random actions before finish. */
  readonly actions: number;
  readonly #gen: RandomActionGenerator;
  #done = 0;

  /** Validates `actions` and `seed` (AGENT_ERR_BAD_OPTIONS) and the Agent options. */
  constructor(options: RandomAgentOptions) {
    const { seed, actions, ...rest } = options;
    if (actions !== undefined && (!Number.isInteger(actions) || actions < 0)) {
      throw new VncuaError('AGENT_ERR_BAD_OPTIONS', `RandomAgent option "actions" must be an integer >= 0, got ${String(actions)}.`, {
        details: { field: 'actions', value: actions },
      });
    }
    if (seed !== undefined && typeof seed !== 'string' && !(typeof seed === 'number' && Number.isFinite(seed))) {
      throw new VncuaError('AGENT_ERR_BAD_OPTIONS', 'RandomAgent option "seed" must be a finite number or a string.', { details: { field: 'seed', value: seed } });
    }
    super(rest);
    this.seed = seedFrom(seed ?? rest.task ?? 0);
    this.actions = actions ?? DEFAULT_RANDOM_ACTIONS;
    this.#gen = new RandomActionGenerator(this.seed);
  }

  override async act(): Promise<boolean> {
    if (this.#done >= this.actions) {
      await this.finish({ reason: 'random agent: done' });
      return true;
    }
    const index = this.#done++;
    const step = this.#gen.next(await this.clientResolution());
    await applyAction(this, step, index);
    return false;
  }
}

/** Builder for `vncua eval --agent random`: seeded by the task id (else the task text). */
export default function buildRandomAgent(ctx: AgentContext): RandomAgent {
  return new RandomAgent({ ...ctx.agentOptions, seed: ctx.taskId ?? ctx.task ?? 0 });
}
