/**
 * Test-only Agents: ScriptAgent runs a test's function once and reports done; HookAgent's act() is a
 * function of the agent, with the protected adapter hooks (endRun, attachMeta) exposed.
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

/** An Agent whose act() runs a test's script once and reports done. */
export class ScriptAgent extends Agent {
  constructor(
    options: AgentOptions,
    private readonly script: (agent: ScriptAgent) => Promise<unknown>,
  ) {
    super(options);
  }

  override async act(): Promise<boolean> {
    await this.script(this);
    return true;
  }
}
