/**
 * `vncua demo`: the main job on the local default, no API key needed. It starts a local
 * desktop showing a small page, connects the RFB client over WebSocket, waits for the
 * page to be on screen, saves a screenshot and prints where (and what each step cost).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { launchDesktop, type Desktop } from '../harness/desktop/index.ts';
import { connectVnc, type VncClient } from '../harness/rfb/index.ts';

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
  mkdirSync(out, { recursive: true });

  const page = readFileSync(new URL('./pages/demo.html', import.meta.url));
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  let desktop: Desktop | undefined;
  let client: VncClient | undefined;
  try {
    let t = performance.now();
    desktop = await launchDesktop({ size, url });
    const startMs = performance.now() - t;
    process.stderr.write(`desktop up in ${startMs.toFixed(0)} ms: ${desktop.vncUrl} (VNC over WebSocket), ${desktop.cdpUrl} (CDP), display ${desktop.display}\n`);
    t = performance.now();
    client = await connectVnc(desktop.vncUrl);
    const connectMs = performance.now() - t;
    // The page paints shortly after CDP answers: wait for the screen to go quiet.
    await settle(client, 400, 8000);
    t = performance.now();
    const shot = await client.screenshot({ cursor: true });
    const shotMs = performance.now() - t;
    const file = join(out, 'screenshot.png');
    writeFileSync(file, shot.png);
    const summary = {
      screenshot: file,
      resolution: client.resolution(),
      desktopStartMs: Math.round(startMs),
      connectMs: Math.round(connectMs),
      screenshotMs: Number(shotMs.toFixed(1)),
      encodings: client.rectStats(),
    };
    writeFileSync(join(out, 'demo.json'), `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(`Screenshot saved: ${file}\n`);
    process.stderr.write(`${JSON.stringify(summary)}\n`);
    return 0;
  } finally {
    await client?.close().catch(() => {});
    await desktop?.close().catch(() => {});
    await new Promise<void>((r) => server.close(() => r()));
  }
}
