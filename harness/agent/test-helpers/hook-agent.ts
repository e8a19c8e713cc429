/**
 * Test-only: an Agent whose act() is a function of the agent, with the protected adapter hooks
 * (endRun, attachMeta) exposed.
 */
import { Agent } from '../agent.ts';
import type { AgentOptions } from '../options.ts';

/** An agent whose act() is a function of the agent, with the protected adapter hooks exposed. */
export class HookAgent extends Agent {
  constructor(
    options: AgentOptions,
    private readonly fn: (a: HookAgent) => Promise<boolean>,
  ) {
    super(options);
  }
  override act(): Promise<boolean> {
    return this.fn(this);
  }
  end(...args: Parameters<Agent['endRun']>): void {
    this.endRun(...args);
  }
  meta(m: Record<string, unknown>): void {
    this.attachMeta(m);
  }
}
