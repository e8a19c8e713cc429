/**
 * End to end on a real desktop: an Agent run recorded through the recording proxy (the Agent's
 * recorder option: recordingProxyRecorder), then processRun: each action's before image shows the screen before it, its after
 * image the screen after it, matched by the trace's timestamps (same clock as the recording).
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../harness/agent/agent.ts';
import { launchDesktop, type Desktop } from '../../harness/desktop/index.ts';
import { serveDir } from '../../harness/test-helpers/serve-dir.ts';
import { readResult, readTrace } from '../../harness/trace/reader.ts';
import { connectVnc } from '../../harness/rfb/index.ts';
import { recordingProxyRecorder as recorder } from '../recorder-factory.ts';
import { BOX, BOX_COLOURS, PAGE_BACKGROUND, serveBoxesPage } from '../replay/test-helpers/page.ts';
import type { ActionScreenshotsFile } from './output.ts';
import { processRun } from './run.ts';

/** Clicks boxes 1, 2 and 5, waits, finishes; thinks 400 ms before each step (as a model would), so each click's effect lands before the next action. */
class BoxAgent extends Agent {
  private step = 0;
  override async act(): Promise<boolean> {
    const s = this.step++;
    if (s > 0) await new Promise((r) => setTimeout(r, 400));
    if (s < 3) await this.mouseClick({ position: BOX([1, 2, 5][s]!) });
    else if (s === 3) await this.wait(0.2);
    else {
      await this.finish();
      return true;
    }
    return false;
  }
}

/** Clicks the input of harness/agent/test-pages/success.html, types its wanted text, and finishes at once. */
class InstantFinishAgent extends Agent {
  override async act(): Promise<boolean> {
    await this.mouseClick({ position: { x: 200, y: 60 } });
    await this.typeText('abc');
    await this.finish();
    return true;
  }
}

let page: { url: string; close(): Promise<void> };
let desktop: Desktop;
let root: string;

beforeAll(async () => {
  page = await serveBoxesPage();
  root = await mkdtemp(join(tmpdir(), 'vncua-agent-process-'));
  desktop = await launchDesktop({ url: page.url });
  const probe = await connectVnc(desktop.vncUrl);
  try {
    const end = Date.now() + 20_000;
    while (Date.now() < end && probe.framebuffer.pixel(2, 2).slice(0, 3).join() !== PAGE_BACKGROUND.join()) await probe.waitForUpdate({ timeoutMs: 1000 }).catch(() => {});
  } finally {
    await probe.close();
  }
}, 60_000);

afterAll(async () => {
  await desktop?.close();
  await page?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

async function pixel(file: string, p: { x: number; y: number }): Promise<number[]> {
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  const o = (p.y * info.width + p.x) * info.channels;
  return [data[o]!, data[o + 1]!, data[o + 2]!];
}

describe('processRun on a recorded Agent run', () => {
  it('shows each click’s box untouched before and toggled after', async () => {
    const outputDir = join(root, 'run');
    const result = await new BoxAgent({ outputDir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, recorder }).run({ maxSteps: 10 });
    expect(result.status).toBe('finished');
    const r = await processRun(outputDir);
    expect(r.status).toBe('processed');
    const j = JSON.parse(await readFile(join(outputDir, 'action_screenshots.json'), 'utf8')) as ActionScreenshotsFile;
    expect(j.warnings).toEqual([]);
    expect(j.actions.map((a) => a.action)).toEqual(['mouse_click', 'mouse_click', 'mouse_click', 'wait', 'finish']);
    expect([j.width, j.height]).toEqual([desktop.width, desktop.height]);
    for (const [k, box] of [1, 2, 5].entries()) {
      const a = j.actions[k]!;
      // Probe away from the click point (the cursor is drawn there) but inside the box.
      const probe = { x: BOX(box).x + 70, y: BOX(box).y + 40 };
      expect(await pixel(join(outputDir, a.before!), probe), `action ${k} before`).toEqual(BOX_COLOURS[box % 4]);
      expect(await pixel(join(outputDir, a.after!), probe), `action ${k} after`).not.toEqual(BOX_COLOURS[box % 4]);
      expect(a.settled, `action ${k} settled`).toBe(true);
      // The first click opened the connection: its before image is the first frame, which arrived during it.
      if (k === 0) expect(a.before_at! >= a.started_at! && a.before_at! <= a.ended_at!).toBe(true);
      else expect(a.before_at).toBe(a.started_at);
      expect(a.after_at!).toBeGreaterThanOrEqual(a.ended_at!);
    }
    // The earlier clicks' effects persist in later images; the wait's before equals the last click's after.
    const last = join(outputDir, j.actions[3]!.before!);
    for (const box of [1, 2, 5]) expect(await pixel(last, { x: BOX(box).x + 70, y: BOX(box).y + 40 })).not.toEqual(BOX_COLOURS[box % 4]);
    expect(await pixel(last, { x: BOX(3).x + 70, y: BOX(3).y + 40 })).toEqual(BOX_COLOURS[3]);
    expect(r.report).not.toBeNull();
  }, 60_000);
});

describe('a recorded run whose success comes after the last action', () => {
  it('the grace mark reaches execution.json (the trace is finalized after the tail); the report marks the step and shows the frame at success_at', async () => {
    const pages = await serveDir(fileURLToPath(new URL('../../harness/agent/test-pages/', import.meta.url)));
    const browser = await chromium.connectOverCDP(desktop.cdpUrl);
    try {
      const p = browser.contexts()[0]!.pages()[0]!;
      await p.goto(`${pages.url}success.html?mode=timer&period=500`);
      await p.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true);
      const outputDir = join(root, 'late');
      const result = await new InstantFinishAgent({ outputDir, vncUrl: desktop.vncUrl, cdpUrl: desktop.cdpUrl, recorder }).run({ maxSteps: 1 });
      expect(result).toMatchObject({ status: 'finished', success: true, evidence: { entry_index: 1, pattern: '>code#1</' } });
      expect(await readResult(outputDir)).toEqual(result);
      const trace = await readTrace(outputDir);
      expect(trace.partial).toBe(false);
      expect(trace.entries.map((e) => [e.action, e.task_marked_complete])).toEqual([
        ['mouse_click', false],
        ['type_text', true],
        ['finish', expect.any(Boolean)],
      ]);
      expect(trace.entries[1]!.success_check).toMatchObject({ phase: result.evidence!.phase, at: result.success_at });
      await processRun(outputDir);
      const j = JSON.parse(await readFile(join(outputDir, 'action_screenshots.json'), 'utf8')) as ActionScreenshotsFile;
      expect(j.warnings).toEqual([]);
      expect(j.success).toMatchObject({
        index: 1,
        at: result.success_at,
        phase: result.evidence!.phase,
        url: `${pages.url}success.html?mode=timer&period=500`,
        image: 'action_screenshots/success.png',
      });
      const meta = await sharp(join(outputDir, 'action_screenshots/success.png')).metadata();
      expect([meta.width, meta.height]).toEqual([desktop.width, desktop.height]);
      expect((await stat(join(outputDir, 'action_screenshots.html'))).size).toBeGreaterThan(0);
      expect(await readFile(join(outputDir, 'action_screenshots.html'), 'utf8')).toContain('<section class="step done first-success" id="step-1"');
    } finally {
      await browser.close().catch(() => {});
      await pages.close();
    }
  }, 60_000);
});
