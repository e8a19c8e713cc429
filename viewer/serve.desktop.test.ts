/**
 * vncua serve in a real browser: a real `vncua eval` (replay agent, two basic-suite tasks on a local desktop),
 * post-processed by `vncua process`; Playwright (Chromium) lists and filters the runs, opens one, seeks to the
 * instants of the post-processor's frames and compares the canvas's pixels with them, and steps with the keys.
 * Screenshots of each view are kept under the test's temp dir (artifacts/), and the run view is copied to docs/.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewerServer, type ViewerServer } from './server.ts';
import { REPO, canvasRgb as canvasOf, launchViewerBrowser, pngRgb, vncua, waitShown as shownOn } from './test-helpers/browser.ts';

const TASKS = ['click-button', 'type-search'];

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
  browser = await launchViewerBrowser();
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir && !process.env.VNCUA_KEEP_ARTIFACTS) await rm(dir, { recursive: true, force: true });
  else if (dir) process.stderr.write(`artifacts kept in ${artifacts}\n`);
});

const canvasRgb = () => canvasOf(page);
const waitShown = (t: number) => shownOn(page, t);

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
