/**
 * Screenshot cost at 1280x800, same desktop, same Chromium page (bench/pages/dashboard.html),
 * all measured in one run, in rotating blocks of 10 calls, medians:
 *
 * - vncua `screenshot()` right after the whole screen changed (the page inverted, the update applied:
 *   the RGB plane refreshed for every row, then a sharp PNG encode): the figure the targets apply to,
 * - vncua `screenshot()` with `cache: false` on an unchanged screen (the encode alone),
 * - vncua `screenshot()` on an unchanged screen (returns the previous encode),
 * - Playwright `page.screenshot()` over CDP (persistent connection),
 * - raw CDP `Page.captureScreenshot` (persistent session),
 * - `gvnccapture` against the same VNC server (a fresh connection per shot, as a CLI peer must).
 *
 * Run: npx tsx bench/screenshot.ts [calls=30]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { startTcpProxy, type TcpProxy } from '../harness/agent/test-helpers/tcp-proxy.ts';
import { launchDesktop } from '../harness/desktop/index.ts';
import { connectVnc } from '../harness/rfb/index.ts';
import { servePages } from './lib/page-server.ts';
import { median, ms, quantile, table } from './stats.ts';

const CALLS = Math.max(20, Number(process.argv[2] ?? 30));
const run = promisify(execFile);

const pages = await servePages();
const desktop = await launchDesktop({ size: '1280x800', url: pages.url('dashboard.html') });
const dir = mkdtempSync(join(tmpdir(), 'vncua-bench-shot-'));
let relay: TcpProxy | undefined;
try {
  const client = await connectVnc(desktop.vncUrl);
  const browser = await chromium.connectOverCDP(desktop.cdpUrl);
  const page = browser.contexts()[0]!.pages()[0]!;
  await page.waitForLoadState('load');
  const cdp = await page.context().newCDPSession(page);
  await new Promise((r) => setTimeout(r, 1000));
  const peerFile = join(dir, 'peer.png');
  // gvnccapture dials TCP; without a password the desktop has no TCP port: a relay gives its RFB unix socket one.
  relay = await startTcpProxy(`unix://${desktop.rfbSocket}`);
  const display = `127.0.0.1:${Number(new URL(relay.url).port) - 5900}`;

  const series: Record<string, number[]> = { changed: [], fresh: [], cached: [], playwright: [], cdp: [], gvnccapture: [] };
  const time = async (name: string, fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    series[name]!.push(performance.now() - t);
  };
  // Blocks of 10 calls per contender, the blocks rotated over several rounds: interleaving every call
  // would charge each contender for the work the previous one left behind (Chromium repainting after a
  // CDP capture, Xvnc encoding a full frame for gvnccapture).
  // Repaint the whole screen (invert the page) and wait until the update has been applied: untimed.
  let inverted = false;
  const repaintAll = async () => {
    inverted = !inverted;
    const before = client.framebuffer.version;
    await page.evaluate((on) => {
      document.documentElement.style.filter = on ? 'invert(1)' : '';
    }, inverted);
    await client.waitForUpdate({ after: before, timeoutMs: 5000 });
    for (;;) {
      try {
        await client.waitForUpdate({ timeoutMs: 150 });
      } catch {
        break; // quiet for 150 ms
      }
    }
  };
  const contenders: Array<[string, () => Promise<unknown>, (() => Promise<unknown>)?]> = [
    ['changed', () => client.screenshot(), repaintAll],
    ['fresh', () => client.screenshot({ cache: false })],
    ['cached', () => client.screenshot()],
    ['playwright', () => page.screenshot()],
    ['cdp', () => cdp.send('Page.captureScreenshot', { format: 'png' })],
    ['gvnccapture', () => run('gvnccapture', ['-q', display, peerFile])],
  ];
  const BLOCK = 10;
  for (const [, fn] of contenders) for (let i = 0; i < 3; i++) await fn(); // warm-up
  for (let r = 0; r < Math.ceil(CALLS / BLOCK); r++) {
    for (const [name, fn, before] of contenders) {
      await new Promise((res) => setTimeout(res, 200));
      for (let i = 0; i < BLOCK; i++) {
        await before?.();
        await time(name, fn);
      }
    }
  }

  const shot = await client.screenshot();
  const m = (k: string) => median(series[k]!);
  const row = (label: string, k: string) => [label, ms(m(k)), ms(quantile(series[k]!, 0.9)), `${(m('playwright') / m(k)).toFixed(1)}x`, `${(m('gvnccapture') / m(k)).toFixed(1)}x`];
  console.log(`### screenshot() at ${shot.width}x${shot.height} (${CALLS} calls each, in rotating blocks of ${BLOCK}; PNG ${(shot.png.length / 1024).toFixed(0)} KiB)\n`);
  console.log(
    table(
      ['what', 'median ms', 'p90 ms', 'Playwright / this', 'gvnccapture / this'],
      [
        row('vncua `screenshot()` after the whole screen changed and settled (PNG encode; RGB plane refreshed when the update landed)', 'changed'),
        row('vncua `screenshot()`, fresh encode of an unchanged screen (`cache: false`)', 'fresh'),
        row('vncua `screenshot()`, screen unchanged (previous encode)', 'cached'),
        row('Playwright `page.screenshot()` (peer)', 'playwright'),
        row('raw CDP `Page.captureScreenshot` (peer)', 'cdp'),
        row('`gvnccapture` against the same Xvnc (peer)', 'gvnccapture'),
      ],
    ),
  );
  const okPw = m('changed') <= m('playwright') / 8;
  const okGv = m('changed') <= m('gvnccapture') / 20;
  console.log(`\nTargets (whole screen changed): <= 1/8 of Playwright: ${okPw ? 'met' : 'NOT met'}; <= 1/20 of gvnccapture: ${okGv ? 'met' : 'NOT met'}.`);
  await browser.close().catch(() => {});
  await client.close();
} finally {
  await relay?.close();
  await desktop.close();
  await pages.close();
  rmSync(dir, { recursive: true, force: true });
}
