/**
 * Pointer click latency: from the moment a click is sent until the page's `click` handler
 * runs (it reports over a WebSocket to this process). Same desktop, same page, one run:
 *
 * - vncua: RFB PointerEvent press + release through the live client (over the WebSocket endpoint),
 * - `xdotool click 1` (the peer, spawned per click, as a harness shelling out to it would),
 *
 * interleaved, medians of ≥ 40 clicks each.
 *
 * Run: npx tsx bench/click-latency.ts [clicks=60]
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { launchDesktop } from '../harness/desktop/index.ts';
import { connectVnc } from '../harness/rfb/index.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const CLICKS = Math.max(40, Number(process.argv[2] ?? 60));
const run = promisify(execFile);
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((r) => wss.once('listening', r));
let pending: ((msg: string) => void) | null = null;
const pageReady = new Promise<WebSocket>((resolve) =>
  wss.on('connection', (sock) => {
    sock.on('message', (m) => {
      const text = m.toString();
      if (text === 'ready') resolve(sock);
      else pending?.(text);
    });
  }),
);
const nextClick = () => new Promise<string>((resolve) => (pending = resolve));

const pages = await servePages();
const desktop = await launchDesktop({ size: '1280x800', url: `${pages.url('click.html')}?ws=${(wss.address() as AddressInfo).port}` });
try {
  await pageReady;
  const client = await connectVnc(desktop.vncUrl);
  const env = { ...process.env, DISPLAY: desktop.display, XAUTHORITY: desktop.xauthority };
  const ours: number[] = [];
  const xdo: number[] = [];
  for (let i = 0; i < CLICKS + 5; i++) {
    const x = 200 + (i % 10) * 80;
    const y = 200 + (i % 7) * 60;
    client.pointerEvent(x, y, 0);
    await sleep(30);
    // vncua: press + release over RFB.
    let got = nextClick();
    let t = performance.now();
    client.pointerEvent(x, y, 1);
    client.pointerEvent(x, y, 0);
    await got;
    if (i >= 5) ours.push(performance.now() - t);
    await sleep(600); // outside the double-click interval
    // Peer: xdotool click at the same place (the pointer is already there).
    got = nextClick();
    t = performance.now();
    await run('xdotool', ['click', '1'], { env });
    await got;
    if (i >= 5) xdo.push(performance.now() - t);
    await sleep(600);
  }
  const row = (name: string, xs: number[]) => [name, ms(median(xs)), ms(quantile(xs, 0.9)), `${(median(xdo) / median(xs)).toFixed(1)}x`];
  console.log(`### Click until the page's click handler runs (${CLICKS} clicks each, interleaved)\n`);
  console.log(table(['what', 'median ms', 'p90 ms', 'xdotool / this'], [row('vncua RFB press+release (live client, ws)', ours), row('`xdotool click 1` (peer)', xdo)]));
  console.log(`\nTarget: median <= 5 ms and no slower than xdotool: ${median(ours) <= 5 && median(ours) <= median(xdo) ? 'met' : 'NOT met'}.`);
  await client.close();
} finally {
  await desktop.close();
  await pages.close();
  wss.close();
}
