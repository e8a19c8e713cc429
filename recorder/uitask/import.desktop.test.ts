/**
 * Import of uitask runs, end to end: a real session recorded the way uitask records (ns time
 * records, no recording.json, no timestamps in execution.json; Tight + JPEG), and a synthetic run
 * whose server stream holds TightPNG. Alignment is checked against times measured around each
 * action; the post-processor's output (recorder/process) against the page's changes and the fixtures' pixels.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../../harness/agent/test-helpers/tcp-proxy.ts';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { readTrace } from '../../harness/trace/reader.ts';
import { uitaskClick, uitaskDrag, uitaskFinish, uitaskKeys, uitaskMove, uitaskScroll, uitaskType, uitaskWait } from '../../harness/trace/test-fixtures/uitask.ts';
import { processRun, type ActionScreenshotsFile, type ActionShot } from '../process/index.ts';
import { alignUitaskTrace } from './index.ts';
import { makeSyntheticUitaskRun, makeUitaskRun, type SyntheticUitaskRun, type UitaskRun, type UitaskStep } from './test-helpers/make-uitask-run.ts';
import { recordedInput } from './test-helpers/recorded-input.ts';

const PAGE = await readFile(new URL('./test-pages/uitask.html', import.meta.url));

const TOGGLE = { x: 570, y: 110 };
const STEPS: UitaskStep[] = [
  uitaskMove({ x: 700, y: 450 }),
  uitaskClick(TOGGLE),
  uitaskClick({ x: 200, y: 280 }),
  uitaskType('Hello uitask'),
  uitaskKeys(['ctrl', 'a']),
  uitaskDrag({ x: 590, y: 280 }, { x: 680, y: 420 }),
  uitaskScroll({ x: 400, y: 500 }, 'down', 3),
  uitaskWait(0.3),
  uitaskFinish(null, { done: true }),
];

/** Pixel (x, y) of a PNG file as [r, g, b]. */
async function pngPixel(file: string, x: number, y: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 3;
  return [data[i]!, data[i + 1]!, data[i + 2]!];
}

/** Run the post-processor on a run directory and read its action_screenshots.json. */
async function processAndRead(dir: string): Promise<ActionScreenshotsFile> {
  await processRun(dir, { overwrite: true });
  return JSON.parse(await readFile(join(dir, 'action_screenshots.json'), 'utf8')) as ActionScreenshotsFile;
}

describe('uitask import: a real session recorded like uitask', () => {
  let server: Server;
  let desktop: Desktop | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let root: string;
  let run: UitaskRun;
  let tcp: TcpProxy | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-uitask-'));
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(PAGE);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/uitask.html`;
    desktop = await launchDesktop({ url, size: '800x600', timeoutMs: 45_000 });
    browser = await chromium.connectOverCDP(desktop.cdpUrl);
    for (let i = 0; i < 200; i++) {
      const p = browser
        .contexts()
        .flatMap((c) => c.pages())
        .find((x) => x.url() === url);
      if (p) {
        page = p;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!page) throw new Error('the test page did not open');
    await page.waitForFunction(() => document.readyState === 'complete');
    // uitask dials raw TCP; without a password the desktop has no TCP port: a test relay gives its unix socket one.
    tcp = await startTcpProxy(`unix://${desktop.rfbSocket}`);
    run = await makeUitaskRun({ dir: join(root, 'run'), vncTcpUrl: tcp.url, steps: STEPS, task: 'Press the button, then type a greeting' });
  }, 120_000);

  afterAll(async () => {
    for (const step of [
      () => browser?.close(),
      () => tcp?.close(),
      () => desktop?.close(),
      () => new Promise<void>((r) => server?.close(() => r())),
      () => rm(root, { recursive: true, force: true }),
    ]) {
      try {
        await step();
      } catch {
        // keep cleaning up
      }
    }
  });

  it('performed the steps on the page', async () => {
    const state = await page.evaluate(() => ({
      toggled: document.getElementById('toggle')!.classList.contains('on'),
      text: (document.getElementById('field') as HTMLInputElement).value,
      selected: (() => {
        const f = document.getElementById('field') as HTMLInputElement;
        return f.selectionEnd! - f.selectionStart!;
      })(),
      moved: document.getElementById('src')!.offsetLeft,
      scrollY: window.scrollY,
    }));
    expect(state).toEqual({ toggled: true, text: 'Hello uitask', selected: 'Hello uitask'.length, moved: 560 + 90, scrollY: expect.any(Number) as number });
    expect(state.scrollY).toBeGreaterThan(0);
  });

  it('writes the uitask layout: execution.json without timing, ns time records, no recording.json, Tight JPEG from the server', async () => {
    const trace = await readTrace(run.dir);
    expect(trace.source).toBe('uitask');
    expect(trace.entries.map((e) => e.action)).toEqual(STEPS.map((s) => s.action));
    expect(trace.entries.every((e) => e.started_at === undefined)).toBe(true);
    const raw = JSON.parse(await readFile(join(run.dir, 'execution.json'), 'utf8')) as Array<Record<string, unknown>>;
    expect(Object.keys(raw[0]!).sort()).toEqual(['action', 'params', 'task_marked_complete']);
    // uitask's nested params, read as vncua's flat ones.
    expect(raw[1]!.params).toEqual({ action: { button: 'left', click_type: 'single', position: TOGGLE } });
    expect(trace.entries[1]!.params).toEqual({ position: TOGGLE, button: 'left', click_type: 'single' });
    expect(trace.entries[4]!.params).toEqual({ keys: 'ctrl+a' });
    expect(trace.entries[7]!.params).toEqual({ seconds: 0.3 });

    const rec = join(run.dir, 'recording');
    expect((await readdir(run.dir)).sort()).toEqual(['execution.json', 'recording', 'task.json']);
    expect((await readdir(rec)).sort()).toEqual(['client.rfb.bin', 'client.time.bin', 'server.rfb.bin', 'server.time.bin']);
    for (const d of ['client', 'server']) {
      const time = await readFile(join(rec, `${d}.time.bin`));
      expect(time.length % 16).toBe(0);
      let prev = 0n;
      for (let o = 0; o < time.length; o += 16) {
        const ns = time.readBigUInt64BE(o);
        expect(ns).toBeGreaterThanOrEqual(prev);
        expect(ns).toBeGreaterThan(10n ** 18n); // epoch nanoseconds
        prev = ns;
      }
      expect(Number(time.readBigUInt64BE(time.length - 8))).toBe((await stat(join(rec, `${d}.rfb.bin`))).size);
    }
    expect(run.rects.Tight).toBeGreaterThan(0);
    expect(run.images.jpeg).toBeGreaterThan(0);
    expect(run.rects.Cursor).toBeGreaterThan(0);
    const input = await recordedInput(rec);
    expect([input.source, input.timeUnit, input.warnings]).toEqual(['uitask', 'ns', []]);
  });

  it("infers each action's time inside the window its input was really sent in", async () => {
    const trace = await readTrace(run.dir);
    const input = await recordedInput(join(run.dir, 'recording'));
    const r = alignUitaskTrace(trace.entries, input.events, { startAt: input.startAt, endAt: input.endAt });
    expect(r.warnings).toEqual([]);
    expect(r.matches.map((m) => m.placement)).toEqual([...Array(7).fill('input'), 'between', 'end']);
    const eps = 0.01; // µs rounding of both clocks' readings, ns → ms conversion
    for (let i = 0; i < 7; i++) {
      const e = r.entries[i]!;
      const t = run.truth[i]!;
      expect(e.started_at, `entry ${i} start`).toBeGreaterThanOrEqual(t.started_at - eps);
      expect(e.ended_at, `entry ${i} end`).toBeLessThanOrEqual(t.ended_at + eps);
      expect(e.ended_at).toBeGreaterThanOrEqual(e.started_at);
    }
    // The wait lies between the scroll's input and the end of the recording; finish at the end.
    expect(r.entries[7]!.started_at).toBe(r.entries[6]!.ended_at);
    expect(r.entries[8]!.started_at).toBeCloseTo(input.endAt, 3);
    expect(r.entries[7]!.ended_at).toBeCloseTo(input.endAt, 3);
  });

  it("post-processes the run into before/after PNGs per action, inferred, with the click's change visible", async () => {
    const json = await processAndRead(run.dir);
    expect([json.source, json.alignment, json.task, json.width, json.height]).toEqual(['uitask', 'inferred', 'Press the button, then type a greeting', 800, 600]);
    expect(json.warnings.filter((w) => w.code.startsWith('UITASK_ALIGN'))).toEqual([]);
    expect(json.actions).toHaveLength(STEPS.length);
    for (let i = 0; i < 7; i++) {
      expect(json.actions[i]!.started_at).toBeGreaterThanOrEqual(run.truth[i]!.started_at - 0.01);
      expect(json.actions[i]!.ended_at).toBeLessThanOrEqual(run.truth[i]!.ended_at + 0.01);
    }
    // Every action that sent input has both images (wait and finish lie after the server's last update,
    // which the post-processor treats as the end of the recording).
    for (const a of json.actions.slice(0, 7)) {
      expect(a.before, `before of ${a.index}`).toMatch(/^action_screenshots\/\d{4}_before\.png$/);
      expect(a.after, `after of ${a.index}`).toMatch(/^action_screenshots\/\d{4}_after\.png$/);
      expect(existsSync(join(run.dir, a.before!))).toBe(true);
      expect(existsSync(join(run.dir, a.after!))).toBe(true);
    }
    const click = json.actions[1]!;
    expect(click.action).toBe('mouse_click');
    // The button is green (#2a6) before the click and red (#c33) after it.
    const before = await pngPixel(join(run.dir, click.before!), TOGGLE.x + 100, TOGGLE.y + 50);
    const after = await pngPixel(join(run.dir, click.after!), TOGGLE.x + 100, TOGGLE.y + 50);
    expect(before[1]).toBeGreaterThan(before[0]);
    expect(after[0]).toBeGreaterThan(after[1]);
  });
});

describe('uitask import: a synthetic run with TightPNG', () => {
  let root: string;
  let run: SyntheticUitaskRun;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'vncua-uitask-png-'));
    run = await makeSyntheticUitaskRun({ dir: join(root, 'run') });
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("aligns the synthetic run's actions to its input", async () => {
    const trace = await readTrace(run.dir);
    const input = await recordedInput(join(run.dir, 'recording'));
    expect([input.source, input.timeUnit, input.warnings]).toEqual(['uitask', 'ns', []]);
    const r = alignUitaskTrace(trace.entries, input.events, { startAt: input.startAt, endAt: input.endAt });
    expect(r.warnings).toEqual([]);
    const times = r.entries.map((e) => [e.started_at, e.ended_at]);
    expect(times).toEqual([run.input.click, run.input.keys, [run.input.keys[1], input.endAt], [input.endAt, input.endAt]]);
  });

  it('replays TightPNG, CopyRect, Cursor and LastRect into the before/after images', async () => {
    const json = await processAndRead(run.dir);
    expect([json.source, json.alignment, json.width, json.height, json.warnings]).toEqual(['uitask', 'inferred', run.width, run.height, []]);
    expect(json.actions.map((a) => [a.before, a.after])).toEqual([0, 1, 2, 3].map((i) => [`action_screenshots/000${i}_before.png`, `action_screenshots/000${i}_after.png`]));
    const [click, keys] = json.actions as [ActionShot, ActionShot];
    const at = (a: ActionShot, k: 'before' | 'after', x: number, y: number) => pngPixel(join(run.dir, a[k]!), x, y);
    const sq = run.square;
    // Away from the cursor: before the click, the initial picture; after it, the square.
    expect(await at(click, 'before', sq.x + 10, sq.y + 3)).toEqual(run.initialPixel(sq.x + 10, sq.y + 3));
    expect(await at(click, 'after', sq.x + 10, sq.y + 3)).toEqual(run.squarePixel(10, 3));
    // After the keys: the square copied (CopyRect) and the bar filled (TightPNG fill).
    expect(await at(keys, 'before', run.copy.x + 10, run.copy.y + 3)).toEqual(run.initialPixel(run.copy.x + 10, run.copy.y + 3));
    expect(await at(keys, 'after', run.copy.x + 10, run.copy.y + 3)).toEqual(run.squarePixel(10, 3));
    expect(await at(keys, 'after', 50, run.bar.y + 2)).toEqual(run.bar.rgb);
  });
});
