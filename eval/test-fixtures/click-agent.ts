/**
 * Test agent for the eval runner: optionally waits, clicks the middle of the screen, then calls
 * finish(). Used in-process (ClickAgent) and as an agent module (`--agent eval/test-fixtures/click-agent.ts`,
 * options after `--`: `--wait-ms N`, `--log FILE` to append "start <task>@<W>x<H> <pid>" per run).
 */
import { appendFileSync } from 'node:fs';
import { Agent } from '../../harness/agent/agent.ts';
import type { AgentContext } from '../../harness/agent/context.ts';
import type { AgentOptions } from '../../harness/agent/options.ts';

/** Options of ClickAgent beyond the Agent's. */
export interface ClickAgentExtra {
  /** A `wait` action of this many ms before the click (default 0: none). */
  waitMs?: number;
  /** Called at the start of the first act() (tests kill Chromium here). */
  beforeClick?: (agent: ClickAgent) => Promise<void> | void;
}

/** Step 1: [wait], click the screen's centre. Step 2: finish. */
export class ClickAgent extends Agent {
  #step = 0;
  constructor(
    options: AgentOptions,
    private readonly extra: ClickAgentExtra = {},
  ) {
    super(options);
  }

  override async act(): Promise<boolean> {
    if (this.#step++ === 0) {
      await this.extra.beforeClick?.(this);
      if (this.extra.waitMs) await this.wait(this.extra.waitMs / 1000);
      const { width, height } = await this.clientResolution();
      await this.mouseClick({ position: { x: Math.floor(width / 2), y: Math.floor(height / 2) } });
      return false;
    }
    await this.finish();
    return true;
  }
}

/** The module form: `-- --wait-ms N --log FILE`. */
export default function build(ctx: AgentContext): ClickAgent {
  const arg = (name: string) => {
    const i = ctx.args.indexOf(name);
    return i >= 0 ? ctx.args[i + 1] : undefined;
  };
  const log = arg('--log');
  if (log) appendFileSync(log, `start ${ctx.taskId}@${ctx.resolution?.width}x${ctx.resolution?.height} ${process.pid}\n`);
  return new ClickAgent(ctx.agentOptions, { waitMs: Number(arg('--wait-ms') ?? 0) });
}
