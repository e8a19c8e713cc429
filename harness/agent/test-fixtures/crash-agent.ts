/**
 * Child process for the agent crash test: `node --import tsx crash-agent.ts <outputDir> <vncUrl> [cdpUrl]`.
 * Runs an Agent whose act() moves the pointer along a line, one mouseMove per step, and prints
 * "done N" (N = the action's trace index) after each action resolved, i.e. once
 * partial_execution.json on disk holds it. Runs until killed.
 * Safety: exits by itself when its stdin closes (the test runner died) or after 30 s.
 */
import { Agent } from '../agent.ts';

const [outputDir, vncUrl, cdpUrl] = process.argv.slice(2);
if (!outputDir || !vncUrl) throw new Error('usage: crash-agent.ts <outputDir> <vncUrl> [cdpUrl]');
process.stdin
  .on('end', () => process.exit(0))
  .on('close', () => process.exit(0))
  .resume();
setTimeout(() => process.exit(0), 30_000).unref();

class LineAgent extends Agent {
  private i = 0;
  override async act(): Promise<boolean> {
    const index = this.i++;
    await this.mouseMove({ x: 10 + (index % 500), y: 10 + (index % 300) });
    process.stdout.write(`done ${index}\n`);
    return false;
  }
}

await new LineAgent({ outputDir, vncUrl, cdpUrl }).run({ maxSteps: 1_000_000 });
