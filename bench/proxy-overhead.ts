/**
 * What the recording proxy costs, at 1280x800, on one desktop (Xvnc + websockify + Chromium), one run.
 * Our client straight to the desktop's WebSocket endpoint ("direct") against our client through a
 * recording proxy (tcp:// to the proxy, ws:// from it to the same endpoint), with the recording's
 * writes in each mode ("sync": before the next event, the default; "async": by the thread pool):
 *
 * - full-screen change until the client has all of it and `screenshot()` returned (the page inverted
 *   over CDP; timed from the CDP call, so Chromium's repaint is in every figure),
 * - `screenshot()` alone after the whole screen changed and settled (as bench/screenshot.ts),
 * - click until the page's `click` handler runs (it reports over a WebSocket, as bench/click-latency.ts),
 * - a full frame in Raw (4 MB): a non-incremental request until its last byte (a bare RFB reader,
 *   no decoding): the relay and recording cost per byte, with nothing else in the figure,
 *
 * in rotating blocks (one client connected at a time for the screen figures; clicks alternate),
 * medians. Then the recording's size per minute of an idle and of a busy screen.
 *
 * Run: npx tsx bench/proxy-overhead.ts [rounds=6] [clicks=40]
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { WebSocketServer, type WebSocket } from 'ws';
import { launchDesktop } from '../harness/desktop/index.ts';
import { ByteQueue } from '../harness/rfb/bytes.ts';
import { connectVnc, type VncClient } from '../harness/rfb/index.ts';
import { openTransport, parseVncUrl, type Transport } from '../harness/rfb/transport.ts';
import { startRecordingProxy, type RecordingProxy, type WriteMode } from '../recorder/proxy/index.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const ROUNDS = Math.max(2, Number(process.argv[2] ?? 6));
const CLICKS = Math.max(10, Number(process.argv[3] ?? 40));
const BLOCK = 8;
const MODES: WriteMode[] = ['sync', 'async'];
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** A bare RFB 3.8 reader (security None, Raw only) that fetches whole frames and only counts their bytes. */
async function rawFrameFetcher(url: string): Promise<{ fetch(): Promise<void>; close(): Promise<void> }> {
  const q = new ByteQueue();
  let wake: (() => void) | null = null;
  const t: Transport = await openTransport(parseVncUrl(url), {}, new AbortController().signal);
  t.start({
    onData: (c) => {
      q.push(c);
      wake?.();
    },
    onClose: () => wake?.(),
  });
  const need = async (n: number) => {
    while (!q.has(n)) await new Promise<void>((r) => (wake = r));
  };
  await need(12);
  q.skip(12);
  t.send(Buffer.from('RFB 003.008\n', 'latin1'));
  await need(1);
  const n = q.peekU8(0);
  await need(1 + n);
  q.skip(1 + n);
  t.send(Uint8Array.of(1));
  await need(4);
  q.skip(4);
  t.send(Uint8Array.of(1));
  await need(24);
  const width = q.peekU16(0);
  const height = q.peekU16(2);
  const nameLen = q.peekU32(20);
  await need(24 + nameLen);
  q.skip(24 + nameLen);
  t.send(Uint8Array.of(2, 0, 0, 1, 0, 0, 0, 0)); // SetEncodings: Raw
  const request = Uint8Array.of(3, 0, 0, 0, 0, 0, width >> 8, width & 255, height >> 8, height & 255);
  return {
    async fetch() {
      t.send(request);
      await need(4);
      const rects = q.peekU16(2);
      q.skip(4);
      for (let i = 0; i < rects; i++) {
        await need(12);
        const bytes = q.peekU16(4) * q.peekU16(6) * 4;
        q.skip(12);
        for (let left = bytes; left > 0; ) {
          await need(1);
          const k = Math.min(left, q.available);
          q.skip(k);
          left -= k;
        }
      }
    },
    close: () => t.close(),
  };
}

// Click reports from the page.
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
await new Promise((r) => wss.once('listening', r));
let pending: ((msg: string) => void) | null = null;
let ready: (() => void) | null = null;
wss.on('connection', (sock: WebSocket) => {
  sock.on('message', (m) => {
    const text = m.toString();
    if (text === 'ready') ready?.();
    else pending?.(text);
  });
});
const nextClick = () => new Promise<string>((resolve) => (pending = resolve));

const pages = await servePages();
const desktop = await launchDesktop({ size: '1280x800', url: pages.url('dashboard.html') });
const root = mkdtempSync(join(tmpdir(), 'vncua-bench-proxy-'));
const proxies: RecordingProxy[] = [];
try {
  for (const writes of MODES) proxies.push(await startRecordingProxy({ upstream: desktop.vncUrl, dir: join(root, writes), writes }));
  const contenders: Array<{ name: string; url: string }> = [{ name: 'direct', url: desktop.vncUrl }, ...MODES.map((m, i) => ({ name: `proxy (${m})`, url: proxies[i]!.url }))];
  const browser = await chromium.connectOverCDP(desktop.cdpUrl);
  const page = browser.contexts()[0]!.pages()[0]!;
  await page.waitForLoadState('load');
  await sleep(500);

  // ---------------------------------------------------------------- screen figures
  let inverted = false;
  const toggle = async () => {
    inverted = !inverted;
    await page.evaluate((on) => {
      document.documentElement.style.filter = on ? 'invert(1)' : '';
    }, inverted);
  };
  const quiet = async (client: VncClient) => {
    for (;;) {
      try {
        await client.waitForUpdate({ timeoutMs: 150 });
      } catch {
        return; // no update for 150 ms
      }
    }
  };
  // Sample points that every toggle changes (found once): "the client has the whole change" = all of them flipped.
  const grid: number[] = [];
  for (let y = 20; y < 800; y += 53) for (let x = 20; x < 1280; x += 61) grid.push((y * 1280 + x) * 4);
  const sample = (c: VncClient) => grid.map((o) => c.framebuffer.data[o]! | (c.framebuffer.data[o + 1]! << 8) | (c.framebuffer.data[o + 2]! << 16));
  let mask: boolean[] = [];
  {
    const c = await connectVnc(desktop.vncUrl);
    await quiet(c);
    const a = sample(c);
    const v = c.framebuffer.version;
    await toggle();
    await c.waitForUpdate({ after: v, timeoutMs: 5000 });
    await quiet(c);
    const b = sample(c);
    mask = a.map((v, i) => v !== b[i]);
    await c.close();
    const n = mask.filter(Boolean).length;
    if (n < grid.length / 2) throw new Error(`only ${n} of ${grid.length} sample points change when the page is inverted`);
  }
  const waitFlipped = (c: VncClient, before: number[]) =>
    new Promise<void>((resolve, reject) => {
      const done = () => sample(c).every((v, i) => !mask[i] || v !== before[i]);
      const timer = setTimeout(() => {
        c.off('update', check);
        reject(new Error('the change did not arrive within 5 s'));
      }, 5000);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        c.off('update', check);
        resolve();
      };
      c.on('update', check);
      check();
    });

  const changeToPng: Record<string, number[]> = {};
  const shotAlone: Record<string, number[]> = {};
  for (const { name } of contenders) {
    changeToPng[name] = [];
    shotAlone[name] = [];
  }
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse();
    for (const { name, url } of order) {
      const c = await connectVnc(url);
      try {
        await quiet(c);
        for (let i = -2; i < BLOCK; i++) {
          // Change -> all of it on the client -> PNG.
          const before = sample(c);
          const t = performance.now();
          await toggle();
          await waitFlipped(c, before);
          await c.screenshot();
          const e2e = performance.now() - t;
          await quiet(c);
          // screenshot() alone, after another change has settled.
          const v = c.framebuffer.version;
          await toggle();
          await c.waitForUpdate({ after: v, timeoutMs: 5000 });
          await quiet(c);
          const t2 = performance.now();
          await c.screenshot();
          const alone = performance.now() - t2;
          if (i >= 0) {
            changeToPng[name]!.push(e2e);
            shotAlone[name]!.push(alone);
          }
        }
      } finally {
        await c.close();
      }
      await sleep(200);
    }
  }

  // ---------------------------------------------------------------- raw full frames
  const rawFrame: Record<string, number[]> = Object.fromEntries(contenders.map((k) => [k.name, [] as number[]]));
  const rawCpu: Record<string, number[]> = Object.fromEntries(contenders.map((k) => [k.name, [] as number[]]));
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? contenders : [...contenders].reverse();
    for (const { name, url } of order) {
      const f = await rawFrameFetcher(url);
      try {
        for (let i = -2; i < 2 * BLOCK; i++) {
          const cpu = process.cpuUsage();
          const t = performance.now();
          await f.fetch();
          const wall = performance.now() - t;
          const used = process.cpuUsage(cpu);
          if (i >= 0) {
            rawFrame[name]!.push(wall);
            rawCpu[name]!.push((used.user + used.system) / 1000);
          }
        }
      } finally {
        await f.close();
      }
      await sleep(200);
    }
  }

  // ---------------------------------------------------------------- clicks
  if (inverted) await toggle();
  const readyP = new Promise<void>((r) => (ready = r));
  await page.goto(`${pages.url('click.html')}?ws=${(wss.address() as AddressInfo).port}`);
  await readyP;
  const clickers = await Promise.all(contenders.map(async (k) => ({ name: k.name, client: await connectVnc(k.url) })));
  const clicks: Record<string, number[]> = Object.fromEntries(contenders.map((k) => [k.name, [] as number[]]));
  for (let i = 0; i < CLICKS + 3; i++) {
    const order = i % 2 === 0 ? clickers : [...clickers].reverse();
    for (const [j, { name, client }] of order.entries()) {
      const x = 200 + ((i * 3 + j) % 10) * 80;
      const y = 200 + ((i + j) % 7) * 60;
      client.pointerEvent(x, y, 0);
      await client.sync();
      await sleep(30);
      const got = nextClick();
      const t = performance.now();
      client.pointerEvent(x, y, 1);
      client.pointerEvent(x, y, 0);
      await got;
      if (i >= 3) clicks[name]!.push(performance.now() - t);
      await sleep(250);
    }
  }
  for (const { client } of clickers) await client.close();

  // ---------------------------------------------------------------- recording size per minute
  await page.goto(pages.url('dashboard.html'));
  inverted = false;
  await sleep(500);
  const SIZE_SECONDS = 15;
  const dirBytes = (d: string) => readdirSync(d).reduce((s, f) => (f.endsWith('.bin') ? s + statSync(join(d, f)).size : s), 0);
  const sizes: Array<[string, number, number]> = [];
  for (const busy of [false, true]) {
    const dir = join(root, busy ? 'size-busy' : 'size-idle');
    const proxy = await startRecordingProxy({ upstream: desktop.vncUrl, dir });
    const c = await connectVnc(proxy.url);
    await quiet(c);
    const first = dirBytes(dir);
    const end = performance.now() + SIZE_SECONDS * 1000;
    while (performance.now() < end) {
      if (busy) await toggle();
      await sleep(250);
    }
    await quiet(c);
    await c.close();
    await proxy.close();
    sizes.push([
      busy ? 'busy: the whole screen changes 4 times a second (dashboard inverted and back)' : 'idle: a static page, client connected',
      first,
      ((dirBytes(dir) - first) * 60) / SIZE_SECONDS,
    ]);
  }
  await browser.close().catch(() => {});

  // ---------------------------------------------------------------- report
  const ratio = (xs: Record<string, number[]>, k: string) => median(xs[k]!) / median(xs.direct!);
  const rows = (xs: Record<string, number[]>) =>
    contenders.map(({ name }) => [name, ms(median(xs[name]!)), ms(quantile(xs[name]!, 0.9)), name === 'direct' ? '1.00' : ratio(xs, name).toFixed(2)]);
  const header = ['client', 'median ms', 'p90 ms', 'ratio to direct'];
  console.log(`### Full-screen change until the client has it and \`screenshot()\` returned (1280x800, ${ROUNDS * BLOCK} each, blocks of ${BLOCK})\n`);
  console.log(table(header, rows(changeToPng)));
  console.log(`\n### \`screenshot()\` after the whole screen changed and settled\n`);
  console.log(table(header, rows(shotAlone)));
  console.log(`\n### A full 1280x800 frame in Raw (4 MB), request until the last byte, no decoding (${ROUNDS * 2 * BLOCK} each)\n`);
  console.log(
    table(
      [...header, 'CPU ms of this process (median)'],
      rows(rawFrame).map((r, i) => [...r, ms(median(rawCpu[contenders[i]!.name]!))]),
    ),
  );
  console.log(
    '\nThe proxy costs CPU in this process per byte relayed: one more kernel round trip of the bytes (read from the upstream, write to the viewer) and, with recording, one copy into the page cache. The CPU column is less noisy than wall time on a shared machine.',
  );
  console.log(`\n### Click until the page's click handler runs (${CLICKS} each, alternating)\n`);
  console.log(table(header, rows(clicks)));
  const mb = (b: number) => (b >= 1024 * 1024 ? `${(b / 1024 / 1024).toFixed(2)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
  console.log(`\n### Recording size at 1280x800 (default encodings: CopyRect, Hextile, Raw; files summed, ${SIZE_SECONDS} s each, scaled to a minute)\n`);
  console.log(
    table(
      ['screen', 'first frame', 'per minute after it'],
      sizes.map(([what, first, perMin]) => [what, mb(first), mb(perMin)]),
    ),
  );
  const worst = Math.max(ratio(changeToPng, 'proxy (sync)'), ratio(shotAlone, 'proxy (sync)'), ratio(clicks, 'proxy (sync)'));
  console.log(`\nTarget (default sync writes): the proxy adds <= 10 % to screenshot and click figures: ${worst <= 1.1 ? 'met' : 'NOT met'} (worst ratio ${worst.toFixed(2)}).`);
} finally {
  for (const p of proxies) await p.close();
  await desktop.close();
  await pages.close();
  wss.close();
  rmSync(root, { recursive: true, force: true });
}
