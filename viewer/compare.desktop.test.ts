/**
 * The compare view of vncua serve in a real browser: two real runs of one task (`vncua eval` on a local
 * desktop: the replay agent, and the scripted agent playing the same task's reference with two extra
 * steps, a pointer move first and a wait before Return), post-processed by `vncua process`. Playwright
 * (Chromium) picks the two runs in the list, opens their comparison, steps through the aligned rows with
 * the keys and checks both canvases' pixels against the post-processor's frames at each aligned step,
 * drags a timeline, and follows "compare with…" from a run page. A screenshot of the compare view is kept
 * under the test's temp dir (artifacts/) and copied to docs/ for the README.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warpPoints, warpTime } from './app/warp.ts';
import { startViewerServer, type ViewerServer } from './server.ts';
import { REPO, canvasRgb, launchViewerBrowser, pngRgb, vncua, waitShown } from './test-helpers/browser.ts';

const A = 'replay/1280_800/type-search';
const B = 'scripted/1280_800/type-search';
const OTHER = 'replay/1280_800/click-button';

/** type-search's reference (eval/suites/basic/references/type-search.json) with a pointer move first and a wait before Return. */
const SCRIPT = [
  { action: 'mouse_move', params: { position: { x: 640, y: 400 } } },
  { action: 'mouse_click', params: { position: { x: 290, y: 140 }, button: 'left', click_type: 'single' } },
  { action: 'type_text', params: { text: 'wireless mouse' } },
  { action: 'wait', params: { seconds: 0.3 } },
  { action: 'press_keys', params: { keys: 'Return' } },
  { action: 'finish', params: {} },
];

interface Shot {
  index: number;
  started_at: number;
  before: string | null;
  before_at: number | null;
}
interface Entry {
  index: number;
  started_at?: number;
  ended_at?: number;
}
interface Comparison {
  a: { entries: Entry[] };
  b: { entries: Entry[] };
  rows: Array<{ a: number | null; b: number | null; kind: string }>;
}

let dir: string;
let out: string;
let artifacts: string;
let server: ViewerServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vncua-compare-desktop-'));
  out = join(dir, 'out');
  artifacts = join(dir, 'artifacts');
  await mkdir(artifacts);
  const script = join(dir, 'type-search-detour.json');
  await writeFile(script, JSON.stringify(SCRIPT));
  const replay = await vncua(['eval', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'replay', '--only', 'type-search,click-button', '--out', out]);
  expect(replay.code, replay.out).toBe(0);
  const scripted = await vncua(['eval', '--tasks', 'eval/suites/basic/tasks.json', '--agent', 'scripted', '--script', script, '--only', 'type-search', '--out', out]);
  expect(scripted.code, scripted.out).toBe(0);
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

const shotsOf = async (run: string) => (JSON.parse(await readFile(join(out, run, 'action_screenshots.json'), 'utf8')) as { actions: Shot[] }).actions;
const currentRow = () => page.$eval('#cmp-rows', (t) => Number((t as HTMLElement).dataset.current));
/** `t` clamped to the timeline of the canvas `sel` (its data-start .. data-end). */
const within = (sel: string, t: number) => page.$eval(sel, (c, at) => Math.max(Number((c as HTMLElement).dataset.start), Math.min(Number((c as HTMLElement).dataset.end), at)), t);
const shownT = (sel: string) => page.$eval(sel, (c) => Number((c as HTMLCanvasElement).dataset.t));

describe('vncua serve: comparing two runs of one task in Chromium', () => {
  it('picks two runs of one task in the list and opens their comparison: steps aligned, the extra steps as gaps', async () => {
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="list"]');
    await page.check(`input.pick[value="${A}"]`);
    // Once a run is picked, runs of other tasks cannot be.
    expect(await page.isDisabled(`input.pick[value="${OTHER}"]`)).toBe(true);
    expect(await page.locator('#compare-picked').count()).toBe(0);
    await page.check(`input.pick[value="${B}"]`);
    await page.screenshot({ path: join(artifacts, 'list-picked.png') });
    await page.click('#compare-picked');
    await page.waitForSelector('body[data-ready="compare"]');
    const url = new URL(page.url());
    expect([url.searchParams.get('compare'), url.searchParams.get('with')]).toEqual([A, B]);
    const kinds = await page.$$eval('#cmp-rows tbody tr', (trs) => trs.map((tr) => tr.className.replace('cmp-row ', '').replace(' current', '')));
    expect(kinds).toEqual(['kind-only_b', 'kind-same', 'kind-same', 'kind-only_b', 'kind-same', 'kind-same']);
    expect(await page.locator('#pane-a .cmp-head').textContent()).toContain('replay');
    expect(await page.locator('#pane-b .cmp-head').textContent()).toContain('6 steps');
  });

  it('each row shows both runs at their aligned steps, pixel for pixel the post-processor frames; keys step both; dragging one timeline moves the other', async () => {
    const [shotsA, shotsB] = [await shotsOf(A), await shotsOf(B)];
    const c = (await (await fetch(`${server.url}api/compare?a=${encodeURIComponent(A)}&b=${encodeURIComponent(B)}`)).json()) as Comparison;
    const ab = warpPoints(c.rows, c.a.entries, c.b.entries);
    const ba = ab.map(([x, y]) => [y, x] as [number, number]);
    await page.goto(`${server.url}?compare=${encodeURIComponent(A)}&with=${encodeURIComponent(B)}&row=0`);
    await page.waitForSelector('body[data-ready="compare"]');
    let compared = 0;
    for (let k = 0; k < c.rows.length; k++) {
      if (k > 0) await page.keyboard.press('ArrowRight');
      await page.waitForFunction((want) => document.querySelector('#cmp-rows')?.getAttribute('data-current') === String(want), k);
      expect(new URL(page.url()).searchParams.get('row')).toBe(String(k));
      const r = c.rows[k]!;
      const sa = r.a === null ? undefined : c.a.entries[r.a]!.started_at;
      const sb = r.b === null ? undefined : c.b.entries[r.b]!.started_at;
      // A side without a step in this row shows the instant the other side's step maps to (within its timeline).
      const ta = sa ?? (await within('#screen-a', warpTime(ba, sb!)));
      const tb = sb ?? (await within('#screen-b', warpTime(ab, sa!)));
      await waitShown(page, ta, '#screen-a');
      await waitShown(page, tb, '#screen-b');
      for (const [side, shots, index, sel] of [
        [A, shotsA, r.a, '#screen-a'],
        [B, shotsB, r.b, '#screen-b'],
      ] as const) {
        const s = index === null ? undefined : shots.find((x) => x.index === index);
        // The post-processor's before frame is at the step's start (but for a first action that opened the connection).
        if (!s?.before || s.before_at !== s.started_at) continue;
        const got = await canvasRgb(page, sel);
        expect([got.width, got.height]).toEqual([1280, 800]);
        expect(Buffer.compare(got.rgb, await pngRgb(join(out, side, s.before))), `row ${k} ${side} step ${index}`).toBe(0);
        compared++;
      }
      if (k === 3) await page.screenshot({ path: join(artifacts, 'compare.png') });
    }
    expect(compared).toBeGreaterThanOrEqual(7);
    // Back one row with the key.
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction((want) => document.querySelector('#cmp-rows')?.getAttribute('data-current') === String(want), c.rows.length - 2);
    const last = c.rows[c.rows.length - 2]!;
    await waitShown(page, c.a.entries[last.a!]!.started_at!, '#screen-a');
    await waitShown(page, c.b.entries[last.b!]!.started_at!, '#screen-b');
    // Clicking B's timeline near its start moves A to the instant the warp gives.
    const before = await shownT('#screen-b');
    const box = (await page.locator('#pane-b .timeline').boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.05, box.y + box.height / 2);
    await page.waitForFunction((was) => Number((document.querySelector('#screen-b') as HTMLCanvasElement).dataset.t) < was, before);
    await expect
      .poll(async () => Math.abs((await shownT('#screen-a')) - (await within('#screen-a', warpTime(ba, await shownT('#screen-b'))))), { timeout: 20_000 })
      .toBeLessThan(0.01);
    expect(await currentRow()).toBeLessThan(c.rows.length - 2);
    await copyFile(join(artifacts, 'compare.png'), join(REPO, 'docs', 'viewer-compare.png'));
  });

  it('a run page offers "compare with…" the other runs of its task; runs of two tasks are refused with the code', async () => {
    await page.goto(`${server.url}?run=${encodeURIComponent(A)}`);
    await page.waitForSelector('#compare-with');
    expect(await page.$$eval('#compare-with a.cmp-link', (as) => as.map((a) => (a as HTMLElement).dataset.dir))).toEqual([B]);
    await page.click('#compare-with a.cmp-link');
    await page.waitForSelector('body[data-ready="compare"]');
    expect(new URL(page.url()).searchParams.get('with')).toBe(B);
    await page.goto(`${server.url}?run=${encodeURIComponent(OTHER)}`);
    await page.waitForSelector('#compare-with');
    expect(await page.$eval('#compare-with', (d) => (d as HTMLElement).dataset.count)).toBe('0');
    await page.goto(`${server.url}?compare=${encodeURIComponent(A)}&with=${encodeURIComponent(OTHER)}`);
    await page.waitForSelector('body[data-ready="compare"]');
    expect(await page.locator('#cmp-error').textContent()).toContain('SERVE_ERR_COMPARE_MISMATCH');
  });
});
