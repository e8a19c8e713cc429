/**
 * Screenshot benchmark against one Xvnc at 1280x800 showing a realistic page in
 * Chromium (matchbox window manager, kiosk), started bare in this run.
 *
 * - vncua screenshot(): an open client, framebuffer kept live by incremental updates;
 *   each call = settle check + RGBA copy + sharp PNG (level 1, no adaptive filtering).
 * - vncua cold: connectVnc + screenshot() + close() per call (what a one-shot CLI pays).
 * - peer: `gvnccapture host:display out.png` per call (a fresh connection each time).
 * Medians of ≥ 20 calls each, interleaved rounds, and the ratios.
 *
 * Run: npx tsx bench/screenshot.ts [calls=30]
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectVnc } from '../harness/rfb/index.ts';
import { startXvnc } from '../harness/rfb/test-helpers/xvnc.ts';
import { median, ms, quantile, table } from './stats.ts';

const CALLS = Math.max(20, Number(process.argv[2] ?? 30));
const run = promisify(execFile);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** A page with text, colours, gradients and an image-like area: roughly what an agent looks at. */
function page(): string {
  const rows = Array.from({ length: 40 }, (_, i) => `<tr><td>${i + 1}</td><td>Order #${10_000 + i * 37}</td><td>${['Shipped', 'Pending', 'Cancelled'][i % 3]}</td><td>${(i * 13.37).toFixed(2)} €</td></tr>`).join('');
  const cards = Array.from({ length: 12 }, (_, i) => `<div class="card" style="background:hsl(${i * 30},70%,85%)"><h3>Widget ${i + 1}</h3><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit ${i}.</p><button>Open</button></div>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><style>
    body{margin:0;font-family:DejaVu Sans,sans-serif;background:#f4f6fa}
    header{height:64px;background:linear-gradient(90deg,#1e3c72,#2a5298);color:#fff;font-size:24px;padding:16px}
    main{display:flex;gap:16px;padding:16px}
    .cards{display:grid;grid-template-columns:repeat(3,1fr);gap:12px;width:55%}
    .card{border-radius:8px;padding:8px;box-shadow:0 1px 3px #0003}
    .photo{height:180px;border-radius:8px;background:radial-gradient(circle at 30% 40%,#ffd36b,#e0536c 40%,#3b2c85 80%)}
    table{border-collapse:collapse;font-size:13px;width:100%} td{border-bottom:1px solid #ddd;padding:2px 6px}
  </style></head><body><header>Dashboard — vncua screenshot benchmark</header><main>
    <section class="cards">${cards}</section><section style="width:45%"><div class="photo"></div><table>${rows}</table></section>
  </main></body></html>`;
}

const dir = mkdtempSync(join(tmpdir(), 'vncua-bench-shot-'));
const xvnc = await startXvnc({ geometry: '1280x800' });
const procs: ChildProcess[] = [];
try {
  // Each in its own process group, so Chromium's helpers die with it.
  procs.push(spawn('matchbox-window-manager', ['-use_titlebar', 'no', '-use_cursor', 'yes'], { env: xvnc.env, stdio: 'ignore', detached: true }));
  procs.push(
    spawn(
      '/usr/lib/chromium/chromium',
      [
        `--user-data-dir=${join(dir, 'profile')}`, '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
        '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--ozone-platform=x11',
        '--password-store=basic', '--use-mock-keychain', '--disable-extensions', '--kiosk', `--app=data:text/html;base64,${Buffer.from(page()).toString('base64')}`,
      ],
      { env: xvnc.env, stdio: 'ignore', detached: true },
    ),
  );
  const url = `tcp://127.0.0.1:${xvnc.port}`;
  const client = await connectVnc(url, { encodings: ['raw'] });
  // Wait for the page: until the screen stops changing for 1 s (at most 20 s).
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = client.framebuffer.version;
    try {
      await client.waitForUpdate({ after: v, timeoutMs: 1000 });
    } catch {
      if (client.framebuffer.pixel(640, 30)[2] > 100) break; // header gradient visible and nothing changed for 1 s
    }
    if (Date.now() > deadline) throw new Error('the page did not appear within 20 s');
  }
  const shot = await client.screenshot();
  console.log(`screen ${shot.width}x${shot.height}, PNG ${(shot.png.length / 1024).toFixed(0)} KiB (sharp level 1)`);

  const display = xvnc.port - 5900;
  const peerFile = join(dir, 'peer.png');
  const warm: number[] = [];
  const warmCursor: number[] = [];
  const cold: number[] = [];
  const peer: number[] = [];
  for (let i = 0; i < 3; i++) {
    await client.screenshot();
    await run('gvnccapture', ['-q', `127.0.0.1:${display}`, peerFile]);
  }
  for (let i = 0; i < CALLS; i++) {
    let t = performance.now();
    await client.screenshot();
    warm.push(performance.now() - t);
    t = performance.now();
    await client.screenshot({ cursor: true });
    warmCursor.push(performance.now() - t);
    t = performance.now();
    const c = await connectVnc(url, { encodings: ['raw'] });
    await c.screenshot();
    await c.close();
    cold.push(performance.now() - t);
    t = performance.now();
    await run('gvnccapture', ['-q', `127.0.0.1:${display}`, peerFile]);
    peer.push(performance.now() - t);
    await sleep(5);
  }
  console.log(`gvnccapture PNG ${(statSync(peerFile).size / 1024).toFixed(0)} KiB`);
  const p = median(peer);
  const row = (name: string, xs: number[]) => [name, ms(median(xs)), ms(quantile(xs, 0.9)), (p / median(xs)).toFixed(1) + 'x'];
  console.log(`\n${CALLS} calls each, interleaved, 1280x800 Chromium page, ms\n`);
  console.log(
    table(
      ['what', 'median', 'p90', 'gvnccapture / this'],
      [row('vncua screenshot() (live client)', warm), row('vncua screenshot({ cursor: true })', warmCursor), row('vncua connect + screenshot + close', cold), row('gvnccapture (peer)', peer)],
    ),
  );
  await client.close();
} finally {
  for (const pr of procs) {
    try {
      if (pr.pid) process.kill(-pr.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await xvnc.stop();
  await sleep(200);
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}
