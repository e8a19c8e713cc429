/**
 * The step report opened from disk (file://) in real headless Chromium through playwright-core:
 * no console or page errors, no network, every image loads, markers sit on the action's
 * coordinates at any scale, keyboard navigation, escaped text, lazy loading for 300 steps.
 */
import { rm, stat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestChromium } from '../../harness/cdp/test-helpers.ts';
import { writeStepReport } from './index.ts';
import { makeRunDir, manySteps, type FixtureStep } from './test-helpers/fixture.ts';

let chrome: TestChromium;
let browser: Browser;
const dirs: string[] = [];

beforeAll(async () => {
  chrome = await launchChromium();
  browser = await chromium.connectOverCDP(chrome.cdpUrl);
});
afterAll(async () => {
  try {
    await browser?.close();
  } catch {
    /* already gone */
  }
  try {
    await chrome?.close();
  } catch {
    /* already gone */
  }
  for (const d of dirs) await rm(d, { recursive: true, force: true }).catch(() => undefined);
});

/** A fresh page that records console errors, page errors and every requested URL. */
async function openReport(htmlPath: string, viewport = { width: 1280, height: 900 }) {
  const ctx = await browser.newContext({ viewport });
  const page = await ctx.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(htmlPath).href, { waitUntil: 'load' });
  return { page, problems, requests, close: () => ctx.close() };
}

/** Waits until every image of step `pos` has loaded (after scrolling it into view); returns their natural widths. */
async function loadStepImages(page: Page, pos: number): Promise<number[]> {
  await page.evaluate((p) => document.getElementById(`step-${p}`)!.scrollIntoView({ block: 'start' }), pos);
  await page.waitForFunction((p) => Array.from(document.querySelectorAll<HTMLImageElement>(`#step-${p} img`)).every((i) => i.complete && i.naturalWidth > 0), pos, {
    timeout: 10_000,
  });
  return page.evaluate((p) => Array.from(document.querySelectorAll<HTMLImageElement>(`#step-${p} img`)).map((i) => i.naturalWidth), pos);
}

/** Distance in CSS px between each marker's centre and where the action's coordinates fall on the rendered image. */
async function markerErrors(page: Page, pos: number, step: FixtureStep): Promise<Array<{ which: string; role: string; dx: number; dy: number }>> {
  const w = step.entry.width as number;
  const h = step.entry.height as number;
  return page.evaluate(
    ({ pos, markers, w, h }) => {
      const out: Array<{ which: string; role: string; dx: number; dy: number }> = [];
      for (const which of ['before', 'after']) {
        const img = document.querySelector<HTMLImageElement>(`#step-${pos} .shot.${which} img`)!;
        const ir = img.getBoundingClientRect();
        for (const m of markers) {
          const el = document.querySelector(`#step-${pos} .shot.${which} .mk[data-role="${m.role}"]`);
          if (!el) {
            out.push({ which, role: m.role, dx: Infinity, dy: Infinity });
            continue;
          }
          const r = el.getBoundingClientRect();
          out.push({
            which,
            role: m.role,
            dx: r.left + r.width / 2 - (ir.left + (m.x / w) * ir.width),
            dy: r.top + r.height / 2 - (ir.top + (m.y / h) * ir.height),
          });
        }
      }
      return out;
    },
    { pos, markers: step.markers, w, h },
  );
}

async function currentStep(page: Page): Promise<{ ids: string[]; top: number | null }> {
  return page.evaluate(() => {
    const cur = Array.from(document.querySelectorAll('section.step.current'));
    return { ids: cur.map((e) => e.id), top: cur[0] ? cur[0].getBoundingClientRect().top : null };
  });
}

describe('step report in Chromium', () => {
  it('loads from disk with no errors or network, every image loads and markers sit on the coordinates', async () => {
    const { dir, steps, data } = await makeRunDir();
    dirs.push(dir);
    const html = await writeStepReport(dir);
    const r = await openReport(html);
    try {
      // Untrusted text shows as text; nothing injected ran or became an element.
      const shown = await r.page.evaluate(() => ({
        task: document.querySelector('.task')!.textContent,
        typed: document.querySelector('.typed pre.text')!.textContent,
        keys: document.querySelector('.typed kbd.text')!.textContent,
        error: document.querySelector('.error')!.textContent,
        warning: document.querySelector('.warnings li')!.textContent,
        pwned: (window as unknown as { __pwned?: number }).__pwned ?? null,
        injected: document.querySelectorAll('#injected').length,
        scripts: document.scripts.length,
      }));
      expect(shown.task).toBe(data.task);
      expect(shown.typed).toBe((steps[6]!.entry.params as { text: string }).text);
      expect(shown.keys).toBe('ctrl+<');
      expect(shown.error).toBe(`ACTION_ERR_OFF_SCREEN ${(steps[11]!.entry.error as { message: string }).message}`);
      expect(shown.warning).toBe(`RECORDING_ERR_TRUNCATED ${data.warnings![0]!.message}`);
      expect(shown.pwned).toBeNull();
      expect(shown.injected).toBe(0);
      expect(shown.scripts).toBe(1);

      let markersChecked = 0;
      for (const [pos, step] of steps.entries()) {
        if (!step.colors.before) {
          expect(await r.page.locator(`#step-${pos} img`).count()).toBe(0);
          expect(await r.page.locator(`#step-${pos} .shot.missing`).count()).toBe(2);
          continue;
        }
        const widths = await loadStepImages(r.page, pos);
        expect(widths).toEqual([step.entry.width, step.entry.width]);
        const errs = await markerErrors(r.page, pos, step);
        expect(errs.length).toBe(step.markers.length * 2);
        for (const e of errs) {
          expect(Math.abs(e.dx), `step ${pos} ${e.which} ${e.role} dx`).toBeLessThanOrEqual(1);
          expect(Math.abs(e.dy), `step ${pos} ${e.which} ${e.role} dy`).toBeLessThanOrEqual(1);
        }
        markersChecked += errs.length;
        // No stray markers beyond the expected ones.
        expect(await r.page.locator(`#step-${pos} .mk`).count()).toBe(step.markers.length * 2);
      }
      expect(markersChecked).toBe(2 * steps.reduce((n, s) => n + s.markers.length, 0));
      expect(markersChecked).toBeGreaterThanOrEqual(16);

      // The drag line runs from start to end on the rendered image; the scroll marker shows its direction.
      const drag = await r.page.evaluate(() => {
        const img = document.querySelector('#step-4 .shot.before img')!.getBoundingClientRect();
        const line = document.querySelector('#step-4 .shot.before svg line')!.getBoundingClientRect();
        return { img: { l: img.left, t: img.top, w: img.width, h: img.height }, line: { l: line.left, t: line.top, r: line.right, b: line.bottom } };
      });
      expect(Math.abs(drag.line.l - (drag.img.l + (20 / 320) * drag.img.w))).toBeLessThanOrEqual(1);
      expect(Math.abs(drag.line.t - (drag.img.t + (20 / 200) * drag.img.h))).toBeLessThanOrEqual(1);
      expect(Math.abs(drag.line.r - (drag.img.l + (250 / 320) * drag.img.w))).toBeLessThanOrEqual(1);
      expect(Math.abs(drag.line.b - (drag.img.t + (150 / 200) * drag.img.h))).toBeLessThanOrEqual(1);
      expect(await r.page.locator('#step-5 .shot.before .mk.scroll .dir').textContent()).toBe('↓');
      expect(await r.page.locator('#step-5 .shot.before .mk.scroll .lbl').textContent()).toBe('×3');

      // The images show the right step (distinct colour per step and per before/after).
      // (file:// images taint a canvas, so read the pixels from a screenshot of the image element.)
      const shot = await r.page.locator('#step-3 .shot.after img').screenshot();
      const { data: raw, info } = await sharp(shot).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const at = (5 * info.width + 5) * 3;
      const px = [raw[at], raw[at + 1], raw[at + 2]];
      expect(px).toEqual(steps[3]!.colors.after);

      // Markers stay on their coordinates when the images scale (narrow window: one column).
      await r.page.setViewportSize({ width: 520, height: 800 });
      for (const pos of [1, 3, 10]) {
        await loadStepImages(r.page, pos);
        for (const e of await markerErrors(r.page, pos, steps[pos]!)) {
          expect(Math.abs(e.dx), `narrow step ${pos} ${e.which} dx`).toBeLessThanOrEqual(1);
          expect(Math.abs(e.dy), `narrow step ${pos} ${e.which} dy`).toBeLessThanOrEqual(1);
        }
      }

      expect(r.requests.length).toBeGreaterThan(steps.length);
      expect(r.requests.filter((u) => !u.startsWith('file://'))).toEqual([]);
      expect(r.problems).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('moves the highlighted step with j/k, the arrow keys and Home/End, scrolling it into view', async () => {
    const { dir, steps } = await makeRunDir();
    dirs.push(dir);
    const r = await openReport(await writeStepReport(dir));
    try {
      expect((await currentStep(r.page)).ids).toEqual([]);
      const press = async (key: string) => {
        await r.page.keyboard.press(key);
        return currentStep(r.page);
      };
      expect((await press('j')).ids).toEqual(['step-0']);
      await press('j');
      const third = await press('j');
      expect(third.ids).toEqual(['step-2']);
      expect(Math.abs(third.top!)).toBeLessThanOrEqual(10);
      expect((await press('k')).ids).toEqual(['step-1']);
      expect((await press('ArrowDown')).ids).toEqual(['step-2']);
      expect((await press('ArrowUp')).ids).toEqual(['step-1']);
      const last = await press('End');
      expect(last.ids).toEqual([`step-${steps.length - 1}`]);
      expect(last.top!).toBeGreaterThanOrEqual(-1);
      expect(last.top!).toBeLessThan(900);
      expect((await press('j')).ids).toEqual([`step-${steps.length - 1}`]);
      expect((await press('Home')).ids).toEqual(['step-0']);
      expect((await press('k')).ids).toEqual(['step-0']);
      expect(await r.page.evaluate(() => document.querySelector('nav.index a.current')?.textContent)).toBe('0');
      // The page documents its keys.
      expect(await r.page.locator('.keys').textContent()).toMatch(/j.*next.*k.*previous/);
      // m hides and shows the markers.
      await r.page.keyboard.press('m');
      expect(await r.page.locator('#step-1 .shot.before .mk').isVisible()).toBe(false);
      await r.page.keyboard.press('m');
      expect(await r.page.locator('#step-1 .shot.before .mk').isVisible()).toBe(true);
      expect(r.problems).toEqual([]);
    } finally {
      await r.close();
    }
  });

  it('a 300-step report does not load every image up front, and loads them when scrolled to', async () => {
    const { dir } = await makeRunDir({ steps: manySteps(300) });
    dirs.push(dir);
    const html = await writeStepReport(dir);
    // Small HTML: no inlined images, about 1.6 KB per step.
    expect((await stat(html)).size).toBeLessThan(300 * 2048);
    const r = await openReport(html);
    try {
      await loadStepImages(r.page, 0);
      const count = () =>
        r.page.evaluate(() => {
          const imgs = Array.from(document.querySelectorAll<HTMLImageElement>('img'));
          return { total: imgs.length, loaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length };
        });
      const before = await count();
      expect(before.total).toBe(600);
      expect(before.loaded).toBeGreaterThanOrEqual(2);
      expect(before.loaded).toBeLessThan(60);
      const imageRequests = r.requests.filter((u) => u.endsWith('.png')).length;
      expect(imageRequests).toBeLessThan(60);
      await r.page.keyboard.press('End');
      expect(await loadStepImages(r.page, 299)).toEqual([320, 320]);
      expect((await count()).loaded).toBeLessThan(120);
      expect(r.problems).toEqual([]);
    } finally {
      await r.close();
    }
  });
});
