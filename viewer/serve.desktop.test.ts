/**
 * vncua serve in a real browser: a real `vncua eval` (replay agent, two basic-suite tasks on a local desktop),
 * post-processed by `vncua process`; Playwright (Chromium) lists and filters the runs, opens one, seeks to the
 * instants of the post-processor's frames and compares the canvas's pixels with them, and steps with the keys.
 * Screenshots of each view are kept under the test's temp dir (artifacts/), and the run view is copied to docs/.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_BIN } from '../harness/cdp/test-helpers.ts';
import { startViewerServer, type ViewerServer } from './server.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TASKS = ['click-button', 'type-search'];

function vncua(args: string[], timeoutMs = 240_000): Promise<{ code: number | null; out: string }> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [join(REPO, 'bin', 'vncua.js'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d));
    p.stderr.on('data', (d: Buffer) => (out += d));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      rej(new Error(`vncua ${args[0]} timed out:\n${out}`));
    }, timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(timer);
      res({ code, out });
    });
  });
}

interface Shot {
  index: number;
  action: string;
  started_at: number;
  before: string | null;
  before_at: number | null;
  after: string | null;
  after_at: number | null;
}

let dir: string;
let out: string;
let artifacts: string;
let server: ViewerServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-serve-desktop-'));
  out = join(dir, 'out');
  artifacts = join(dir, 'artifacts');
  await mkdir(artifacts);
  const ev = await vncua(['eval', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--only', TASKS.join(','), '--out', out]);
  expect(ev.code, ev.out).toBe(0);
  const pr = await vncua(['process', out]);
  expect(pr.code, pr.out).toBe(0);
  server = await startViewerServer({ root: out });
  browser = await chromium.launch({
    executablePath: CHROMIUM_BIN,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  });
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir && !process.env.VNCUA_KEEP_ARTIFACTS) await rm(dir, { recursive: true, force: true });
  else if (dir) process.stderr.write(`artifacts kept in ${artifacts}\n`);
});

/** The canvas's pixels as RGB. */
async function canvasRgb(): Promise<{ rgb: Buffer; width: number; height: number }> {
  const r = await page.evaluate(() => {
    const c = document.querySelector('#screen') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const rgb = new Uint8Array((d.length / 4) * 3);
    for (let i = 0, j = 0; i < d.length; i += 4, j += 3) {
      rgb[j] = d[i]!;
      rgb[j + 1] = d[i + 1]!;
      rgb[j + 2] = d[i + 2]!;
    }
    let s = '';
    for (let i = 0; i < rgb.length; i += 0x8000) s += String.fromCharCode(...rgb.subarray(i, i + 0x8000));
    return { b64: btoa(s), width: c.width, height: c.height };
  });
  return { rgb: Buffer.from(r.b64, 'base64'), width: r.width, height: r.height };
}

async function pngRgb(file: string): Promise<Buffer> {
  return sharp(file).removeAlpha().raw().toBuffer();
}

async function waitShown(t: number): Promise<void> {
  await page.waitForFunction((want) => {
    const c = document.querySelector('#screen') as HTMLCanvasElement;
    return c.dataset.t !== undefined && Math.abs(Number(c.dataset.t) - want) < 0.01 && c.dataset.frame !== undefined;
  }, t);
}

describe('vncua serve in Chromium', () => {
  it('lists the runs of a real vncua eval, filters and searches them', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="list"]');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(2);
    expect(await page.locator('#summary').textContent()).toContain('replay: 2/2 success');
    await page.screenshot({ path: join(artifacts, 'list.png') });
    await page.fill('#q', 'subscribe');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    expect(await page.locator('#runs tbody tr').getAttribute('data-dir')).toBe('replay/1280_800/click-button');
    await page.screenshot({ path: join(artifacts, 'list-search.png') });
    await page.fill('#q', '');
    await page.selectOption('#f-group', { index: 1 });
    const group = await page.$eval('#f-group', (s) => (s as HTMLSelectElement).value);
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get('group')).toBe(group);
    await page.selectOption('#f-group', '');
    // Both runs succeeded: the status filter offers what the runs hold.
    expect(await page.$$eval('#f-status option', (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['', 'success']);
    await page.selectOption('#f-status', 'success');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(2);
    await page.selectOption('#f-resolution', '1280x800');
    await expect.poll(() => page.locator('#runs tbody tr').count()).toBe(2);
  });

  it('opens a run from its link, seeks to instants and shows exactly the post-processor frames; keys step', async () => {
    const run = 'replay/1280_800/type-search';
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="list"]');
    await page.click(`#runs tr[data-dir="${run}"] a`);
    await page.waitForSelector('body[data-ready="run"]');
    expect(new URL(page.url()).searchParams.get('run')).toBe(run);
    const shots = (JSON.parse(await readFile(join(out, run, 'action_screenshots.json'), 'utf8')) as { actions: Shot[] }).actions;
    expect(shots.length).toBeGreaterThanOrEqual(3);
    expect(await page.locator('#track .marker').count()).toBe(shots.length);
    expect(await page.locator('#track .marker.first-success').count()).toBe(1);
    // The instants of the post-processor's before and after frames, by the shareable URL (?run=…&t=…).
    let compared = 0;
    for (const s of shots) {
      for (const which of ['before', 'after'] as const) {
        const at = s[`${which}_at`];
        const png = s[which];
        if (at === null || png === null) continue;
        await page.goto(`${server.url}?run=${encodeURIComponent(run)}&t=${at}`);
        await page.waitForSelector('body[data-ready="run"]');
        await waitShown(at);
        const got = await canvasRgb();
        const want = await pngRgb(join(out, run, png));
        expect([got.width, got.height]).toEqual([1280, 800]);
        expect(Buffer.compare(got.rgb, want), `${s.index} ${which} at ${at}`).toBe(0);
        compared++;
        if (compared === 1) await page.screenshot({ path: join(artifacts, 'run.png') });
      }
    }
    expect(compared).toBeGreaterThanOrEqual(4);
    // Keys: from the first step, ArrowRight goes to each next step's instant, ArrowLeft back.
    await page.goto(`${server.url}?run=${encodeURIComponent(run)}&t=${shots[0]!.started_at}`);
    await page.waitForSelector('body[data-ready="run"]');
    await waitShown(shots[0]!.started_at);
    for (let i = 1; i < shots.length; i++) {
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((want) => document.querySelector('#steps')?.getAttribute('data-current') === String(want), i);
      await waitShown(shots[i]!.started_at);
    }
    await page.screenshot({ path: join(artifacts, 'run-last-step.png') });
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction((want) => document.querySelector('#steps')?.getAttribute('data-current') === String(want), shots.length - 2);
    await waitShown(shots[shots.length - 2]!.started_at);
    // The before frame of that step, equal to the post-processor's.
    const s = shots[shots.length - 2]!;
    if (s.before && s.before_at === s.started_at) expect(Buffer.compare((await canvasRgb()).rgb, await pngRgb(join(out, run, s.before)))).toBe(0);
    // Dragging the timeline seeks; play at 8x moves the playhead forward.
    const box = (await page.locator('#timeline').boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.5, box.y + box.height / 2);
    await page.waitForFunction(() => new URL(location.href).searchParams.has('t'));
    await page.click('#speeds button[data-speed="8"]');
    const t0 = Number(await page.$eval('#screen', (c) => (c as HTMLCanvasElement).dataset.t));
    await page.click('#play');
    await page.waitForFunction((from) => Number((document.querySelector('#screen') as HTMLCanvasElement).dataset.t) > from + 100, t0);
    await page.click('#play');
    await page.screenshot({ path: join(artifacts, 'run-playing.png') });
    await page.waitForFunction(() => document.body.dataset.indexed === '1');
    await copyFile(join(artifacts, 'run.png'), join(REPO, 'docs', 'viewer-run.png'));
    await copyFile(join(artifacts, 'list.png'), join(REPO, 'docs', 'viewer-list.png'));
  });
});
