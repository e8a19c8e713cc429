/**
 * `vncua demo`: the main job on the local default, no API key needed. It serves the demo page
 * (agents/demo/page.html), then runs the scripted agent on it with agents/demo/script.json through
 * the same code path as `vncua run` (a local desktop, the agent's run, the trace), takes a
 * screenshot at the end and prints where the trace and the screenshot are.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DEMO_PAGE, DEMO_SCRIPT, DEMO_TASK } from '../agents/demo/index.ts';
import { connectVnc, type VncClient } from '../harness/rfb/index.ts';
import { resultLine, runAgentCommand } from './run.ts';

const USAGE = 'usage: vncua demo [--out DIR] [--size WxH]\n';

/** Wait until no framebuffer update arrived for `quietMs` (at most `maxMs`). */
async function settle(client: VncClient, quietMs: number, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end) {
    try {
      await client.waitForUpdate({ timeoutMs: quietMs });
    } catch {
      return; // quiet for quietMs
    }
  }
}

/** Run the demo; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  let out = join('runs', `demo-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}`);
  let size = '1280x800';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out' && argv[i + 1]) out = argv[++i]!;
    else if (a === '--size' && argv[i + 1]) size = argv[++i]!;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE);
      return 0;
    } else {
      process.stderr.write(`vncua demo: unknown argument "${a}"\n${USAGE}`);
      return 2;
    }
  }
  out = resolve(out);

  const page = readFileSync(DEMO_PAGE);
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.end(page);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    const t0 = performance.now();
    let screenshot = '';
    const { result, tracePath } = await runAgentCommand({
      agent: 'scripted',
      script: DEMO_SCRIPT,
      task: DEMO_TASK,
      url,
      size,
      out,
      signal: controller.signal,
      afterRun: async ({ vncUrl, outputDir }) => {
        let client: VncClient | undefined;
        try {
          client = await connectVnc(vncUrl);
          await settle(client, 300, 5000);
          const shot = await client.screenshot({ cursor: true });
          screenshot = join(outputDir, 'screenshot.png');
          writeFileSync(screenshot, shot.png);
        } finally {
          await client?.close().catch(() => {});
        }
      },
    });
    process.stdout.write(`trace: ${tracePath}\n${resultLine(result)}\n`);
    if (screenshot) process.stdout.write(`Screenshot saved: ${screenshot}\n`);
    process.stderr.write(`demo took ${Math.round(performance.now() - t0)} ms (desktop start, ${result.steps} agent steps, screenshot, teardown)\n`);
    return result.status === 'finished' ? 0 : 1;
  } finally {
    process.removeListener('SIGINT', onSignal);
    await new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  }
}
