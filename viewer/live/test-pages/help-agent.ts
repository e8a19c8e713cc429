/**
 * Test agent for viewer/live.desktop.test.ts, as an agent module (`vncua run --agent viewer/live/test-pages/
 * help-agent.ts -- --help-when FILE --shot-when FILE`): moves the pointer about every half second (a step each
 * time, slow enough to watch); once the --help-when file exists it asks for help (the run pauses, flagged) and,
 * after the person hands back, moves once more and finishes. Without --help-when it finishes after 40 steps.
 * Once the --shot-when file exists it writes, once, FILE.png: a screenshot through its own connection (no
 * cursor drawn), what the live view must show.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Agent } from '../../../harness/agent/agent.ts';
import type { AgentContext } from '../../../harness/agent/context.ts';
import type { AgentOptions } from '../../../harness/agent/options.ts';

/** What the agent asks the person. */
export const HELP_REASON = 'Please type the greeting into the field';

/** Points about until told to ask for help, then finishes after the handback. */
export class HelpAgent extends Agent {
  #n = 0;
  #asked = false;
  #shot = false;
  constructor(
    options: AgentOptions,
    private readonly helpWhen: string | undefined,
    private readonly shotWhen: string | undefined,
  ) {
    super(options);
  }

  override async act(): Promise<boolean> {
    this.#n++;
    if (this.#asked || (this.helpWhen === undefined && this.#n > 40)) {
      // Back from the person's takeover (or done pointing about).
      await this.mouseMove({ x: 640, y: 500 });
      await this.finish({ status: 'finished' });
      return true;
    }
    await this.mouseMove({ x: 200 + (this.#n % 20) * 40, y: 450 });
    await this.wait(0.5);
    if (this.shotWhen !== undefined && !this.#shot && existsSync(this.shotWhen)) {
      this.#shot = true;
      await writeFile(`${this.shotWhen}.png`, Buffer.from(await this.screenshot({ cursor: false }), 'base64'));
    }
    if (this.helpWhen !== undefined && existsSync(this.helpWhen)) {
      this.#asked = true;
      this.askForHelp(HELP_REASON);
    }
    return false;
  }
}

/** The module form: `-- --help-when FILE --shot-when FILE`. */
export default function build(ctx: AgentContext): HelpAgent {
  const arg = (name: string) => {
    const i = ctx.args.indexOf(name);
    return i >= 0 ? ctx.args[i + 1] : undefined;
  };
  return new HelpAgent(ctx.agentOptions, arg('--help-when'), arg('--shot-when'));
}
